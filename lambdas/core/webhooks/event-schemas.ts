import * as z from 'zod';
import { CallSchema } from '../schemas';
import { MessageSchema } from '../message-schemas';

/**
 * The bodies of the signed outbound events: `{ id, type, createdAt, data }`, where `data` reuses
 * the API's resource shapes. `.meta({ id })` makes each an OpenAPI component, referenced from
 * the document's `webhooks` section.
 */
export const WEBHOOK_EVENT_TYPES = ['call.completed', 'voicemail.received', 'sms.received'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Sent only when an operator asks (`webhook test`); never derived from data. */
export const TEST_EVENT_TYPE = 'webhook.test';
export type DeliveredEventType = WebhookEventType | typeof TEST_EVENT_TYPE;

export const isWebhookEventType = (value: string): value is WebhookEventType =>
  (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value);

const dateTime = z.iso.datetime({ offset: true });
const uuid = z.uuid();

/** The spec's Message resource: the same `Message` component the API returns. */
export const WebhookMessageSchema = MessageSchema;

/** A voicemail as events carry it; voicemails have no API resource of their own. */
export const WebhookVoicemailSchema = z.object({
  id: uuid,
  callId: uuid.nullable().meta({ description: 'The call the voicemail was left on, when known' }),
  fromNumber: z.string(),
  toNumber: z.string(),
  durationSec: z.number().int().nullable(),
  transcript: z.string().nullable().meta({ description: 'Present when the transcript had arrived when the recording was ready' }),
  createdAt: dateTime,
});

const envelope = <T extends string, D extends z.ZodType>(type: T, data: D) =>
  z.object({
    id: uuid.meta({ description: 'Event id; the same on every delivery and retry of this event' }),
    type: z.literal(type),
    createdAt: dateTime.meta({ description: 'When the change that raised the event happened' }),
    data,
  });

export const CallCompletedEventSchema = envelope('call.completed', z.object({ call: CallSchema })).meta({
  id: 'WebhookEventCallCompleted',
  description: 'A call ended: it reached completed, failed, no-answer, busy or canceled',
});

export const SmsReceivedEventSchema = envelope('sms.received', z.object({ message: WebhookMessageSchema })).meta({
  id: 'WebhookEventSmsReceived',
  description: "A text message arrived on one of the organization's numbers",
});

export const VoicemailReceivedEventSchema = envelope('voicemail.received', z.object({ voicemail: WebhookVoicemailSchema })).meta({
  id: 'WebhookEventVoicemailReceived',
  description: 'A caller left a message and the recording is ready; the transcript is included when it has already arrived',
});

export const TestEventSchema = envelope(TEST_EVENT_TYPE, z.object({ endpointId: uuid })).meta({
  id: 'WebhookEventTest',
  description: 'Sent only when an operator tests an endpoint; acknowledge it like any other event',
});

export const EVENT_SCHEMAS = {
  'call.completed': CallCompletedEventSchema,
  'sms.received': SmsReceivedEventSchema,
  'voicemail.received': VoicemailReceivedEventSchema,
  [TEST_EVENT_TYPE]: TestEventSchema,
} as const;

export type CallCompletedEvent = z.infer<typeof CallCompletedEventSchema>;
export type SmsReceivedEvent = z.infer<typeof SmsReceivedEventSchema>;
export type VoicemailReceivedEvent = z.infer<typeof VoicemailReceivedEventSchema>;
export type TestEvent = z.infer<typeof TestEventSchema>;
export type WebhookMessage = z.infer<typeof WebhookMessageSchema>;
export type WebhookVoicemail = z.infer<typeof WebhookVoicemailSchema>;
