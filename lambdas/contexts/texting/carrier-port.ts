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

/**
 * How long a carrier's send may take, connect to last byte (Twilio's bound: carrier/internal/twilio.ts).
 * A send starts it only with this much of its function's time left and a margin (./sending.ts).
 */
export const CARRIER_SEND_TIMEOUT_MS = 5_000;

export interface Carrier {
  readonly name: 'twilio' | 'loopback';
  send(text: OutboundText): Promise<CarrierReceipt>;
}

/**
 * What a failed send means for the text, the only thing the send path decides on:
 * - `not_sent`: certainly nothing reached the carrier, or it created no message (connection
 *   refused, DNS failure, TLS failure, 429, our credentials refused). Refund; a retry is safe.
 * - `refused`: the carrier answered that it will not send this text (a 4xx about the text or
 *   the recipient, e.g. an invalid number). Refund and fail; a retry would be refused again.
 * - `unknown`: the request may have reached the carrier (timeout, reset, 5xx, an unreadable
 *   answer). The text may be on its way: keep it queued and charged until the carrier says.
 */
export type CarrierFailureKind = 'not_sent' | 'refused' | 'unknown';

export type CarrierErrorDetails = {
  kind: CarrierFailureKind;
  /** The provider's HTTP status, when it answered at all. */
  httpStatus?: number;
  /** The provider's own error code (Twilio: e.g. 21211 invalid "To" number, 21610 opted out). */
  providerCode?: number;
  /** The provider's own words for the refusal, when it gave any (kept on the failed text; never logged). */
  providerMessage?: string;
  /** The provider says the recipient opted out (Twilio 21610): the consent ledger records it. */
  recipientOptedOut?: boolean;
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
