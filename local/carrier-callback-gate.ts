import {
  callbackRateLimitRefusal,
  hasTwilioSignatureShape,
  UNSIGNED_CALLBACK_REFUSAL,
  type CallbackRefusal,
} from '../lambdas/contexts/carrier/callback-protection';
import { NetworkRateLimiter } from './network-rate-limit';

/**
 * What stands in front of a carrier callback function in AWS, in the same order, for the local
 * runtime (lambdas/contexts/carrier/callback-protection.ts): the WAF's rule on the signature's
 * shape, the WAF's per-address limit of the callback paths, then API Gateway's throttle of the
 * callback method. The API's per-network limit does not count callbacks, as in AWS.
 */
export type CallbackGateSettings = {
  /** Each callback method's throttle, requests per second; 0 turns the throttle off. */
  rateLimit: number;
  /** Its bucket: requests a method accepts at once after a quiet spell. */
  burstLimit: number;
  /** Callback requests per address and minute; 0 turns the limit off. */
  limitPerMinutePerAddress: number;
};

export type CallbackGateAnswer =
  | { admitted: true }
  | { admitted: false; by: 'signature'; statusCode: 403; body: CallbackRefusal }
  | { admitted: false; by: 'address'; statusCode: 429; body: CallbackRefusal; retryAfterSeconds: number }
  | { admitted: false; by: 'throttle' };

/**
 * API Gateway's throttle: a bucket of `burst` tokens refilled at `rate` per second; a request
 * takes one or is refused. Starts full, as a stage does after a quiet spell.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly rate: number,
    private readonly burst: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.last = clock();
  }

  take(): boolean {
    const now = this.clock();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

export class CarrierCallbackGate {
  private readonly perAddress: NetworkRateLimiter;
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    private readonly settings: CallbackGateSettings,
    private readonly clock: () => number = Date.now,
  ) {
    this.perAddress = new NetworkRateLimiter(settings.limitPerMinutePerAddress, clock);
  }

  /**
   * `method` names the throttled resource (e.g. `POST /carrier/twilio/sms/status`); undefined for a path no method
   * serves.
   */
  admit(request: { sourceIp: string; signature: string | undefined; method: string | undefined }): CallbackGateAnswer {
    if (!hasTwilioSignatureShape(request.signature))
      return { admitted: false, by: 'signature', statusCode: 403, body: UNSIGNED_CALLBACK_REFUSAL };
    const address = this.perAddress.consume(request.sourceIp);
    if (!address.allowed) {
      return {
        admitted: false,
        by: 'address',
        statusCode: 429,
        body: callbackRateLimitRefusal(this.settings.limitPerMinutePerAddress),
        retryAfterSeconds: 60,
      };
    }
    if (request.method === undefined || this.settings.rateLimit <= 0) return { admitted: true };
    return this.bucketOf(request.method).take() ? { admitted: true } : { admitted: false, by: 'throttle' };
  }

  private bucketOf(method: string): TokenBucket {
    let bucket = this.buckets.get(method);
    if (!bucket) {
      bucket = new TokenBucket(this.settings.rateLimit, this.settings.burstLimit, this.clock);
      this.buckets.set(method, bucket);
    }
    return bucket;
  }
}
