import { DomainError } from '../../shared/errors';

/**
 * The errors of sending a text (POST /messages), in the order the send checks them. Mapped to
 * HTTP with every other DomainError (lambdas/handlers/http/error-mapper.ts).
 */

export class NoSmsNumberError extends DomainError {
  constructor() {
    super(409, 'no_sms_number', 'No SMS-capable number is configured for this organization');
  }
}

export class RecipientOptedOutError extends DomainError {
  /** `messageId`: the carrier reported the opt-out on this send (its message is failed, not billed). */
  constructor(messageId?: string, headers: Record<string, string> = {}) {
    super(
      409,
      'recipient_opted_out',
      'The recipient has opted out of text messages',
      messageId ? { messageId } : {},
      headers,
    );
  }
}

/**
 * Quiet hours (the organization's policy `refuse`): the recipient's local time is outside its window
 * (./quiet-hours.ts). `allowedAt` is the next instant the window opens for that number.
 */
export class QuietHoursError extends DomainError {
  constructor(readonly allowedAt: Date) {
    super(
      422,
      'quiet_hours',
      `It is outside the recipient's allowed hours (quiet hours); the next allowed time is ${allowedAt.toISOString()}`,
      { allowedAt: allowedAt.toISOString() },
    );
  }
}

export class BillingBlockedError extends DomainError {
  constructor() {
    super(402, 'billing_blocked', "The organization's billing status does not allow sending");
  }
}

export class SpendingLimitReachedError extends DomainError {
  constructor() {
    super(402, 'spending_limit_reached', "Sending this message would exceed the organization's spending limit");
  }
}

/**
 * The carrier certainly did not take the text (it could not be reached, or it turned the request
 * away before creating a message: 429, credentials). The message is failed and refunded, so
 * sending again is safe; its Idempotency-Key keeps this outcome, so a new send needs a new key.
 * Never raised when the outcome is unknown.
 */
export class CarrierUnavailableError extends DomainError {
  constructor(headers: Record<string, string> = {}) {
    super(
      502,
      'carrier_unavailable',
      'The carrier did not take the message; nothing was billed and it is safe to send again (with a new ' +
        'Idempotency-Key)',
      {},
      headers,
    );
  }
}

/**
 * The carrier refused this text for good (e.g. an invalid or unreachable number). The message is
 * stored as `failed` and was not billed; retrying the same request would be refused again.
 */
export class CarrierRejectedError extends DomainError {
  constructor(messageId: string, carrierCode: number | null, headers: Record<string, string> = {}) {
    super(
      422,
      'carrier_rejected',
      `The carrier refused this text${carrierCode ? ` (carrier error ${carrierCode})` : ''}; nothing was billed`,
      { messageId, carrierCode },
      headers,
    );
  }
}

/** A cancel or a reschedule of a text that is no longer scheduled (sent, failed, or already canceled). */
export class NotScheduledError extends DomainError {
  constructor(messageId: string, status: string) {
    super(409, 'not_scheduled', `The message is ${status}, no longer scheduled`, { messageId, status });
  }
}

/**
 * Too little of the function's time is left to finish the carrier's send: nothing is charged or
 * stored and the carrier is not called, so the same request again is safe (503, Retry-After).
 */
export class CarrierTimeShortError extends DomainError {
  /** `remainingMs`: what was left of the function, for the log (never the client's answer). */
  constructor(readonly remainingMs: number) {
    super(
      503,
      'temporarily_unavailable',
      'The service could not send this text in time; nothing was changed, retry after 1 second',
      {},
      { 'Retry-After': '1' },
    );
  }
}
