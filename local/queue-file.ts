import { appendFile, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod/mini';
import { DeliveryMessageSchema } from '../lambdas/contexts/webhooks/queue';

/**
 * `<state-dir>/webhook-queue.jsonl`: the local delivery queue's messages, so a restart of the
 * runtime resumes what SQS would have kept in AWS. It sits next to DynamoDB Local's data (the
 * delivery rows it belongs to) and is written only by the one runtime that owns the state
 * directory. `--in-memory` keeps no file: nothing of the table survives either.
 *
 * A journal, not a snapshot: each message queued and each message done appends one line, so
 * keeping a message costs the same with ten waiting as with ten thousand. (Rewriting the whole
 * queue for every change made each send wait for a file of every waiting message: with a backlog
 * of thousands the router spent its time writing it, and fell further behind.) The journal is
 * rewritten whole, to a temporary file renamed over it, when it has grown to a few times what is
 * waiting, and when the queue stops. A crash in the middle of an append leaves a torn last line,
 * which the next start skips and reports.
 */
export const QUEUE_FILE = 'webhook-queue.jsonl';

const QueuedMessageSchema = z.object({
  message: DeliveryMessageSchema,
  /** Epoch ms from which the message may be received: its delay, or its visibility timeout after a failure. */
  visibleAt: z.int(),
  /** How often it has been received and failed before (SQS's ApproximateReceiveCount - 1). */
  receiveCount: z.int().check(z.gte(1)),
});

export type QueuedMessage = z.infer<typeof QueuedMessageSchema>;

/** A message as the journal keeps it: `id` names it in the lines that change or end it. */
export type KeptMessage = QueuedMessage & { id: number };

const KeptMessageSchema = z.extend(QueuedMessageSchema, { id: z.int().check(z.gte(0)) });

/** The first line: which format follows. */
const HEADER = JSON.stringify({ version: 2 });
const HeaderSchema = z.object({ version: z.literal(2) });

/** One change: a message kept (queued, or queued again after a failure), or a message done. */
const JournalLineSchema = z.union([z.object({ keep: z.unknown() }), z.object({ done: z.int() })]);

/** Where the queue's messages are kept between runs. */
export interface QueueStore {
  /** The messages the previous run left (in the order they were kept), and how many lines it could not read back. */
  load(): Promise<{ messages: KeptMessage[]; skipped: number }>;
  /** Appends changes; resolves once they are on disk. */
  append(lines: readonly string[]): Promise<void>;
  /** Replaces everything kept with these messages; resolves once they are on disk. */
  rewrite(messages: readonly KeptMessage[]): Promise<void>;
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
      const [header, ...lines] = text.split('\n');
      if (!readable(header, HeaderSchema)) {
        // Edited by hand or from another version: kept for a look, not read.
        await rename(path, `${path}.unreadable-${Date.now()}`);
        return { messages: [], skipped: 1 };
      }
      return replay(lines.filter((line) => line.trim() !== ''));
    },
    async append(lines) {
      // 0600: the messages hold event bodies (texts, numbers), as the table's files do.
      if (lines.length > 0) await appendFile(path, lines.map((line) => `${line}\n`).join(''), { mode: 0o600 });
    },
    async rewrite(messages) {
      const lines = [HEADER, ...messages.map(keepLine)];
      await writeFile(`${path}.tmp`, lines.map((line) => `${line}\n`).join(''), { mode: 0o600 });
      await rename(`${path}.tmp`, path);
    },
  };
}

function readable<T>(line: string, schema: z.ZodMiniType<T>): T | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The journal's lines applied in order: the messages still kept. */
function replay(lines: string[]): { messages: KeptMessage[]; skipped: number } {
  const kept = new Map<number, KeptMessage>();
  let skipped = 0;
  for (const line of lines) {
    const change = readable(line, JournalLineSchema);
    const keep = change && 'keep' in change ? KeptMessageSchema.safeParse(change.keep) : undefined;
    if (keep?.success) kept.set(keep.data.id, keep.data);
    else if (change && 'done' in change) kept.delete(change.done);
    else skipped += 1;
  }
  return { messages: [...kept.values()], skipped };
}

const keepLine = (message: KeptMessage) => JSON.stringify({ keep: message });

/** The journal is rewritten once it holds this many lines more than twice what is kept. */
const REWRITE_SLACK_LINES = 2_000;

/**
 * Writes a queue's changes to its store in order, one append per burst of changes: a change made
 * while an append runs waits for the next one, so `keep` and `done` resolve once a write holding
 * that change is on disk. `snapshot` gives what is kept now, for the rewrites.
 */
export class QueueJournal {
  private pending: string[] = [];
  private nextWrite: Promise<void> | undefined;
  private writes: Promise<void> = Promise.resolve();
  private linesSinceRewrite = 0;

  constructor(
    private readonly store: QueueStore,
    private readonly snapshot: () => KeptMessage[],
  ) {}

  keep(message: KeptMessage): Promise<void> {
    return this.write(keepLine(message));
  }

  done(id: number): Promise<void> {
    return this.write(JSON.stringify({ done: id }));
  }

  /** Writes what is kept now as the whole journal (at start and at stop). */
  rewrite(): Promise<void> {
    const rewrite = this.writes.then(async () => {
      this.pending = []; // every change made so far is in the snapshot
      await this.store.rewrite(this.snapshot());
      this.linesSinceRewrite = 0;
    });
    this.writes = rewrite.catch(() => undefined);
    return rewrite;
  }

  private write(line: string): Promise<void> {
    this.pending.push(line);
    this.nextWrite ??= this.schedule();
    return this.nextWrite;
  }

  private schedule(): Promise<void> {
    const write = this.writes.then(async () => {
      this.nextWrite = undefined; // from here on, a change needs the next write
      const lines = this.pending.splice(0);
      await this.store.append(lines);
      this.linesSinceRewrite += lines.length;
      const kept = this.snapshot();
      if (this.linesSinceRewrite > 2 * kept.length + REWRITE_SLACK_LINES) {
        await this.store.rewrite(kept);
        this.linesSinceRewrite = 0;
      }
    });
    this.writes = write.catch(() => undefined);
    return write;
  }
}
