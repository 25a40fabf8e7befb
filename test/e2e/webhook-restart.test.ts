import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalRuntime, type LocalRuntimeHandle } from '../support/local-runtime';
import { pollUntil } from './support/poll';
import { startReceiver, type Receiver } from './support/receiver';
import { queueFile } from '../../local/queue-file';

/**
 * The local delivery queue outlives the runtime, as SQS outlives a Lambda: a delivery waiting for
 * its retry when `npm start` stops is retried after the next start on the same state directory,
 * as the attempt it was. The first wait (10 s) is longer than a stop takes, so the retry cannot
 * happen before the restart. Both starts run on this file's database of the run's DynamoDB Local, which outlives
 * them as the runtime's own on <state-dir>/data does (runtime.test.ts proves that one keeps its data): what this
 * file proves is the queue file's.
 */
const ARGS = ['--allow-http-webhooks', '--webhook-backoff-ms', '10000', '--webhook-timeout-ms', '2000'];
const TEST_TIMEOUT_MS = 300_000;

type DeliveryView = {
  id: string;
  status: string;
  attempts: number;
  nextRetryAt: string | null;
  lastError: string | null;
};

let stateDir: string;
let receiver: Receiver;
const runtimes: LocalRuntimeHandle[] = [];

beforeAll(async () => {
  [stateDir, receiver] = await Promise.all([mkdtemp(join(tmpdir(), 'cct-restart-')), startReceiver()]);
});

afterAll(async () => {
  for (const runtime of runtimes) await runtime.stop();
  await receiver?.close();
  await rm(stateDir, { recursive: true, force: true });
}, 60_000);

const start = async () => {
  const runtime = await startLocalRuntime({ stateDir, args: ARGS });
  runtimes.push(runtime);
  return runtime;
};

const deliveriesOf = async (runtime: LocalRuntimeHandle, endpointId: string): Promise<DeliveryView[]> =>
  (await runtime.admin('webhook', 'deliveries', endpointId)).deliveries;

it(
  'retries a delivery that was waiting when the runtime stopped, after the next start, as attempt 2 of the same ' +
    'delivery',
  async () => {
    // Prepare: attempt 1 fails, attempt 2 is queued for 10 s later
    const first = await start();
    const tenantId = first.info.demoTenantId!;
    await first.admin('tenant', 'update', tenantId, '--approve-host', '127.0.0.1');
    const { endpoint } = await first.admin(
      'webhook',
      'add',
      '--tenant',
      tenantId,
      '--url',
      receiver.url('/restart'),
      '--events',
      'call.completed',
    );
    receiver.script('/restart', ['fail'], 'ok');
    await first.admin('simulate', 'call', '--tenant', tenantId, '--direction', 'inbound', '--from', '+14155550401');
    await pollUntil(
      'attempt 1',
      () => receiver.received().filter((r) => r.path === '/restart'),
      (found) => found.length === 1,
      30_000,
    );

    // Act: stop (the running attempt finishes, queues attempt 2 and records attempt 1 first)
    await first.stop();
    const kept = await queueFile(stateDir).load();
    const second = await start();

    // Assess
    expect(kept.messages).toEqual([
      expect.objectContaining({ message: expect.objectContaining({ attempt: 2, cycle: 1 }) }),
    ]);
    const deliveryId = kept.messages[0].message.deliveryId;
    const requests = await pollUntil(
      'attempt 2',
      () => receiver.received().filter((r) => r.path === '/restart'),
      (found) => found.length >= 2,
      60_000,
    );
    const [settled] = await pollUntil(
      'the delivery log to show success',
      () => deliveriesOf(second, endpoint.id),
      ([d]) => d?.status === 'succeeded',
      30_000,
    );
    expect(requests.map((r) => r.reply)).toEqual(['fail', 'ok']);
    expect(requests.map((r) => r.headers['x-service-delivery'])).toEqual([deliveryId, deliveryId]);
    expect(requests[1].body).toBe(requests[0].body);
    expect(settled).toMatchObject({
      id: deliveryId,
      status: 'succeeded',
      attempts: 2,
      nextRetryAt: null,
      lastError: 'HTTP 500: receiver says no',
    });
  },
  TEST_TIMEOUT_MS,
);
