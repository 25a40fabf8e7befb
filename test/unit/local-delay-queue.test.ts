import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DeliveryMessage } from '../../lambdas/contexts/webhooks/queue';
import { LocalDelayQueue } from '../../local/delay-queue';
import { QUEUE_FILE, queueFile, type QueuedMessage } from '../../local/queue-file';

/** The local delivery queue with its state file: what a restart of the runtime keeps and resumes. */
const message = (attempt: number): DeliveryMessage => ({
  deliveryId: `d-${attempt}`,
  tenantId: 't',
  endpointId: 'e',
  cycle: 1,
  attempt,
  body: '{"id":"evt"}',
});

let dir: string;
const queues: LocalDelayQueue[] = [];
const readKept = async (): Promise<QueuedMessage[]> => JSON.parse(await readFile(join(dir, QUEUE_FILE), 'utf8')).messages;
const newQueue = (handle: (m: DeliveryMessage) => Promise<unknown> = async () => undefined) => {
  const queue = new LocalDelayQueue(handle, 1_000, queueFile(dir));
  queues.push(queue);
  return queue;
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cct-queue-'));
});

afterEach(async () => {
  await Promise.all(queues.splice(0).map((queue) => queue.stop()));
  await rm(dir, { recursive: true, force: true });
});

describe('the local delay queue with a state file', () => {
  it('keeps a message waiting for its time when stopped, and the next queue takes it up with its attempt and time', async () => {
    // Prepare
    const first = newQueue();
    await first.send(message(3), 60_000);
    await first.stop();
    const kept = await readKept();

    // Act
    const second = newQueue();
    const resumed = await second.resume();
    await second.stop();

    // Assess
    expect(resumed).toBe(1);
    expect(kept).toEqual([{ message: message(3), visibleAt: expect.any(Number), receiveCount: 1 }]);
    expect(await readKept()).toEqual(kept);
  });

  it('runs at once a message whose time passed while stopped, and forgets it once handled', async () => {
    await writeFile(join(dir, QUEUE_FILE), JSON.stringify({ version: 1, messages: [{ message: message(2), visibleAt: 1, receiveCount: 1 }] }));
    let handled!: (m: DeliveryMessage) => void;
    const received = new Promise<DeliveryMessage>((resolve) => (handled = resolve));
    const queue = newQueue(async (m) => handled(m));

    await queue.resume();
    const got = await received;
    await queue.stop();

    expect(got).toEqual(message(2));
    expect(await readKept()).toEqual([]);
  });

  it('keeps what a message being handled queues while the queue stops', async () => {
    let release!: () => void;
    let entered!: () => void;
    const running = new Promise<void>((resolve) => (release = resolve));
    const handling = new Promise<void>((resolve) => (entered = resolve));
    const queue: LocalDelayQueue = newQueue(async (m) => {
      entered();
      await running;
      if (m.attempt === 1) await queue.send({ ...m, attempt: 2 }, 60_000);
    });
    await queue.send(message(1), 0);
    await handling;

    const stopping = queue.stop();
    release();
    await stopping;

    expect((await readKept()).map((k) => k.message.attempt)).toEqual([2]);
  });

  it('sets an unreadable file aside and starts empty', async () => {
    await writeFile(join(dir, QUEUE_FILE), '{ not json');

    const resumed = await newQueue().resume();

    expect(resumed).toBe(0);
    expect((await readdir(dir)).some((name) => name.startsWith(`${QUEUE_FILE}.unreadable-`))).toBe(true);
  });
});
