import * as z from 'zod/mini';
import '../../shared/schemas/zod-english';
import { CallSchema } from '../calls/schemas';
import { CONSENT_STATUSES, ContactSchema, DeletedContactSchema } from '../contacts/schemas';
import { CANCEL_REASONS, FAILURE_REASONS, MessageSchema } from '../texting/schemas';
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
  callId: z
    .nullable(uuid)
    .register(z.globalRegistry, { description: 'The call the voicemail was left on, when known' }),
  fromNumber: z.string(),
  toNumber: z.string(),
  durationSec: z.nullable(z.int()),
  transcript: z.nullable(z.string()).register(z.globalRegistry, {
    description: 'Present when the transcript had arrived when the recording was ready',
  }),
  createdAt: dateTime,
});

/** The API request an event's change came from (`request` of every event). */
export const WebhookRequestSchema = z
  .nullable(
    z.object({
      id: z.string().register(z.globalRegistry, {
        description: 'The id of the request (its `x-amzn-RequestId` response header, `requestId` of an error)',
      }),
      idempotencyKey: z
        .nullable(z.string())
        .register(z.globalRegistry, { description: 'The Idempotency-Key header the request carried, if any' }),
    }),
  )
  .register(z.globalRegistry, {
    description:
      'The API request whose change raised the event, so a client can recognise the echo of its own write: a ' +
      '`POST /messages` the carrier refused at once (`message.failed`), a cancel (`message.canceled`), a ' +
      "`POST /consent` (`consent.changed`, and the cancels of its opt-out), a contact's write. Null for the " +
      "carrier's and the system's changes: a call, a voicemail, a text received, a text's later status from the " +
      'carrier (not the send that created it), the settlement sweep, the firing of a scheduled text, a STOP, a ' +
      'contact created for a number seen on a call',
  });

// `uuid` and `dateTime` are shared: their descriptions go on clones.
const envelope = <T extends string, D extends z.ZodMiniType>(type: T, data: D) =>
  z.object({
    id: uuid
      .clone()
      .register(z.globalRegistry, { description: 'Event id; the same on every delivery and retry of this event' }),
    type: z.literal(type),
    createdAt: dateTime.clone().register(z.globalRegistry, {
      description:
        'When the change that raised the event happened, to the millisecond (the time of the write that made it)',
    }),
    sequence: z
      .int()
      .check(z.gte(0))
      .register(z.globalRegistry, {
        description:
          "The resource's sequence number at this change: it grows with every change of the resource the event is " +
          'about ' +
          '(`data.call`, `data.message`, `data.voicemail`, `data.contact`, the number of `consent.changed`), so of ' +
          'two events about one ' +
          'resource the one with the higher number is the newer. Numbers may skip. 0 on `webhook.test` (about no ' +
          'resource)',
      }),
    data,
    request: WebhookRequestSchema,
  });

export const CallCompletedEventSchema = envelope('call.completed', z.object({ call: CallSchema })).register(
  z.globalRegistry,
  {
    id: 'WebhookEventCallCompleted',
    description: 'A call ended: it reached completed, failed, no-answer, busy or canceled',
  },
);

export const SmsReceivedEventSchema = envelope('sms.received', z.object({ message: WebhookMessageSchema })).register(
  z.globalRegistry,
  {
    id: 'WebhookEventSmsReceived',
    description: "A text message arrived on one of the organization's numbers",
  },
);

export const VoicemailReceivedEventSchema = envelope(
  'voicemail.received',
  z.object({ voicemail: WebhookVoicemailSchema }),
).register(z.globalRegistry, {
  id: 'WebhookEventVoicemailReceived',
  description:
    'A caller left a message and the recording is ready; the transcript is included when it has already arrived',
});

const finalStatusFields = {
  messageId: uuid.clone().register(z.globalRegistry, { description: 'The text this event is about (`message.id`)' }),
  counterpartNumber: z.string().register(z.globalRegistry, {
    description: 'The number the text was sent to: its conversation, `GET /messages/{counterpart}`',
  }),
  carrierReportedAt: z.nullable(dateTime.clone()).register(z.globalRegistry, {
    description:
      'When the carrier reported the final status, to the millisecond: the arrival of its status callback or of its ' +
      'answer to the send. ' +
      'Null when the carrier never reported one (a text the service failed itself, e.g. `carrier_outcome_unknown`)',
  }),
};

