import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { TABLE_NAME } from '../../lambdas/shared/aws';
import { uuidv7 } from '../../lambdas/shared/ids';
import type { Message } from '../../lambdas/contexts/texting/schemas';
import { toItem as messageItem } from '../../lambdas/contexts/texting/messages';
import { createTenant, updateTenant } from '../../lambdas/contexts/tenants/tenants';
import { addWebhookEndpoint } from '../../lambdas/contexts/webhooks/endpoints';
import { verifyDelivery } from '../../clients/typescript/src/webhooks';
import { startWebhookPipeline } from '../../local/webhook-pipeline';
import type { bareClient } from './api-bench';
import { inPool } from './load';
import { distribution, round, type Distribution } from './stats';

/**
 * 4. The webhook pipeline: an inbound text row is written -> DynamoDB Local's stream -> the
 * router's logic -> the delivery queue -> the sender's logic -> a signed POST to a receiver on
 * 127.0.0.1 that verifies every signature with verifyDelivery, as an integrator's would. The
 * pipeline is the local one (local/webhook-pipeline.ts: the very router and sender functions the
 * Lambdas run), in this process, with the runtime stopped so nothing else reads the stream.
 */
export type WebhookScenario = {
  name: string;
  endpoints: number;
  events: number;
  /** Events written per second; 0: all at once (8 writers). */
  paceEventsPerSecond: number;
  expected: number;
  received: number;
  verified: number;
  badSignatures: number;
  /** Row written -> delivery verified at the receiver, per delivery. */
  delayMs: Distribution;
  eventsPerSecond: number;
  deliveriesPerSecond: number;
  /** Deliveries per second between the first and the last receipt: the sender's own pace. */
  senderDeliveriesPerSecond: number;
  /** CPU per verified delivery: this process (router, sender, receiver, writer) and DynamoDB Local's JVM. */
  nodeCpuMsPerDelivery: number;
  dynamodbCpuMsPerDelivery: number | null;
  /** Connections the receiver accepted: fewer than deliveries when the sender reuses them (keep-alive). */
  connections: number;
  timedOut: boolean;
};

type Receipt = { at: number; ok: boolean };

export type Receiver = {
  url: (path: string) => string;
  secrets: Map<string, string>;
  receipts: Map<string, Receipt[]>;
  connections: () => number;
  resetCounters: () => void;
  close: () => Promise<void>;
};

