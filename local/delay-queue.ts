import { logger } from '../lambdas/shared/aws';
import { MAX_QUEUE_DELAY_MS } from '../lambdas/contexts/webhooks/backoff';
import { DeliveryMessageSchema, type DeliveryMessage, type DeliveryQueue } from '../lambdas/contexts/webhooks/queue';
import { QueueJournal, type KeptMessage, type QueueStore } from './queue-file';

/** Like SQS's redrive: a message whose processing throws comes back a few times, then is dropped. */
const LOCAL_MAX_RECEIVES = 4;

/**
 * Batches handled at once at most, as the sender's event source mapping caps its concurrency in
 * AWS (lib/constructs/webhook-pipeline.ts): a backlog becoming visible all at once (a restart, a
 * receiver back up) is worked through at this pace instead of opening thousands of attempts together.
 */
export const LOCAL_SENDER_CONCURRENCY = 8;
/** Messages handed over together at most, as SQS hands the sender Lambda up to 10. */
export const LOCAL_SENDER_BATCH = 10;

type Entry = KeptMessage & { timer?: NodeJS.Timeout };

/** Handles a batch of messages: the outcome of each, in order (a rejected one comes back later). */
export type BatchHandler = (messages: DeliveryMessage[]) => Promise<PromiseSettledResult<unknown>[]>;

export type LocalDelayQueueOptions = {
  /** Where the messages are kept across a restart of the runtime; none: in memory only. */
  store?: QueueStore;
  /** Batches handled at once at most (LOCAL_SENDER_CONCURRENCY). */
  concurrency?: number;
  /** Messages in a batch at most (LOCAL_SENDER_BATCH): those visible when a slot frees up, up to this many. */
  batchSize?: number;
};

/**
 * An in-process stand-in for SQS and its event source mapping: per-message delays (capped like
 * DelaySeconds), visible messages handed over in batches, redelivery of a message whose processing
 * failed, and a ceiling on the batches handled at once. With a store, it keeps its messages as SQS
 * does across a restart of the runtime: a message leaves the store only once its processing has
 * finished (deleted, as the sender Lambda's successful batch item is), so one that was running when
 * the process died comes back on the next start, and the attempt claims on the delivery row keep
 * the copy from posting twice.
 */
export class LocalDelayQueue implements DeliveryQueue {
  private readonly entries = new Map<number, Entry>();
  /** Visible messages waiting for a free slot, oldest first. */
  private readonly ready: Entry[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly store: QueueStore | undefined;
  private readonly journal: QueueJournal | undefined;
  private readonly concurrency: number;
  private readonly batchSize: number;
  private nextId = 0;
  private stopped = false;
  private stopping: Promise<void> | undefined;

  /**
   * `visibilityTimeoutMs`: how long a message whose processing threw stays away. Longer than a
   * claim lives (`claimStaleAfterMs`): a processor that threw after claiming its attempt left the
   * claim behind, and sooner its own message would find it live on every return and be dropped.
   */
  constructor(
    private readonly handle: BatchHandler,
    private readonly visibilityTimeoutMs: number,
    options: LocalDelayQueueOptions = {},
  ) {
    this.concurrency = options.concurrency ?? LOCAL_SENDER_CONCURRENCY;
    this.batchSize = options.batchSize ?? LOCAL_SENDER_BATCH;
    this.store = options.store;
    this.journal = options.store
      ? new QueueJournal(options.store, () => [...this.entries.values()].map(withoutTimer))
      : undefined;
  }

  /** Messages kept (waiting, visible or being handled). */
  get size(): number {
    return this.entries.size;
  }

  /** Takes up the messages a previous run kept: each becomes visible when it would have (at once if that is past). */
  async resume(): Promise<number> {
    if (!this.store || !this.journal) return 0;
    const { messages, skipped } = await this.store.load();
    if (skipped > 0) logger.warn('Local webhook queue: unreadable lines left out', { skipped });
    for (const kept of messages) {
      this.nextId = Math.max(this.nextId, kept.id + 1);
      this.schedule({ ...kept });
    }
    await this.journal.rewrite();
    return messages.length;
  }

  async send(message: DeliveryMessage, delayMs: number): Promise<void> {
    // Serialised and validated as SQS and the sender Lambda would: nothing shared by reference.
    const copy = DeliveryMessageSchema.parse(JSON.parse(JSON.stringify(message)));
    const entry: Entry = {
      id: this.nextId++,
      message: copy,
      visibleAt: Date.now() + Math.min(Math.max(0, delayMs), MAX_QUEUE_DELAY_MS),
      receiveCount: 1,
    };
    this.schedule(entry);
    // Resolves once the message is kept: the sender records the attempt only after this, as after SendMessage.
    await this.journal?.keep(withoutTimer(entry));
  }

  /** Holds the entry until it is visible; a stopping queue keeps it for the next run without a timer. */
  private schedule(entry: Entry): void {
    this.entries.set(entry.id, entry);
    if (this.stopped) return;
    const timer = setTimeout(
      () => {
        entry.timer = undefined;
        this.ready.push(entry);
        this.runReady();
      },
      Math.max(0, entry.visibleAt - Date.now()),
    );
    timer.unref();
    entry.timer = timer;
  }

  /** Starts batches of visible messages while there is a free slot. */
  private runReady(): void {
    while (!this.stopped && this.inFlight.size < this.concurrency && this.ready.length > 0)
      this.run(this.ready.splice(0, this.batchSize));
  }

  private run(batch: Entry[]): void {
    const running = this.handle(batch.map((entry) => entry.message))
      // The whole batch failed (its state could not be read): every message comes back.
      .catch((err: unknown): PromiseSettledResult<unknown>[] => batch.map(() => ({ status: 'rejected', reason: err })))
      .then(async (outcomes) => {
        await Promise.all(batch.map((entry, i) => this.settle(entry, outcomes[i])));
      })
      .catch((err: unknown) =>
        logger.error('Local webhook queue could not be saved', { error: (err as Error).message }),
      )
      .finally(() => {
        this.inFlight.delete(running);
        this.runReady();
      });
    this.inFlight.add(running);
  }

  /**
   * A handled message leaves the queue; one whose processing failed comes back after the visibility timeout, a few
   * times.
   */
  private settle(entry: Entry, outcome: PromiseSettledResult<unknown> | undefined): Promise<void> | undefined {
    this.entries.delete(entry.id);
    if (outcome?.status !== 'rejected') return this.journal?.done(entry.id);
    const { deliveryId } = entry.message;
    logger.error('Local webhook sender failed', {
      deliveryId,
      receiveCount: entry.receiveCount,
      error: (outcome.reason as Error)?.message,
    });
    if (entry.receiveCount >= LOCAL_MAX_RECEIVES) return this.journal?.done(entry.id);
    const again: Entry = {
      ...withoutTimer(entry),
      visibleAt: Date.now() + this.visibilityTimeoutMs,
      receiveCount: entry.receiveCount + 1,
    };
    this.schedule(again);
    return this.journal?.keep(withoutTimer(again));
  }

  /** Stops the timers, lets running messages finish (what they queue is kept), and saves what is left. Once. */
  stop(): Promise<void> {
    this.stopping ??= this.stopOnce();
    return this.stopping;
  }

  private async stopOnce(): Promise<void> {
    this.stopped = true;
    for (const entry of this.entries.values()) clearTimeout(entry.timer);
    this.ready.length = 0;
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    await this.journal?.rewrite();
  }
}

const withoutTimer = ({ id, message, visibleAt, receiveCount }: Entry): KeptMessage => ({
  id,
  message,
  visibleAt,
  receiveCount,
});
