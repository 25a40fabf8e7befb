import { randomBytes } from 'node:crypto';
import { logger } from '../../shared/aws';
import { CarrierError, type Carrier, type CarrierReceipt, type OutboundText } from '../texting/carrier-port';
import { updateMessageStatus } from '../texting/delivery-status';

/**
 * The local runtime's carrier: accepts every text with a provider-style sid ('SM' + 32 hex) and
 * then plays the provider's status progress back through the same `updateMessageStatus` the real
 * callbacks use: queued -> sent -> delivered, one `statusDelayMs` apart. In-process timers only,
 * so it belongs to the local runtime, never to a deployed Lambda.
 */
export type LoopbackOptions = {
  /** Pause before each status step; default 1000 ms. */
  statusDelayMs?: number;
  /** Numbers the carrier refuses, to exercise the 502 path locally. */
  failTo?: Iterable<string>;
  /** The status sink; `updateMessageStatus` unless a test replaces it. */
  advance?: typeof updateMessageStatus;
};

const live = new Set<LoopbackCarrier>();

/** Tries of one status callback: the first and a few more, each after a doubled pause. */
const CALLBACK_ATTEMPTS = 4;

export class LoopbackCarrier implements Carrier {
  readonly name = 'loopback' as const;
  readonly #delayMs: number;
  readonly #failTo: Set<string>;
  readonly #advance: typeof updateMessageStatus;
  readonly #timers = new Map<NodeJS.Timeout, () => void>();
  readonly #pending = new Set<Promise<void>>();
  #stopped = false;

  constructor(options: LoopbackOptions = {}) {
    this.#delayMs = options.statusDelayMs ?? 1000;
    this.#failTo = new Set(options.failTo ?? []);
    this.#advance = options.advance ?? updateMessageStatus;
    live.add(this);
  }

  async send(text: OutboundText): Promise<CarrierReceipt> {
    if (this.#stopped) throw new CarrierError('The loopback carrier is stopped', { kind: 'not_sent' });
    if (this.#failTo.has(text.to)) {
      throw new CarrierError('The loopback carrier refuses this number (configured to fail)', {
        kind: 'refused',
        httpStatus: 400,
        providerCode: 21211,
        providerMessage: `The 'To' number ${text.to} is not a valid phone number (loopback carrier)`,
      });
    }
    const messageSid = `SM${randomBytes(16).toString('hex')}`;
    this.#track(this.#progress(text, messageSid));
    return { messageSid };
  }

  /** Resolves once every scheduled status step has run (or was cancelled by `stop`). */
  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /** Cancels the steps not yet due and waits for those running; later sends are refused. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const [timer, cancel] of this.#timers) {
      clearTimeout(timer);
      cancel();
    }
    this.#timers.clear();
    live.delete(this);
    await this.idle();
  }

  /**
   * Like Twilio's status callbacks: each names the message (our id, from the callback URL) and
   * its sid, so a callback records the sid when the send's own answer could not; and each is
   * tried again while it fails (Twilio retries a callback answered 5xx), a few times.
   */
  async #progress(text: OutboundText, messageSid: string): Promise<void> {
    for (const status of ['sent', 'delivered'] as const) {
      for (let attempt = 1; ; attempt += 1) {
        if (!(await this.#wait(attempt === 1 ? this.#delayMs : this.#delayMs * 2 ** attempt))) return;
        try {
          await this.#advance(text.tenantId, { messageId: text.messageId, messageSid }, status, {
            reportedAt: new Date(),
          });
          break;
        } catch (err) {
          // The message may be gone (a test dropped its table); a local carrier must not crash the runtime.
          logger.warn('Loopback carrier could not advance a message', {
            messageId: text.messageId,
            status,
            attempt,
            error: (err as Error).message,
          });
          if (attempt >= CALLBACK_ATTEMPTS) return;
        }
      }
    }
  }

  /** True after `delayMs`, false when stopped meanwhile. Timers are unref'd: they never keep a process alive. */
  #wait(delayMs: number): Promise<boolean> {
    if (this.#stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        resolve(!this.#stopped);
      }, delayMs);
      timer.unref();
      this.#timers.set(timer, () => resolve(false));
    });
  }

  #track(work: Promise<void>): void {
    this.#pending.add(work);
    void work.finally(() => this.#pending.delete(work));
  }
}

/** Stops every loopback carrier of this process (the local runtime's shutdown, test teardown). */
export async function stopLoopbackCarriers(): Promise<void> {
  await Promise.all([...live].map((carrier) => carrier.stop()));
}
