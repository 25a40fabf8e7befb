/**
 * Who recorded a consent change: the `source` of the ledger, the API and `consent.changed`. No
 * imports, so that the operator CLI can check an option against it without opening the table.
 */

/** The number texted a keyword (STOP, START...): written by the texting context. */
export const KEYWORD_SOURCE = 'sms_keyword';
/** The carrier refused a send because the recipient opted out with it (a STOP we never received). */
export const CARRIER_OPT_OUT_SOURCE = 'carrier_opt_out';

/**
 * What `POST /consent` accepts: the ways a person tells the organization itself (since 11 April 2025 an
 * opt-out given "by any reasonable means" binds). `sms_keyword` and `carrier_opt_out` are not among them:
 * the service records those itself, from the carrier, and an integrator could not prove one.
 */
export const API_CONSENT_SOURCES = ['email', 'web_form', 'call', 'in_person', 'other'] as const;
export type ApiConsentSource = (typeof API_CONSENT_SOURCES)[number];

/** Changes `GET /consent` shows, newest first: one Query page, whatever a number's past. */
export const CONSENT_HISTORY_LIMIT = 20;

/** The bounds of an evidence's parts, in characters (a whole evidence stays under 2 KiB). */
export const EVIDENCE_BOUNDS = { statement: 1000, where: 500, reference: 200 } as const;
