/**
 * How long a text's carrier outcome may stay unknown (no sid from the send's answer, no status
 * callback) before the settlement sweep fails and refunds it (./settlement.ts). Longer than
 * Twilio keeps retrying a status callback, so a text the carrier took is settled by its callback
 * first. No imports, so that the CDK app and the local runtime's option parser can read it.
 */
export const SETTLEMENT_GRACE_MS = 60 * 60 * 1000;

/** The count of texts the sweep could not settle and skipped (the stack alarms on it). */
export const SETTLEMENT_FAILED_METRIC = 'TextsSettlementFailed';
