import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TABLE_NAME } from '../../lambdas/shared/aws';
import { CHANGED_AT } from '../../lambdas/shared/table/row-types';
import { createTenant, updateTenant } from '../../lambdas/contexts/tenants/tenants';
import { toItem as messageItem } from '../../lambdas/contexts/texting/messages';
import { addWebhookEndpoint } from '../../lambdas/contexts/webhooks/endpoints';
import { DEFAULT_BUDGETS } from '../../local/dynamodb-limits/limits-proxy';
import type { LimitsStats } from '../../local/dynamodb-limits/meters';
import { startRuntimeOnEngine } from './limits-meters';
import { distribution, round, type Distribution } from './stats';
import { inboundText, processCpuMs, startReceiver } from './webhook-bench';

/**
 * 10. Events: one webhook endpoint receiving `rate` events a second for `seconds`, through the
 * local runtime's pipeline (stream -> router -> queue -> sender, the Lambdas' own logic) with every
 * table call of the pipeline on the limits-faithful engine (docs/local-engine.md). The events are
 * inbound texts written straight into DynamoDB Local, as the carrier callback writes them, so the
 * engine's meters hold the pipeline's units alone. The receiver verifies every signature.
 *
 * Reported: what the hottest partition-key values take per delivery (write units on the table's
 * and the indexes' keys, read units), throttles, and event -> first attempt at the receiver.
 *
 * This machine may not sustain 500 deliveries a second through DynamoDB Local (2 shared cores run
 * the JVM, the runtime and the receiver); the offered rate is then lowered and the engine's
 * budgets scaled by the same factor, so each key has the same share of its budget as at 500 a second
 * on DynamoDB: a key that would be throttled at 500 a second on AWS is throttled here too.
 */
export type EventsScenario = {
  name: string;
  /** Events offered per second, and what that stands for on DynamoDB's budgets. */
  offeredPerSecond: number;
  standsForPerSecond: number;
  budgetScale: number;
  events: number;
  delivered: number;
  duplicates: number;
  badSignatures: number;
  /** Event written -> first attempt verified at the receiver. */
  firstAttemptMs: Distribution;
  deliveriesPerSecond: number;
  /** Per delivery, on the key that took the most: the table's, any index's, and the reads. */
  hottestTableWrite: { key: string; unitsPerDelivery: number };
  hottestIndexWrite: { key: string; unitsPerDelivery: number };
  hottestRead: { key: string; unitsPerDelivery: number };
  /** Every unit the pipeline cost per delivery (table and indexes). */
  unitsPerDelivery: { readUnits: number; writeUnits: number };
  throttles: number;
  throttlesByReason: Record<string, number>;
  /** CPU per delivery of the runtime process (router, queue, sender) and of DynamoDB Local's JVM. */
  runtimeCpuMsPerDelivery: number | null;
  dynamodbCpuMsPerDelivery: number | null;
  /** Router batches and the events per batch, from the runtime's pipeline. */
  timedOut: boolean;
};

