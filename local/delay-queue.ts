import { logger } from '../lambdas/shared/aws';
import { MAX_QUEUE_DELAY_MS } from '../lambdas/contexts/webhooks/backoff';
import { DeliveryMessageSchema, type DeliveryMessage, type DeliveryQueue } from '../lambdas/contexts/webhooks/queue';
import { coalescingSaver, type QueuedMessage, type QueueStore } from './queue-file';

/** Like SQS's redrive: a message whose processing throws comes back a few times, then is dropped. */
const LOCAL_MAX_RECEIVES = 4;

type Entry = QueuedMessage & { timer?: NodeJS.Timeout };

/**
 * An in-process stand-in for SQS: per-message delays (capped like DelaySeconds) and redelivery on
 * error. With a store, it keeps its messages as SQS does across a restart of the runtime: a
 * message leaves the store only once its processing has finished (deleted, as the sender Lambda's
 * successful batch item is), so one that was running when the process died comes back on the next
 * start, and the attempt claims on the delivery row keep the copy from posting twice.
 */
export class LocalDelayQueue implements DeliveryQueue {
  private readonly entries = new Set<Entry>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly persist: () => Promise<void>;
  private stopped = false;
  private stopping: Promise<void> | undefined;

  /**
   * `visibilityTimeoutMs`: how long a message whose processing threw stays away. Longer than a
   * claim lives (`claimStaleAfterMs`): a processor that threw after claiming its attempt left the
   * claim behind, and sooner its own message would find it live on every return and be dropped.
   */
  constructor(
    private readonly handle: (message: DeliveryMessage) => Promise<unknown>,
    private readonly visibilityTimeoutMs: number,
    private readonly store?: QueueStore,
  ) {
    const snapshot = () => [...this.entries].map(({ message, visibleAt, receiveCount }) => ({ message, visibleAt, receiveCount }));
    this.persist = store ? coalescingSaver(store, snapshot) : async () => undefined;
  }

  /** Takes up the messages a previous run kept: each becomes visible when it would have (at once if that is past). */
  async resume(): Promise<number> {
    if (!this.store) return 0;
    const { messages, skipped } = await this.store.load();
    if (skipped > 0) logger.warn('Local webhook queue: unreadable messages left out', { skipped });
    for (const queued of messages) this.schedule({ ...queued });
    return messages.length;
  }

  async send(message: DeliveryMessage, delayMs: number): Promise<void> {
    // Serialised and validated as SQS and the sender Lambda would: nothing shared by reference.
    const copy = DeliveryMessageSchema.parse(JSON.parse(JSON.stringify(message)));
    this.schedule({ message: copy, visibleAt: Date.now() + Math.min(Math.max(0, delayMs), MAX_QUEUE_DELAY_MS), receiveCount: 1 });
    // Resolves once the message is kept: the sender records the attempt only after this, as after SendMessage.
    await this.persist();
  }

  /** Holds the entry; a stopping queue keeps it for the next run without a timer. */
  private schedule(entry: Entry): void {
    this.entries.add(entry);
    if (this.stopped) return;
    const timer = setTimeout(() => {
      entry.timer = undefined;
      this.run(entry);
    }, Math.max(0, entry.visibleAt - Date.now()));
    timer.unref();
    entry.timer = timer;
  }

  private run(entry: Entry): void {
    const running = this.handle(entry.message)
      .then(
        () => {
          this.entries.delete(entry);
        },
        (err: unknown) => {
          const { deliveryId } = entry.message;
          logger.error('Local webhook sender failed', { deliveryId, receiveCount: entry.receiveCount, error: (err as Error).message });
          this.entries.delete(entry);
          if (entry.receiveCount < LOCAL_MAX_RECEIVES) {
            this.schedule({ ...entry, visibleAt: Date.now() + this.visibilityTimeoutMs, receiveCount: entry.receiveCount + 1 });
          }
        },
      )
      .then(() => this.persist())
      .catch((err: unknown) => logger.error('Local webhook queue could not be saved', { error: (err as Error).message }))
      .finally(() => this.inFlight.delete(running));
    this.inFlight.add(running);
  }

  /** Stops the timers, lets running messages finish (what they queue is kept), and saves what is left. Once. */
  stop(): Promise<void> {
    this.stopping ??= this.stopOnce();
    return this.stopping;
  }

  private async stopOnce(): Promise<void> {
    this.stopped = true;
    for (const entry of this.entries) clearTimeout(entry.timer);
    await Promise.allSettled([...this.inFlight]);
    await this.persist();
  }
}
