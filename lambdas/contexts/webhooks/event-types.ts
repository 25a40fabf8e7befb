/**
 * The event type names, apart from their body schemas (event-schemas.ts): the router, the sender
 * and the endpoint registry need the names only, and importing the schemas would build every
 * API resource schema in their bundles.
 */
export const WEBHOOK_EVENT_TYPES = ['call.completed', 'voicemail.received', 'sms.received'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Sent only when an operator asks (`webhook test`); never derived from data. */
export const TEST_EVENT_TYPE = 'webhook.test';
export type DeliveredEventType = WebhookEventType | typeof TEST_EVENT_TYPE;

export const isWebhookEventType = (value: string): value is WebhookEventType =>
  (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