export const MessageDeliveredEventSchema = envelope(
  'message.delivered',
  z.object({
    ...finalStatusFields,
    status: z.literal('delivered'),
    message: WebhookMessageSchema,
  }),
).register(z.globalRegistry, {
  id: 'WebhookEventMessageDelivered',
  description:
    'A text the organization sent reached the recipient (the carrier reported it delivered). Sent once per text, to ' +
    'endpoints subscribed to it',
});

export const MessageFailedEventSchema = envelope(
  'message.failed',
  z.object({
    ...finalStatusFields,
    status: z.literal('failed'),
    reason: z.enum(FAILURE_REASONS).register(z.globalRegistry, {
      description:
        '`carrier_rejected`: the carrier refused the text when it was sent (e.g. an invalid number); ' +
        '`carrier_failed`: the carrier accepted it, ' +
        'then reported it failed or undelivered; `recipient_opted_out`: the carrier refused it because the recipient ' +
        'opted out; ' +
        '`carrier_unavailable`: the carrier could not be reached and certainly has no such text; ' +
        '`carrier_outcome_unknown`: the carrier never ' +
        'answered and never reported a status within an hour, so the service failed it. Clients must tolerate ' +
        'reasons added later',
    }),
    carrierErrorCode: z.nullable(z.int()).register(z.globalRegistry, {
      description:
        "The carrier's error code (Twilio: e.g. 30003 unreachable handset, 21211 invalid number), when it gave one",
    }),
    carrierErrorMessage: z.nullable(z.string()).register(z.globalRegistry, {
      description: "The carrier's words for the error (or the title of its code), when known",
    }),
    refunded: z.boolean().register(z.globalRegistry, {
      description:
        'True when the text had been charged and the charge was refunded (in the same write that failed it): a ' +
        'failed text is never billed',
    }),
    refundedCents: z
      .int()
      .check(z.gte(0))
      .register(z.globalRegistry, { description: 'What was refunded, in cents (0 when nothing was charged)' }),
    message: WebhookMessageSchema,
  }),
).register(z.globalRegistry, {
  id: 'WebhookEventMessageFailed',
  description:
    'A text the organization sent failed, whatever the cause; its charge is refunded. Sent once per text, to ' +
    'endpoints subscribed to it',
});

export const MessageCanceledEventSchema = envelope(
  'message.canceled',
  z.object({
    messageId: finalStatusFields.messageId,
    counterpartNumber: finalStatusFields.counterpartNumber,
    status: z.literal('canceled'),
    reason: z.enum(CANCEL_REASONS).register(z.globalRegistry, {
      description:
        '`api`: canceled by `POST /messages/{id}/cancel`; `opted_out`: its recipient opted out before its time (a ' +
        'STOP, the carrier, or the consent API); `billing`: the organization could not be billed at its time. ' +
        'Clients must tolerate reasons added later',
    }),
    refundedCents: z.int().check(z.gte(0)).register(z.globalRegistry, {
      description: 'Its reserved cost, given back in the write that canceled it, in cents',
    }),
    message: WebhookMessageSchema,
  }),
).register(z.globalRegistry, {
  id: 'WebhookEventMessageCanceled',
  description:
    'A scheduled text was canceled before it went out, and its cost refunded: it is never sent. Sent once per ' +
    'text, to endpoints subscribed to it',
});

export const ContactCreatedEventSchema = envelope('contact.created', z.object({ contact: ContactSchema })).register(
  z.globalRegistry,
  {
    id: 'WebhookEventContactCreated',
    description:
      'A contact was added to the directory: by the API (`POST /contacts`, `POST /contacts/batch`) or by the system ' +
      'for a number seen on a call or a text (`isAutoCreated`). Sent to endpoints subscribed to it',
  },
);

export const ContactUpdatedEventSchema = envelope(
  'contact.updated',
  z.object({
    contact: ContactSchema,
    previousAttributes: z.record(z.string(), z.unknown()).register(z.globalRegistry, {
      description:
        'The fields this change gave another value, each with its value before (`updatedAt` and `version` aside); ' +
        'for `customFields`, the keys changed, each with its value before (null: the key was absent)',
    }),
  }),
).register(z.globalRegistry, {
  id: 'WebhookEventContactUpdated',
  description:
    'A contact changed: its fields, its number, its external id or custom fields, or it was adopted (named). The ' +
    'contact as it now stands. ' +
    "A change of its number's consent is `consent.changed`, not this. Sent to endpoints subscribed to it",
});

