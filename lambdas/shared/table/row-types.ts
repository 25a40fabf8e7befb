/**
 * The row types and values that raise events, with no imports, so that the CDK construct can
 * read them (for the router's filter criteria) without loading the data-access modules.
 */
export const TERMINAL_CALL_STATUSES = ['completed', 'failed', 'no-answer', 'busy', 'canceled'] as const;

/** The `type` attribute of the rows the router reacts to. */
export const ROW_TYPES = { call: 'call', message: 'message', voicemail: 'voicemail', delivery: 'webhookDelivery' } as const;
