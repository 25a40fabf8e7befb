import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod/mini';
import { DeliveryMessageSchema } from '../lambdas/contexts/webhooks/queue';

/**
 * `<state-dir>/webhook-queue.json`: the local delivery queue's messages, so a restart of the
 * runtime resumes what SQS would have kept in AWS. It sits next to DynamoDB Local's data (the
 * delivery rows it belongs to), is written whole to a temporary file and renamed (a reader or a
 * crash never sees half a file), and only by the one runtime that owns the state directory.
 * `--in-memory` keeps no file: nothing of the table survives either.
 */
export const QUEUE_FILE = 'webhook-queue.json';

const QueuedMessageSchema = z.object({
  message: DeliveryMessageSchema,
  /** Epoch ms from which the message may be received: its delay, or its visibility timeout after a failure. */
  visibleAt: z.int(),
  /** How often it has been received and failed before (SQS's ApproximateReceiveCount - 1). */
  receiveCount: z.int().check(z.gte(1)),
});

export type QueuedMessage = z.infer<typeof QueuedMessageSchema>;

const QueueFileSchema = z.object({ version: z.literal(1), messages: z.array(z.unknown()) });

/** Where the queue's messages are kept between runs. */
export interface QueueStore {
  /** The messages the previous run left, and a note on anything it could not read back. */
  load(): Promise<{ messages: QueuedMessage[]; skipped: number }>;
  /** Replaces what is kept with these messages; resolves once they are on disk. */
  save(messages: QueuedMessage[]): Promise<void>;
}

export function queueFile(stateDir: string): QueueStore {
  const path = join(stateDir, QUEUE_FILE);
  return {
    async load() {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { messages: [], skipped: 0 };
        throw err;
      }
      let raw: unknown[];
      try {
        raw = QueueFileSchema.parse(JSON.parse(text)).messages;
      } catch {
        // Never half-written (rename); edited by hand or from another version. Kept for a look, not read.
        await rename(path, `${path}.unreadable-${Date.now()}`);
        return { messages: [], skipped: 1 };
      }
      const parsed = raw.map((entry) => QueuedMessageSchema.safeParse(entry));
      const messages = parsed.flatMap((result) => (result.success ? [result.data] : []));
      return { messages, skipped: parsed.length - messages.length };
    },
    async save(messages) {
      // 0600: the messages hold event bodies (texts, numbers), as the table's files do.
      await writeFile(`${path}.tmp`, JSON.stringify({ version: 1, messages }), { mode: 0o600 });
      await rename(`${path}.tmp`, path);
    },
  };
}

/**
 * Serialises saves and folds those that pile up into one: a save started after a change holds
 * that change, so `save()` resolves once a snapshot taken after the call is on disk.
 */
export function coalescingSaver(store: QueueStore, snapshot: () => QueuedMessage[]): () => Promise<void> {
  let previous: Promise<void> = Promise.resolve();
  let waiting: Promise<void> | undefined;
  return () => {
    if (waiting) return waiting;
    const next = previous.then(() => {
      waiting = undefined; // from here on, a change needs the next save
      return store.save(snapshot());
    });
    waiting = next;
    previous = next.catch(() => undefined);
    return next;
  };
}
