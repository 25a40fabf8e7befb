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
 * the JVM, the runtime and the receiver). Unless a rate is given, a short burst first measures the
 * pace the pipeline keeps here; the measured run then offers 90 % of it with the engine's budgets
 * scaled by rate / 500, so each key has the same share of its budget as at 500 a second on
 * DynamoDB: a key that would be throttled at 500 a second on AWS is throttled here too.
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
  /** Deliveries a second between the first and the last: the pipeline's own pace. */
  pipelinePerSecond: number;
  calibration?: EventsCalibration;
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
  /** Some events were not delivered within the drain time. */
  timedOut: boolean;
};

export type EventsOptions = {
  /** Events per second to offer; undefined: 90 % of the pace a calibration burst measures, at most `standsFor`. */
  rate: number | undefined;
  seconds: number;
  /** What the rate stands for: the engine's budgets are scaled by rate / standsFor (500). */
  standsFor: number;
  /** How long to wait for the last deliveries after the load. */
  drainMs: number;
};

/**
 * The calibration burst: its length, and the pace the pipeline kept (deliveries a second between its first and last).
 */
export type EventsCalibration = { seconds: number; offeredPerSecond: number; pipelinePerSecond: number };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The hottest entry of a meter map by `unitsOf`, per delivery. */
function hottest(
  stats: LimitsStats,
  deliveries: number,
  keep: (key: string) => boolean,
  unitsOf: (m: { readUnits: number; writeUnits: number }) => number,
) {
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
  if (options.rate !== undefined)
    return runEvents(dynamodbEndpoint, dynamodbPid, db, { ...options, rate: options.rate }, progress);
  const burst = await runEvents(
    dynamodbEndpoint,
    dynamodbPid,
    db,
    { ...options, rate: options.standsFor, seconds: 3 },
    progress,
  );
  const rate = Math.max(1, Math.min(options.standsFor, Math.floor(0.9 * burst.pipelinePerSecond)));
  progress(
    `  calibration: the pipeline kept ${burst.pipelinePerSecond} deliveries a second; measuring at ${rate} a second, ` +
      `budgets x ${round(rate / options.standsFor, 3)}`,
  );
  const measured = await runEvents(dynamodbEndpoint, dynamodbPid, db, { ...options, rate }, progress);
  return {
    ...measured,
    calibration: { seconds: 3, offeredPerSecond: burst.offeredPerSecond, pipelinePerSecond: burst.pipelinePerSecond },
  };
}

async function runEvents(
  dynamodbEndpoint: string,
  dynamodbPid: number | undefined,
  db: DynamoDBDocumentClient,
  options: EventsOptions & { rate: number },
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
  const runtime = await startRuntimeOnEngine(dynamodbEndpoint, { budgets }, [
    '--allow-http-webhooks',
    '--webhook-backoff-ms',
    '1000',
  ]);
  try {
    const tenant = await createTenant({ name: 'Events bench' });
    await updateTenant(tenant.id, { approveHosts: ['127.0.0.1'] });
    const path = `/events/${tenant.id}`;
    const endpoint = await addWebhookEndpoint(
      tenant.id,
      { url: receiver.url(path), events: ['sms.received'] },
      { allowInsecureTargets: true },
    );
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
    const writes = new Set<Promise<unknown>>();
    const write = async (request: Promise<unknown>) => {
      writes.add(request);
      // At most 8 batches in flight: a writer that falls behind offers less, and says so, rather than queue without
      // end.
      while (writes.size >= 8) await Promise.race(writes);
    };
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
        const request: Promise<unknown> = db
          .send(
            new BatchWriteCommand({ RequestItems: { [TABLE_NAME]: items.map((Item) => ({ PutRequest: { Item } })) } }),
          )
          .finally(() => writes.delete(request));
        await write(request);
      }
    }
    await Promise.all(writes);
    const offeredS = (performance.now() - started) / 1000;
    progress(
      `  ${total} events written in ${round(offeredS, 1)} s (${round(total / offeredS)} a second); waiting for their ` +
        `deliveries`,
    );

    const received = () => [...written.keys()].filter((id) => receiver.receipts.has(id)).length;
    const deadline = performance.now() + options.drainMs;
    while (received() < total && performance.now() < deadline) await sleep(100);
    await sleep(500); // duplicates would arrive about now
    const cpuAfter = processCpuMs(runtime.pid);
    const jvmAfter = processCpuMs(dynamodbPid);
    const stats = await runtime.limits.stats();

    const delays: number[] = [];
    let delivered = 0;
    let duplicates = 0;
    let bad = 0;
    let lastReceipt = started;
    let firstReceipt = Number.POSITIVE_INFINITY;
    for (const [id, at] of written) {
      const receipts = receiver.receipts.get(id) ?? [];
      bad += receipts.filter((r) => !r.ok).length;
      const ok = receipts.filter((r) => r.ok);
      if (ok.length === 0) continue;
      delivered += 1;
      duplicates += ok.length - 1;
      delays.push(ok[0].at - at);
      firstReceipt = Math.min(firstReceipt, ok[0].at);
      lastReceipt = Math.max(lastReceipt, ...ok.map((r) => r.at));
    }
    const units = Object.values(stats.operations).reduce(
      (sum, o) => ({ readUnits: sum.readUnits + o.readUnits, writeUnits: sum.writeUnits + o.writeUnits }),
      { readUnits: 0, writeUnits: 0 },
    );
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
      pipelinePerSecond: lastReceipt > firstReceipt ? round(delivered / ((lastReceipt - firstReceipt) / 1000), 1) : 0,
      hottestTableWrite: hottest(
        stats,
        delivered,
        (key) => !isIndexKey(key),
        (m) => m.writeUnits,
      ),
      hottestIndexWrite: hottest(stats, delivered, isIndexKey, (m) => m.writeUnits),
      hottestRead: hottest(
        stats,
        delivered,
        () => true,
        (m) => m.readUnits,
      ),
      unitsPerDelivery: {
        readUnits: round(units.readUnits / Math.max(1, delivered), 2),
        writeUnits: round(units.writeUnits / Math.max(1, delivered), 2),
      },
      throttles: stats.throttles.total,
      throttlesByReason: stats.throttles.byReason,
      runtimeCpuMsPerDelivery: per(cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore),
      dynamodbCpuMsPerDelivery: per(jvmBefore === null || jvmAfter === null ? null : jvmAfter - jvmBefore),
      timedOut: delivered < total,
    };
  } finally {
    await runtime.stop();
    await receiver.close();
  }
}

