import { num, str, type Item } from '../../shared/table/dynamo';
import { costCentsOfItem, type FailureReason } from './messages';

/**
 * What a text's row says about how it reached its final status, for the message.delivered and
 * message.failed events (the webhooks context derives them from the row alone). A module of its
 * own, apart from ./delivery-status.ts which writes these attributes, so the router's bundle does
 * not carry the status machine, the spend shards and the organization module.
 */

/**
 * The row's epoch milliseconds of the carrier's report of a final status: its callback or its answer to the send
 * arrived.
 */
export const CARRIER_REPORTED_AT = 'carrierReportedAt';
/** The carrier's words for a failure (its message, or the title of its code), kept with `carrierCode`. */
export const CARRIER_MESSAGE = 'carrierMessage';

/**
 * When the carrier reported the final status (null when it never did), and for a failure the
 * reason, the carrier's code and words, and the cents refunded (a failed outbound text gets its
 * charge back in the transaction that failed it).
 */
export const outcomeFactsOf = (row: Item) => {
  const failed = row.status === 'failed';
  return {
    carrierReportedAtMs: num(row[CARRIER_REPORTED_AT]),
    failureReason: failed ? ((str(row.failureReason) as FailureReason | null) ?? 'carrier_failed') : null,
    carrierCode: failed ? num(row.carrierCode) : null,
    carrierMessage: failed ? str(row[CARRIER_MESSAGE]) : null,
    refundedCents: failed && row.direction === 'outbound' ? costCentsOfItem(row) : 0,
  };
};
