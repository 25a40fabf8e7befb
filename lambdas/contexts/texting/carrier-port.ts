/**
 * The carrier (telephony provider) as the send path sees it: hand over one text, get the
 * provider's message sid back. Delivery progress arrives later through `updateMessageStatus`.
 */
export type OutboundText = {
  tenantId: string;
  /** The service's id of the message row, already stored as `queued`. */
  messageId: string;
  from: string;
  to: string;
  body: string;
};

export type CarrierReceipt = { messageSid: string };

export interface Carrier {
  readonly name: 'twilio' | 'loopback';
  send(text: OutboundText): Promise<CarrierReceipt>;
}

export type CarrierErrorDetails = {
  /** The provider's HTTP status, when it answered at all. */
  httpStatus?: number;
  /** The provider's own error code (Twilio: e.g. 21211 invalid "To" number). */
  providerCode?: number;
  /** Whether the same request may succeed later (timeouts, 429, 5xx). */
  retryable: boolean;
};

/**
 * The provider did not accept a text. Its message never contains the text's body or any
 * credential, so it is safe to log.
 */
export class CarrierError extends Error {
  constructor(
    message: string,
    readonly details: CarrierErrorDetails,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'CarrierError';
  }
}
