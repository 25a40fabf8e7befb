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
  constructor() {
    super(409, 'recipient_opted_out', 'The recipient has opted out of text messages (replied STOP)');
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

export class CarrierUnavailableError extends DomainError {
  constructor() {
    super(502, 'carrier_unavailable', 'The carrier did not accept the message; nothing was billed, it is safe to retry');
  }
}