/**
 * 10b. The router's and the sender's own cost, each alone, in this process on DynamoDB Local (no
 * engine): what capacity.md turns into events per second per stream shard and per region. The
 * router routes `events` inbound texts in batches of 100 as the event source mapping hands them
 * over (16 records at once, one endpoint read per batch), into a queue that only collects; the
 * sender then attempts those deliveries in batches of 10, 20 batches at once (the event source's
 * settings), to a receiver in another process that answers 204 at once. CPU is this process's,
 * per event; wall time per batch is what a Lambda invocation would take on this machine.
 */
export type PipelinePartsCost = {
  events: number;
  router: { cpuMsPerEvent: number; msPerBatchOf100: number; tableCallsPerEvent: number };
  sender: {
    cpuMsPerDelivery: number;
    msPerBatchOf10: number;
    tableCallsPerDelivery: number;
    outcomes: Record<string, number>;
  };
};

/** A receiver in a child process (its CPU is not this process's): answers 204 to everything. */
async function childReceiver(): Promise<{ url: string; stop: () => void }> {
  const { spawn } = await import('node:child_process');
  const child = spawn(
    process.execPath,
    [
      '-e',
      "require('http').createServer((q,s)=>{q.resume();q.on('end',()=>s.writeHead(204).end())}).listen(0,'127.0.0.1',function(){console.log(this.address().port)})",
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise<string>((done) =>
    child.stdout!.once('data', (chunk: Buffer) => done(chunk.toString().trim())),
  );
  return { url: `http://127.0.0.1:${port}/cost`, stop: () => child.kill() };
}

export async function measurePipelineParts(events: number): Promise<PipelinePartsCost> {
  const [{ dynamo }, { endpointCache, routeChange }, { processDeliveryMessages }, { inPool }] = await Promise.all([
    import('../../lambdas/shared/aws'),
    import('../../lambdas/contexts/webhooks/route-change'),
    import('../../lambdas/contexts/webhooks/deliver'),
    import('./load'),
  ]);
  const receiver = await childReceiver();
  let tableCalls = 0;
  dynamo.middlewareStack.add((next) => async (args) => ((tableCalls += 1), next(args)), {
    step: 'initialize',
    name: 'partsCounter',
  });
  try {
    const tenant = await createTenant({ name: 'Pipeline parts' });
    await updateTenant(tenant.id, { approveHosts: ['127.0.0.1'] });
    await addWebhookEndpoint(
      tenant.id,
      { url: receiver.url, events: ['sms.received'] },
      { allowInsecureTargets: true },
    );
    const now = Date.now();
    const changes = Array.from({ length: events }, (_, i) => ({
      eventId: `parts-${now}-${i}`,
      eventName: 'INSERT' as const,
      approximateCreationMs: now,
      newImage: messageItem(
        inboundText(tenant.id, `+1730${String(i).padStart(7, '0')}`, `parts${i}`, new Date(now + i)),
      ),
    }));
    const queued: import('../../lambdas/contexts/webhooks/queue').DeliveryMessage[] = [];
    const queue = { send: async (message: (typeof queued)[number]) => void queued.push(message) };

    tableCalls = 0;
    let cpu = process.cpuUsage();
    let t0 = performance.now();
    for (let start = 0; start < changes.length; start += 100) {
      const endpoints = endpointCache();
      await inPool(Math.min(100, changes.length - start), 16, (i) =>
        routeChange(changes[start + i], { queue, endpoints }),
      );
    }
    let used = process.cpuUsage(cpu);
    const router = {
      cpuMsPerEvent: round((used.user + used.system) / 1000 / events, 2),
      msPerBatchOf100: round((performance.now() - t0) / Math.ceil(events / 100)),
      tableCallsPerEvent: round(tableCalls / events, 2),
    };

    const outcomes: Record<string, number> = {};
    const batches = Array.from({ length: Math.ceil(queued.length / 10) }, (_, b) => queued.slice(b * 10, b * 10 + 10));
    const refusing = {
      send: async () => {
        throw new Error('a retry was queued');
      },
    };
    tableCalls = 0;
    cpu = process.cpuUsage();
    t0 = performance.now();
    await inPool(batches.length, 20, async (b) => {
      for (const settled of await processDeliveryMessages(batches[b], {
        queue: refusing,
        allowInsecureTargets: true,
      })) {
        const outcome = settled.status === 'fulfilled' ? settled.value : 'error';
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      }
    });
    used = process.cpuUsage(cpu);
    const sender = {
      cpuMsPerDelivery: round((used.user + used.system) / 1000 / queued.length, 2),
      msPerBatchOf10: round(((performance.now() - t0) * Math.min(20, batches.length)) / batches.length),
      tableCallsPerDelivery: round(tableCalls / queued.length, 2),
      outcomes,
    };
    return { events, router, sender };
  } finally {
    dynamo.middlewareStack.remove('partsCounter');
    receiver.stop();
  }
}
