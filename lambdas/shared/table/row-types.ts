/**
 * The `type` attribute of the rows whose changes the webhook router reacts to, defined once: the
 * entity modules write it and the router's filter criteria and event derivation read it. No
 * imports, so that the CDK construct can read them without loading the data-access modules.
 */
export const ROW_TYPES = { call: 'call', message: 'message', voicemail: 'voicemail', delivery: 'webhookDelivery' } as const;