export async function startReceiver(): Promise<Receiver> {
  const secrets = new Map<string, string>();
  const receipts = new Map<string, Receipt[]>();
  let connections = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const secret = secrets.get(req.url ?? '') ?? '';
      const ok = verifyDelivery(req.headers, raw, secret).ok;
      const at = performance.now();
      let messageId = 'unparsable';
      try {
        messageId = (JSON.parse(raw.toString('utf8')) as { data: { message: { id: string } } }).data.message.id;
      } catch {
        // counted as a bad delivery below
      }
      const list = receipts.get(messageId) ?? [];
      list.push({ at, ok });
      receipts.set(messageId, list);
      res.writeHead(ok ? 204 : 401).end();
    });
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    secrets,
    receipts,
    connections: () => connections,
    resetCounters: () => {
      connections = 0;
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/** CPU time of another process (Linux /proc), in ms; null elsewhere. */
export function processCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime in clock ticks (USER_HZ 100)
  } catch {
    return null;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An inbound text row as the carrier callback writes it: the event every scenario delivers. */
export function inboundText(tenantId: string, from: string, label: string, now = new Date()): Message {
  return {
    id: uuidv7(now),
    tenantId,
    direction: 'inbound',
    fromNumber: from,
    toNumber: '+15005550999',
    counterpartNumber: from,
    body: `Bench ${label}`,
    status: 'received',
    messageSid: `SM${label}`,
    agentId: null,
    isRead: false,
    createdAt: now.toISOString(),
  };
}

async function scenario(
  db: ReturnType<typeof bareClient>['client'],
  receiver: Receiver,
  spec: { name: string; endpoints: number; events: number; paceEventsPerSecond: number; timeoutMs: number },
  serial: number,
  dynamodbPid: number | undefined,
): Promise<WebhookScenario> {
  const tenant = await createTenant({ name: `Webhook bench ${spec.name}` });
  await updateTenant(tenant.id, { approveHosts: ['127.0.0.1'] });
  await inPool(spec.endpoints, 8, async (i) => {
    const path = `/hooks/${tenant.id}/${i}`;
    const endpoint = await addWebhookEndpoint(
      tenant.id,
      { url: receiver.url(path), events: ['sms.received'] },
      { allowInsecureTargets: true },
    );
    receiver.secrets.set(path, endpoint.secret);
  });

  const written = new Map<string, number>();
  receiver.resetCounters();
  const cpuBefore = process.cpuUsage();
  const jvmBefore = processCpuMs(dynamodbPid);
  const started = performance.now();
  const write = async (i: number) => {
    const message = inboundText(
      tenant.id,
      `+1303${String(serial).padStart(2, '0')}${String(i).padStart(5, '0')}`,
      `webhookbench${serial}x${i}`,
    );
    await db.send(new PutCommand({ TableName: TABLE_NAME, Item: messageItem(message) }));
    written.set(message.id, performance.now());
  };
  if (spec.paceEventsPerSecond > 0) {
    for (let i = 0; i < spec.events; i += 1) {
      const due = started + (i * 1000) / spec.paceEventsPerSecond;
      await sleep(Math.max(0, due - performance.now()));
      write(i).catch(() => undefined); // a failed write simply never arrives: counted as missing
    }
  } else {
    await inPool(spec.events, 8, write);
  }

  const expected = spec.events * spec.endpoints;
  const countReceived = () =>
    [...written.keys()].reduce((sum, id) => sum + (receiver.receipts.get(id)?.length ?? 0), 0);
  const deadline = performance.now() + spec.timeoutMs;
  while (countReceived() < expected && performance.now() < deadline) await sleep(25);
  const cpu = process.cpuUsage(cpuBefore);
  const jvmAfter = processCpuMs(dynamodbPid);

  const delays: number[] = [];
  let verified = 0;
  let bad = 0;
  let firstReceipt = Number.POSITIVE_INFINITY;
  let lastReceipt = 0;
  for (const [id, writtenAt] of written) {
    for (const receipt of receiver.receipts.get(id) ?? []) {
      if (!receipt.ok) {
        bad += 1;
        continue;
      }
      verified += 1;
      delays.push(receipt.at - writtenAt);
      firstReceipt = Math.min(firstReceipt, receipt.at);
      lastReceipt = Math.max(lastReceipt, receipt.at);
    }
  }
  const spanS = (lastReceipt - started) / 1000;
  const senderSpanS = (lastReceipt - firstReceipt) / 1000;
  return {
    name: spec.name,
    endpoints: spec.endpoints,
    events: spec.events,
    paceEventsPerSecond: spec.paceEventsPerSecond,
    expected,
    received: countReceived(),
    verified,
    badSignatures: bad,
    delayMs: distribution(delays),
    eventsPerSecond: round(spec.events / spanS, 1),
    deliveriesPerSecond: round(verified / spanS, 1),
    senderDeliveriesPerSecond: senderSpanS > 0 ? round(verified / senderSpanS, 1) : Number.NaN,
    nodeCpuMsPerDelivery: round((cpu.user + cpu.system) / 1000 / Math.max(1, verified), 2),
    dynamodbCpuMsPerDelivery:
      jvmBefore === null || jvmAfter === null ? null : round((jvmAfter - jvmBefore) / Math.max(1, verified), 2),
    connections: receiver.connections(),
    timedOut: countReceived() < expected,
  };
}

export type WebhookOptions = { timeoutMs: number; scale: number };

export async function measureWebhooks(
  dynamodbEndpoint: string,
  dynamodbPid: number | undefined,
  db: ReturnType<typeof bareClient>['client'],
  options: WebhookOptions,
  progress: (line: string) => void,
  start: typeof startWebhookPipeline = startWebhookPipeline,
): Promise<WebhookScenario[]> {
  const receiver = await startReceiver();
  const pipeline = await start({
    endpoint: dynamodbEndpoint,
    tableName: TABLE_NAME,
    allowInsecureTargets: true,
  });
  const n = (count: number) => Math.max(1, Math.round(count * options.scale));
  const specs = [
    { name: '1 endpoint, 20 events/s', endpoints: 1, events: n(100), paceEventsPerSecond: 20 },
    { name: '1 endpoint, burst', endpoints: 1, events: n(300), paceEventsPerSecond: 0 },
    { name: '10 endpoints, burst', endpoints: 10, events: n(60), paceEventsPerSecond: 0 },
    { name: '100 endpoints, burst', endpoints: 100, events: n(10), paceEventsPerSecond: 0 },
  ];
  const results: WebhookScenario[] = [];
  try {
    let serial = 0;
    for (const spec of specs) {
      serial += 1;
      const result = await scenario(db, receiver, { ...spec, timeoutMs: options.timeoutMs }, serial, dynamodbPid);
      results.push(result);
      progress(
        `  ${spec.name.padEnd(24)} ${result.verified}/${result.expected} verified, delay p50 ${result.delayMs.p50} ` +
          `ms p99 ${result.delayMs.p99} ms, ` +
          `${result.deliveriesPerSecond} deliveries/s (sender ${result.senderDeliveriesPerSecond}/s), ` +
          `cpu/delivery ${result.nodeCpuMsPerDelivery} ms node + ${result.dynamodbCpuMsPerDelivery ?? '?'} ms ` +
          `DynamoDB Local${result.timedOut ? ' TIMED OUT' : ''}`,
      );
    }
  } finally {
    await pipeline.stop();
    await receiver.close();
  }
  return results;
}