export type EventsOptions = {
  /** Events per second to offer (default 500). */
  rate: number;
  seconds: number;
  /** What the rate stands for: the engine's budgets are scaled by rate / standsFor (default 500). */
  standsFor: number;
  /** How long to wait for the last deliveries after the load. */
  drainMs: number;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The hottest entry of a meter map by `unitsOf`, per delivery. */
function hottest(stats: LimitsStats, deliveries: number, keep: (key: string) => boolean, unitsOf: (m: { readUnits: number; writeUnits: number }) => number) {
  let best: [string, number] = ['-', 0];
  for (const [key, meter] of Object.entries(stats.partitions)) {
    if (keep(key) && unitsOf(meter) > best[1]) best = [key, unitsOf(meter)];
  }
  return { key: best[0], unitsPerDelivery: round(best[1] / Math.max(1, deliveries), 3) };
}

const isIndexKey = (key: string) => key.split(' ')[0].includes('/');

export async function measureEvents(
  dynamodbEndpoint: string,
  dynamodbPid: number | undefined,
  db: DynamoDBDocumentClient,
  options: EventsOptions,
  progress: (line: string) => void,
): Promise<EventsScenario> {
  const scale = Math.min(1, options.rate / options.standsFor);
  const budgets = {
    partitionWriteUnits: DEFAULT_BUDGETS.partitionWriteUnits * scale,
    itemWriteUnits: DEFAULT_BUDGETS.itemWriteUnits * scale,
    indexPartitionWriteUnits: DEFAULT_BUDGETS.indexPartitionWriteUnits * scale,
    partitionReadUnits: DEFAULT_BUDGETS.partitionReadUnits * scale,
    itemReadUnits: DEFAULT_BUDGETS.itemReadUnits * scale,
  };
  const receiver = await startReceiver();
  const runtime = await startRuntimeOnEngine(dynamodbEndpoint, { budgets }, ['--allow-http-webhooks', '--webhook-backoff-ms', '1000']);
  try {
    const tenant = await createTenant({ name: 'Events bench' });
    await updateTenant(tenant.id, { approveHosts: ['127.0.0.1'] });
    const path = `/events/${tenant.id}`;
    const endpoint = await addWebhookEndpoint(tenant.id, { url: receiver.url(path), events: ['sms.received'] }, { allowInsecureTargets: true });
    receiver.secrets.set(path, endpoint.secret);
    await sleep(500); // the runtime's router sees the endpoint's row before the first event
    await runtime.limits.reset();

    const written = new Map<string, number>();
    const total = Math.round(options.rate * options.seconds);
    const tickMs = 50;
    const perTick = options.rate * (tickMs / 1000);
    const cpuBefore = processCpuMs(runtime.pid);
    const jvmBefore = processCpuMs(dynamodbPid);
    const started = performance.now();
    const writes: Promise<unknown>[] = [];
    for (let tick = 0, sent = 0; sent < total; tick += 1) {
      await sleep(Math.max(0, started + tick * tickMs - performance.now()));
      const due = Math.min(total, Math.round((tick + 1) * perTick));
      const batch = [];
      for (; sent < due; sent += 1) {
        const now = new Date();
        const text = inboundText(tenant.id, `+1720${String(sent).padStart(7, '0')}`, `events${sent}`, now);
        written.set(text.id, performance.now());
        batch.push({ ...messageItem(text), [CHANGED_AT]: now.getTime() });
      }
      for (let i = 0; i < batch.length; i += 25) {
        const items = batch.slice(i, i + 25);
        writes.push(db.send(new BatchWriteCommand({ RequestItems: { [TABLE_NAME]: items.map((Item) => ({ PutRequest: { Item } })) } })));
      }
    }
    await Promise.all(writes);
    const offeredS = (performance.now() - started) / 1000;
    progress(`  ${total} events written in ${round(offeredS, 1)} s (${round(total / offeredS)} a second); waiting for their deliveries`);

    const received = () => [...written.keys()].filter((id) => receiver.receipts.has(id)).length;
    const deadline = performance.now() + options.drainMs;
    while (received() < total && performance.now() < deadline) await sleep(100);
    await sleep(500); // duplicates would arrive about now
    const spanS = (performance.now() - started) / 1000;
    const cpuAfter = processCpuMs(runtime.pid);
    const jvmAfter = processCpuMs(dynamodbPid);
    const stats = await runtime.limits.stats();

    const delays: number[] = [];
    let delivered = 0;
    let duplicates = 0;
    let bad = 0;
    let lastReceipt = started;
    for (const [id, at] of written) {
      const receipts = receiver.receipts.get(id) ?? [];
      bad += receipts.filter((r) => !r.ok).length;
      const ok = receipts.filter((r) => r.ok);
      if (ok.length === 0) continue;
      delivered += 1;
      duplicates += ok.length - 1;
      delays.push(ok[0].at - at);
      lastReceipt = Math.max(lastReceipt, ...ok.map((r) => r.at));
    }
    const units = Object.values(stats.operations).reduce((sum, o) => ({ readUnits: sum.readUnits + o.readUnits, writeUnits: sum.writeUnits + o.writeUnits }), { readUnits: 0, writeUnits: 0 });
    const per = (value: number | null) => (value === null ? null : round(value / Math.max(1, delivered), 2));
    return {
      name: `1 endpoint, ${options.standsFor} events/s`,
      offeredPerSecond: round(total / offeredS, 1),
      standsForPerSecond: options.standsFor,
      budgetScale: round(scale, 3),
      events: total,
      delivered,
      duplicates,
      badSignatures: bad,
      firstAttemptMs: distribution(delays),
      deliveriesPerSecond: round(delivered / ((lastReceipt - started) / 1000), 1),
      hottestTableWrite: hottest(stats, delivered, (key) => !isIndexKey(key), (m) => m.writeUnits),
      hottestIndexWrite: hottest(stats, delivered, isIndexKey, (m) => m.writeUnits),
      hottestRead: hottest(stats, delivered, () => true, (m) => m.readUnits),
      unitsPerDelivery: { readUnits: round(units.readUnits / Math.max(1, delivered), 2), writeUnits: round(units.writeUnits / Math.max(1, delivered), 2) },
      throttles: stats.throttles.total,
      throttlesByReason: stats.throttles.byReason,
      runtimeCpuMsPerDelivery: per(cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore),
      dynamodbCpuMsPerDelivery: per(jvmBefore === null || jvmAfter === null ? null : jvmAfter - jvmBefore),
      timedOut: delivered < total && spanS * 1000 >= options.drainMs,
    };
  } finally {
    await runtime.stop();
    await receiver.close();
  }
}
