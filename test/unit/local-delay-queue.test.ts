import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DeliveryMessage } from '../../lambdas/contexts/webhooks/queue';
import { LocalDelayQueue } from '../../local/delay-queue';
import { QUEUE_FILE, queueFile, type KeptMessage } from '../../local/queue-file';

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
const readKept = async (): Promise<KeptMessage[]> => (await queueFile(dir).load()).messages;
const lineCount = async () => (await readFile(join(dir, QUEUE_FILE), 'utf8')).split('\n').filter(Boolean).length;
/** A queue whose handler takes one message at a time (`each`), however it batches them. */
const newQueue = (
  each: (m: DeliveryMessage) => Promise<unknown> = async () => undefined,
  options: { concurrency?: number; batchSize?: number } = {},
) => {
  const queue = new LocalDelayQueue((messages) => Promise.allSettled(messages.map(each)), 1_000, {
    store: queueFile(dir),
    ...options,
  });
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
    expect(kept).toEqual([
      { id: expect.any(Number), message: message(3), visibleAt: expect.any(Number), receiveCount: 1 },
    ]);
    expect(await readKept()).toEqual(kept);
  });

  it('runs at once a message whose time passed while stopped, and forgets it once handled', async () => {
    await writeFile(
      join(dir, QUEUE_FILE),
      `${JSON.stringify({ version: 2 })}\n${JSON.stringify({ keep: { id: 7, message: message(2), visibleAt: 1, receiveCount: 1 } })}\n`,
    );
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

  it('appends a line per change and rewrites the file once it has grown to more than twice what is kept', async () => {
    // Prepare: every message handled at once, so each leaves a line when queued and one when done.
    const queue = newQueue();
    const sends = 1_500;

    // Act: 3,000 changes, one message left waiting.
    for (let i = 0; i < sends; i += 1) await queue.send(message(1 + (i % 7)), 0);
    await queue.send(message(8), 60_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    while (queue.size > 1) await new Promise((resolve) => setTimeout(resolve, 20));
    const lines = await lineCount();
    const kept = await readKept();

    // Assess: the journal was rewritten on the way (3,002 changes, fewer lines), and replays to the one waiting
    // message.
    expect(lines).toBeLessThan(2 * sends);
    expect(kept.map((k) => k.message.attempt)).toEqual([8]);
  }, 30_000);

  it('skips a torn last line (a crash in the middle of an append) and resumes the rest', async () => {
    const keep = (id: number, attempt: number) =>
      JSON.stringify({ keep: { id, message: message(attempt), visibleAt: Date.now() + 60_000, receiveCount: 1 } });
    await writeFile(
      join(dir, QUEUE_FILE),
      `${JSON.stringify({ version: 2 })}\n${keep(1, 2)}\n${keep(2, 3)}\n${JSON.stringify({ done: 1 })}\n{"keep":{"id":3,"mess`,
    );

    const { messages, skipped } = await queueFile(dir).load();

    expect(messages.map((m) => [m.id, m.message.attempt])).toEqual([[2, 3]]);
    expect(skipped).toBe(1);
  });

  it('hands visible messages over in batches, at most its concurrency of batches at once, the rest as slots free up', async () => {
    // Prepare: a handler that records each batch and holds it a moment.
    let running = 0;
    let most = 0;
    const batches: number[] = [];
    const queue = new LocalDelayQueue(
      async (messages) => {
        running += 1;
        most = Math.max(most, running);
        batches.push(messages.length);
        await new Promise((resolve) => setTimeout(resolve, 20));
        running -= 1;
        return messages.map(() => ({ status: 'fulfilled', value: undefined }));
      },
      1_000,
      { store: queueFile(dir), concurrency: 2, batchSize: 4 },
    );
    queues.push(queue);

    // Act: 20 messages visible at once.
    await Promise.all(Array.from({ length: 20 }, (_, i) => queue.send(message(1 + (i % 7)), 0)));
    while (batches.reduce((a, b) => a + b, 0) < 20) await new Promise((resolve) => setTimeout(resolve, 10));

    // Assess
    expect(most).toBe(2);
    expect(Math.max(...batches)).toBe(4);
    expect(batches.length).toBeLessThan(20);
    expect(await readKept()).toEqual([]);
  });

  it('brings back only the messages of a batch whose processing failed', async () => {
    // Prepare: attempt 2 fails once.
    const seen: number[] = [];
    let failedOnce = false;
    const queue = new LocalDelayQueue(
      async (messages) =>
        messages.map((m) => {
          seen.push(m.attempt);
          if (m.attempt === 2 && !failedOnce) {
            failedOnce = true;
            return { status: 'rejected', reason: new Error('table unavailable') };
          }
          return { status: 'fulfilled', value: undefined };
        }),
      50,
      { store: queueFile(dir) },
    );
    queues.push(queue);

    // Act
    await Promise.all([queue.send(message(1), 0), queue.send(message(2), 0), queue.send(message(3), 0)]);
    while (seen.length < 4) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 100));

    // Assess
    expect(seen.sort()).toEqual([1, 2, 2, 3]);
    expect(await readKept()).toEqual([]);
  });

  it('sets an unreadable file aside and starts empty', async () => {
    await writeFile(join(dir, QUEUE_FILE), '{ not json');

    const resumed = await newQueue().resume();

    expect(resumed).toBe(0);
    expect((await readdir(dir)).some((name) => name.startsWith(`${QUEUE_FILE}.unreadable-`))).toBe(true);
  });
});
