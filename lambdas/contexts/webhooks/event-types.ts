/**
 * The event type names, apart from their body schemas (event-schemas.ts): the router, the sender
 * and the endpoint registry need the names only, and importing the schemas would build every
 * API resource schema in their bundles.
 */
export const WEBHOOK_EVENT_TYPES = [
  'call.completed',
  'voicemail.received',
  'sms.received',
  'message.delivered',
  'message.failed',
  'message.canceled',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'consent.changed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/**
 * The contract's three events: what an endpoint registered without a list of events receives.
 * Later event types are sent only to endpoints that name them, so no receiver gets a type it was
 * not written for.
 */
export const DEFAULT_EVENT_TYPES = [
  'call.completed',
  'voicemail.received',
  'sms.received',
] as const satisfies readonly WebhookEventType[];

/**
 * A text's final statuses, which message.delivered and message.failed announce: once a text is in
 * one it never changes status again (texting/delivery-status.ts). Here, in a module without
 * imports, because the CDK app reads it for the router's filter.
 */
export const FINAL_MESSAGE_STATUSES = ['delivered', 'failed'] as const;

/** The status of a scheduled text canceled before it went out (message.canceled); it never changes again either. */
export const CANCELED_MESSAGE_STATUS = 'canceled';

/** Sent only when an operator asks (`webhook test`); never derived from data. */
export const TEST_EVENT_TYPE = 'webhook.test';
export type DeliveredEventType = WebhookEventType | typeof TEST_EVENT_TYPE;

export const isWebhookEventType = (value: string): value is WebhookEventType =>
  (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);
