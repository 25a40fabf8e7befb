import * as z from 'zod/mini';
import '../../shared/schemas/zod-english';
import { CallSchema } from '../calls/schemas';
import { MessageSchema } from '../texting/schemas';
import { TEST_EVENT_TYPE } from './event-types';

/**
 * The bodies of the signed outbound events: `{ id, type, createdAt, data }`, where `data` reuses
 * the API's resource shapes. `.register(z.globalRegistry, { id })` makes each an OpenAPI component,
 * referenced from the document's `webhooks` section.
 */

const dateTime = z.iso.datetime({ offset: true });
const uuid = z.uuid();

/** The spec's Message resource: the same `Message` component the API returns. */
export const WebhookMessageSchema = MessageSchema;

/** A voicemail as events carry it; voicemails have no API resource of their own. */
export const WebhookVoicemailSchema = z.object({
  id: uuid,
  callId: z.nullable(uuid).register(z.globalRegistry, { description: 'The call the voicemail was left on, when known' }),
  fromNumber: z.string(),
  toNumber: z.string(),
  durationSec: z.nullable(z.int()),
  transcript: z
    .nullable(z.string())
    .register(z.globalRegistry, { description: 'Present when the transcript had arrived when the recording was ready' }),
  createdAt: dateTime,
});

// `uuid` and `dateTime` are shared: their descriptions go on clones.
const envelope = <T extends string, D extends z.ZodMiniType>(type: T, data: D) =>
  z.object({
    id: uuid.clone().register(z.globalRegistry, { description: 'Event id; the same on every delivery and retry of this event' }),
    type: z.literal(type),
    createdAt: dateTime.clone().register(z.globalRegistry, { description: 'When the change that raised the event happened' }),
    data,
  });

export const CallCompletedEventSchema = envelope('call.completed', z.object({ call: CallSchema })).register(z.globalRegistry, {
  id: 'WebhookEventCallCompleted',
  description: 'A call ended: it reached completed, failed, no-answer, busy or canceled',
});

export const SmsReceivedEventSchema = envelope('sms.received', z.object({ message: WebhookMessageSchema })).register(z.globalRegistry, {
  id: 'WebhookEventSmsReceived',
  description: "A text message arrived on one of the organization's numbers",
});

export const VoicemailReceivedEventSchema = envelope(
  'voicemail.received',
  z.object({ voicemail: WebhookVoicemailSchema }),
).register(z.globalRegistry, {
  id: 'WebhookEventVoicemailReceived',
  description: 'A caller left a message and the recording is ready; the transcript is included when it has already arrived',
});

export const TestEventSchema = envelope(TEST_EVENT_TYPE, z.object({ endpointId: uuid })).register(z.globalRegistry, {
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