export const ContactDeletedEventSchema = envelope(
  'contact.deleted',
  z.object({ contact: DeletedContactSchema }),
).register(z.globalRegistry, {
  id: 'WebhookEventContactDeleted',
  description:
    'A contact was deleted: its id, when, and the external id and number it had. Sent to endpoints subscribed to it',
});

export const WebhookConsentSchema = z.object({
  number: z.string().register(z.globalRegistry, {
    description: 'The number (E.164) whose consent changed, whichever contact holds it',
  }),
  status: z
    .enum(CONSENT_STATUSES.filter((status) => status !== 'unknown') as ['opted_in', 'opted_out'])
    .register(z.globalRegistry, {
      description:
        '`opted_out` (a STOP, the carrier refused a text because the recipient opted out, or an opt-out recorded ' +
        'through `POST /consent`) or `opted_in` (a START, or an opt-in recorded through `POST /consent`)',
    }),
  source: z.string().register(z.globalRegistry, {
    description:
      'What recorded it: `sms_keyword` (the number texted a keyword), `carrier_opt_out` (the carrier reported an ' +
      'opt-out), or the `source` given to `POST /consent`: `email`, `web_form`, `call`, `in_person` or `other`. ' +
      'Others may be added',
  }),
  at: dateTime.clone().register(z.globalRegistry, {
    description:
      "The time of the change: the carrier's for a keyword, the evidence's `collectedAt` (or the request's) for " +
      "`POST /consent`; the contact's `consentAt`",
  }),
  note: z.nullable(z.string()).register(z.globalRegistry, { description: 'Human-readable, e.g. `Replied STOP`' }),
});

export const ConsentChangedEventSchema = envelope(
  'consent.changed',
  z.object({
    consent: WebhookConsentSchema,
    previousStatus: z.enum(CONSENT_STATUSES).register(z.globalRegistry, {
      description: "The number's consent before this change (`unknown` when none was recorded)",
    }),
    contactId: z.nullable(uuid.clone()).register(z.globalRegistry, {
      description: 'The contact holding the number when the change was recorded; null when none did',
    }),
    externalId: z
      .nullable(z.string())
      .register(z.globalRegistry, { description: "That contact's external id, null when it has none" }),
    version: z.nullable(z.int()).register(z.globalRegistry, {
      description:
        "That contact's `version` with this change (its copy of the consent counts as a change of the contact), so " +
        'it orders against `contact.*` events and the API; null when no contact held the number',
    }),
  }),
).register(z.globalRegistry, {
  id: 'WebhookEventConsentChanged',
  description:
    "A number's messaging consent was recorded: a STOP, a START, a carrier's opt-out or a change through `POST " +
    '/consent`, once per change (its evidence is not in the event: `GET /consent` shows it). The contact ' +
    'holding the number ' +
    'shows it as `consentStatus`. Sent to endpoints subscribed to it',
});

export const TestEventSchema = envelope(TEST_EVENT_TYPE, z.object({ endpointId: uuid })).register(z.globalRegistry, {
  id: 'WebhookEventTest',
  description: 'Sent only when an operator tests an endpoint; acknowledge it like any other event',
});

export const EVENT_SCHEMAS = {
  'call.completed': CallCompletedEventSchema,
  'sms.received': SmsReceivedEventSchema,
  'voicemail.received': VoicemailReceivedEventSchema,
  'message.delivered': MessageDeliveredEventSchema,
  'message.failed': MessageFailedEventSchema,
  'message.canceled': MessageCanceledEventSchema,
  'contact.created': ContactCreatedEventSchema,
  'contact.updated': ContactUpdatedEventSchema,
  'contact.deleted': ContactDeletedEventSchema,
  'consent.changed': ConsentChangedEventSchema,
  [TEST_EVENT_TYPE]: TestEventSchema,
} as const;

export type CallCompletedEvent = z.infer<typeof CallCompletedEventSchema>;
export type SmsReceivedEvent = z.infer<typeof SmsReceivedEventSchema>;
export type VoicemailReceivedEvent = z.infer<typeof VoicemailReceivedEventSchema>;
export type MessageDeliveredEvent = z.infer<typeof MessageDeliveredEventSchema>;
export type MessageFailedEvent = z.infer<typeof MessageFailedEventSchema>;
export type MessageCanceledEvent = z.infer<typeof MessageCanceledEventSchema>;
export type TestEvent = z.infer<typeof TestEventSchema>;
export type WebhookConsent = z.infer<typeof WebhookConsentSchema>;
export type WebhookMessage = z.infer<typeof WebhookMessageSchema>;
export type WebhookVoicemail = z.infer<typeof WebhookVoicemailSchema>;
