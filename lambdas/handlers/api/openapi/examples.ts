import type { WebhookEventType } from '../../../contexts/webhooks/event-types';
import type { RouteId } from '../routes';

/**
 * The examples of the OpenAPI document: a request body and a success body per operation, and a
 * body per webhook event. Typed by the manifest's route ids and the event types, so a new
 * operation or event does not compile until it has its examples; test/unit/openapi-examples.test.ts
 * validates every example against the schema it illustrates. One organization's story: Ada's
 * contact, a call from her, a text to her and her reply.
 */
const TENANT_ID = '0192f1a0-5b3c-7d4e-8f60-718293a4b5c6';
const CONTACT_ID = '0193a4b2-7c1e-7a3f-9b2d-4e5f6a7b8c9d';
const AUTO_CONTACT_ID = '0193a3f0-2a4b-7c5d-8e6f-708192a3b4c5';
const CALL_ID = '0193a4b5-0e1f-7a2b-9c3d-4e5f60718293';
const OUTBOUND_ID = '0193a4c0-1d2e-7f3a-8b4c-5d6e7f8a9b0c';
const INBOUND_ID = '0193a4c3-9a8b-7c6d-9e5f-4a3b2c1d0e9f';
const ORG_NUMBER = '+15005550006';
const ADA = '+14155550100';

const call = {
  id: CALL_ID,
  direction: 'inbound',
  fromNumber: ADA,
  toNumber: ORG_NUMBER,
  status: 'completed',
  startedAt: '2026-11-20T16:04:11.000Z',
  answeredAt: '2026-11-20T16:04:19.000Z',
  endedAt: '2026-11-20T16:09:02.000Z',
  durationSec: 283,
  isInternal: false,
  agentId: '0191c2d3-e4f5-7a6b-8c7d-9e0f1a2b3c4d',
  contactId: CONTACT_ID,
};

const contact = {
  id: CONTACT_ID,
  tenantId: TENANT_ID,
  displayName: 'Ada Lovelace',
  phoneNumber: '+1 415 555 0100',
  company: 'Analytical Engines Ltd',
  tag: 'customer',
  notes: 'Prefers texts before 6 pm',
  createdByAgentId: null,
  createdAt: '2026-11-20T15:58:40.120Z',
  updatedAt: '2026-11-20T15:58:40.120Z',
  normalizedNumber: ADA,
  isAutoCreated: false,
  source: 'manual',
  consentStatus: 'unknown',
  consentSource: null,
  consentAt: null,
  consentNote: null,
  externalId: 'hs-4829301',
  customFields: { lifecycleStage: 'customer', owner: 'grace@example.com' },
  version: 1,
};

const adoptedContact = {
  ...contact,
  id: AUTO_CONTACT_ID,
  createdAt: '2026-11-18T09:12:03.000Z',
  source: 'auto_inbound',
  consentStatus: 'opted_in',
  consentSource: 'inbound_keyword',
  consentAt: '2026-11-18T09:30:00.000Z',
};

const outbound = {
  id: OUTBOUND_ID,
  tenantId: TENANT_ID,
  direction: 'outbound',
  fromNumber: ORG_NUMBER,
  toNumber: ADA,
  counterpartNumber: ADA,
  body: 'Your order ships today. Reply STOP to opt out.',
  status: 'queued',
  messageSid: 'SM5f8a3c2b1d0e4f6a7b8c9d0e1f2a3b4c',
  agentId: null,
  isRead: true,
  createdAt: '2026-11-20T16:15:00.250Z',
};

/** A reminder scheduled for the next morning: charged now, sent within a minute after `sendAt`. */
const scheduled = {
  ...outbound,
  id: '0193a4c0-9f1e-7b2c-8d3e-4f5a6b7c8d9e',
  body: 'Reminder: your table for two is booked for 19:30 tonight.',
  status: 'scheduled',
  messageSid: '',
  sendAt: '2026-11-21T15:00:00.000Z',
  category: 'transactional',
};

const inbound = {
  ...outbound,
  id: INBOUND_ID,
  direction: 'inbound',
  fromNumber: ADA,
  toNumber: ORG_NUMBER,
  body: 'Thanks! See you Friday.',
  status: 'received',
  messageSid: 'SM0a1b2c3d4e5f60718293a4b5c6d7e8f9',
  isRead: false,
  createdAt: '2026-11-20T16:21:47.900Z',
};

/** Ada's consent: a STOP, a START, then an opt-out by email recorded through POST /consent. */
const stopReply = {
  status: 'opted_out',
  source: 'sms_keyword',
  note: 'Replied STOP',
  evidence: null,
  at: '2026-11-20T16:25:03.117Z',
};
const startReply = {
  status: 'opted_in',
  source: 'sms_keyword',
  note: 'Replied START',
  evidence: null,
  at: '2026-11-20T18:40:12.004Z',
};
const emailEvidence = {
  statement: 'Please stop texting me.',
  where: 'support@example.com',
  collectedAt: '2026-11-21T10:02:00.000Z',
  reference: '<CAF3x9q@mail.example.com>',
};
const optOutByEmail = {
  status: 'opted_out',
  source: 'email',
  note: 'Opted out by email',
  evidence: emailEvidence,
  at: emailEvidence.collectedAt,
};
const adaConsent = {
  phoneNumber: ADA,
  status: 'opted_out',
  source: 'email',
  note: 'Opted out by email',
  evidence: emailEvidence,
  updatedAt: emailEvidence.collectedAt,
};

type OperationExamples = {
  /** Request body examples, by name. */
  request?: Record<string, { summary: string; value: unknown }>;
  /** Success body examples, by status. */
  responses: Record<number, { summary: string; value: unknown }>;
};

export const OPERATION_EXAMPLES: Record<RouteId, OperationExamples> = {
  getOpenApi: { responses: {} },
  getApiReference: { responses: {} },
  getMe: {
    responses: {
      200: {
        summary: 'A key holding all five scopes',
        value: {
          tenant: { id: TENANT_ID, name: 'Acme Dental', slug: 'acme-dental', plan: 'pro' },
          apiKey: {
            id: '0192f1a1-0c2d-7e3f-8a4b-5c6d7e8f9a0b',
            name: 'CRM sync',
            prefix: 'cct_3kP9',
            expiresAt: null,
            createdAt: '2026-11-01T10:00:00.000Z',
          },
          permissions: ['calls.view.team', 'contacts.view', 'contacts.manage', 'sms.view', 'sms.send'],
          rateLimit: { requestsPerMinute: 120 },
          quietHours: { mode: 'refuse', appliesTo: 'marketing', window: { start: '09:00', end: '20:00' } },
        },
      },
    },
  },
  listCalls: { responses: { 200: { summary: 'The last page of calls', value: { calls: [call], nextCursor: null } } } },
  getCall: { responses: { 200: { summary: 'A completed inbound call', value: { call } } } },
  listContacts: {
    responses: {
      200: {
        summary: 'A page of the feed of changes with more to come (`updatedSince`)',
        value: {
          contacts: [contact],
          nextCursor: `0193a4b2-7c1e-7a3f-9b2d-4e5f6a7b8c9d.1763913000000`,
          nextUpdatedSince: '2026-11-23T15:50:00.000Z',
        },
      },
    },
  },
  upsertContacts: {
    request: {
      crm: {
        summary: 'Records of a CRM, each by its own id (the third repeats a number)',
        value: {
          contacts: [
            {
              displayName: 'Ada Lovelace',
              phoneNumber: ADA,
              company: 'Analytical Engines Ltd',
              externalId: 'hs-4829301',
              customFields: { lifecycleStage: 'customer' },
            },
            { displayName: 'Charles Babbage', phoneNumber: '+14155550101', externalId: 'hs-4829302' },
            { displayName: 'Ada L.', phoneNumber: ADA, externalId: 'hs-4829377' },
          ],
        },
      },
    },
    responses: {
      200: {
        summary: 'One answer per item, in request order',
        value: {
          results: [
            { index: 0, status: 'updated', contactId: CONTACT_ID, externalId: 'hs-4829301', error: null, code: null },
            {
              index: 1,
              status: 'created',
              contactId: '0193a4d2-5e6f-7a8b-9c0d-1e2f3a4b5c6d',
              externalId: 'hs-4829302',
              error: null,
              code: null,
            },
            {
              index: 2,
              status: 'invalid',
              contactId: null,
              externalId: 'hs-4829377',
              error: 'contacts[2].phoneNumber: repeats contacts[0] (a batch names each number once)',
              code: 'validation_failed',
            },
          ],
        },
      },
    },
  },
  deleteContacts: {
    request: {
      cleanup: {
        summary: 'Records a CRM removed, by id and by its own id (the third names no contact)',
        value: {
          contacts: [
            { id: CONTACT_ID },
            { externalId: 'hs-4829302' },
            { externalId: 'hs-0000000' },
            { id: CONTACT_ID, externalId: 'hs-4829301' },
          ],
        },
      },
    },
    responses: {
      200: {
        summary: 'One answer per item, in request order',
        value: {
          results: [
            { index: 0, status: 'deleted', contactId: CONTACT_ID, externalId: null, error: null, code: null },
            {
              index: 1,
              status: 'deleted',
              contactId: '0193a4d2-5e6f-7a8b-9c0d-1e2f3a4b5c6d',
              externalId: 'hs-4829302',
              error: null,
              code: null,
            },
            {
              index: 2,
              status: 'not_found',
              contactId: null,
              externalId: 'hs-0000000',
              error: 'contacts[2].externalId: no contact holds this external id',
              code: 'not_found',
            },
            {
              index: 3,
              status: 'invalid',
              contactId: null,
              externalId: null,
              error: 'contacts[3].externalId: cannot be combined with id',
              code: 'validation_failed',
            },
          ],
        },
      },
    },
  },
  createContact: {
    request: {
      named: {
        summary: 'A new named contact',
        value: {
          displayName: 'Ada Lovelace',
          phoneNumber: ADA,
          company: 'Analytical Engines Ltd',
          tag: 'customer',
          notes: 'Prefers texts before 6 pm',
          externalId: contact.externalId,
          customFields: contact.customFields,
        },
      },
    },
    responses: {
      201: { summary: 'Created', value: { contact, adopted: false } },
      200: {
        summary: 'The auto-created contact of this number, adopted and named',
        value: { contact: adoptedContact, adopted: true },
      },
    },
  },
  getContact: { responses: { 200: { summary: 'A named contact', value: { contact } } } },
  updateContact: {
    request: { retag: { summary: 'Change the tag, clear the notes', value: { tag: 'vip', notes: null } } },
    responses: {
      200: {
        summary: 'The contact as it now stands',
        value: { contact: { ...contact, tag: 'vip', notes: null, updatedAt: '2026-11-21T08:00:00.000Z', version: 2 } },
      },
    },
  },
  deleteContact: { responses: {} },
  listThreads: {
    responses: {
      200: {
        summary: 'One conversation, the only page',
        value: {
          threads: [
            {
              counterpartNumber: ADA,
              lastMessage: inbound.body,
              lastDirection: 'inbound',
              lastStatus: 'received',
              lastAt: inbound.createdAt,
              messageCount: 2,
              hasUnread: true,
            },
          ],
          nextCursor: null,
        },
      },
    },
  },
  sendMessage: {
    request: {
      text: { summary: 'A text to one number', value: { to: ADA, body: outbound.body } },
      scheduled: {
        summary: 'A text sent later',
        value: { to: ADA, body: scheduled.body, sendAt: '2026-11-21T16:00:00+01:00', category: 'transactional' },
      },
    },
    responses: { 201: { summary: 'Charged and with the carrier; follow its status', value: { message: outbound } } },
  },
  rescheduleMessage: {
    request: { later: { summary: 'An hour later', value: { sendAt: '2026-11-21T17:00:00+01:00' } } },
    responses: {
      200: {
        summary: 'The text at its new time',
        value: { message: { ...scheduled, sendAt: '2026-11-21T16:00:00.000Z' } },
      },
    },
  },
  cancelMessage: {
    responses: {
      200: {
        summary: 'Canceled and refunded; it is never sent',
        value: { message: { ...scheduled, status: 'canceled', cancelReason: 'api' } },
      },
    },
  },
  getConsent: {
    responses: {
      200: {
        summary: 'Opted out by email after a STOP and a START',
        value: { consent: { ...adaConsent, history: [optOutByEmail, startReply, stopReply] } },
      },
    },
  },
  recordConsent: {
    request: {
      optOut: {
        summary: 'An opt-out received by email',
        value: {
          phoneNumber: ADA,
          status: 'opted_out',
          source: 'email',
          evidence: {
            statement: 'Please stop texting me.',
            where: 'support@example.com',
            collectedAt: '2026-11-21T10:02:00Z',
            reference: '<CAF3x9q@mail.example.com>',
          },
        },
      },
      optIn: {
        summary: 'An opt-in through a web form',
        value: {
          phoneNumber: ADA,
          status: 'opted_in',
          source: 'web_form',
          evidence: {
            statement: 'I agree to receive appointment reminders by text from Analytical Engines. Reply STOP to end.',
            where: 'https://example.com/reminders',
            collectedAt: '2026-11-21T10:30:00+01:00',
          },
        },
      },
    },
    responses: {
      200: {
        summary: 'The number now opted out; its scheduled texts were canceled',
        value: { consent: { ...adaConsent, history: [optOutByEmail, startReply, stopReply] } },
      },
    },
  },
  listMessages: {
    responses: {
      200: {
        summary: 'A conversation, newest first',
        value: { messages: [inbound, { ...outbound, status: 'delivered' }], nextCursor: null },
      },
    },
  },
};

/** An event body; `request` null (the carrier's or the system's change) unless an example names one. */
const event = (type: string, id: string, createdAt: string, sequence: number, data: unknown) => ({
  id,
  type,
  createdAt,
  sequence,
  data,
  request: null as { id: string; idempotencyKey: string | null } | null,
});

/** The request of the directory's events: a CRM's PATCH, with its Idempotency-Key. */
const crmRequest = { id: '8d7c6b5a-4f3e-4d2c-9b1a-0f9e8d7c6b5a', idempotencyKey: 'crm-sync-4829301-7' };

/** A second text to Ada, which her carrier could not deliver. */
const undelivered = {
  ...outbound,
  id: '0193a4c1-2e3f-7a4b-8c5d-6e7f8a9b0c1d',
  body: 'Your table is ready.',
  status: 'failed',
  messageSid: 'SM6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d',
  createdAt: '2026-11-20T16:16:30.100Z',
};

/** One body per event type, as the service posts it. */
export const WEBHOOK_EXAMPLES: Record<WebhookEventType | 'webhook.test', unknown> = {
  'call.completed': event('call.completed', '0193a4b6-2b3c-7d4e-9f50-617283940a1b', call.endedAt, 6, { call }),
  'voicemail.received': event(
    'voicemail.received',
    '0193a4b7-3c4d-7e5f-8a60-718293a4b5c6',
    '2026-11-20T16:40:12.000Z',
    4,
    {
      voicemail: {
        id: '0193a4b7-1a2b-7c3d-8e4f-5a6b7c8d9e0f',
        callId: '0193a4b6-9f8e-7d6c-8b5a-4f3e2d1c0b9a',
        fromNumber: ADA,
        toNumber: ORG_NUMBER,
        durationSec: 21,
        transcript: 'Hi, it is Ada. Please call me back about Friday.',
        createdAt: '2026-11-20T16:40:12.000Z',
      },
    },
  ),
  'sms.received': event('sms.received', '0193a4c3-aa01-7b02-8c03-d04e05f06a07', inbound.createdAt, 1, {
    message: inbound,
  }),
  'message.delivered': event(
    'message.delivered',
    '0193a4c0-4e21-8a3b-9c4d-5e6f7a8b9c0d',
    '2026-11-20T16:15:03.412Z',
    4,
    {
      messageId: outbound.id,
      counterpartNumber: ADA,
      carrierReportedAt: '2026-11-20T16:15:03.409Z',
      status: 'delivered',
      message: { ...outbound, status: 'delivered' },
    },
  ),
  'message.failed': event('message.failed', '0193a4c1-5f32-8b4c-8d5e-6f7a8b9c0d1e', '2026-11-20T16:16:41.733Z', 4, {
    messageId: undelivered.id,
    counterpartNumber: ADA,
    carrierReportedAt: '2026-11-20T16:16:41.730Z',
    status: 'failed',
    reason: 'carrier_failed',
    carrierErrorCode: 30003,
    carrierErrorMessage: 'Unreachable destination handset',
    refunded: true,
    refundedCents: 1,
    message: undelivered,
  }),
  'message.canceled': event('message.canceled', '0193a4c2-0b1c-7d2e-8f3a-4b5c6d7e8f90', '2026-11-20T18:02:10.120Z', 2, {
    messageId: scheduled.id,
    counterpartNumber: ADA,
    status: 'canceled',
    reason: 'opted_out',
    refundedCents: 1,
    message: { ...scheduled, status: 'canceled', cancelReason: 'opted_out' },
  }),
  'contact.created': {
    ...event('contact.created', '0193a4b2-7c1e-7a3f-9b2d-4e5f6a7b8c9e', contact.createdAt, 1, { contact }),
    request: { id: '5e4d3c2b-1a09-4f8e-9d7c-6b5a4f3e2d1c', idempotencyKey: null },
  },
  'contact.updated': {
    ...event('contact.updated', '0193a9d8-1b2c-7d3e-8f40-5a6b7c8d9e0f', '2026-11-21T08:00:00.000Z', 3, {
      contact: { ...contact, tag: 'vip', notes: null, updatedAt: '2026-11-21T08:00:00.000Z', version: 3 },
      previousAttributes: { tag: 'customer', notes: 'Prefers texts before 6 pm' },
    }),
    request: crmRequest,
  },
  'contact.deleted': {
    ...event('contact.deleted', '0193aa02-4c5d-7e6f-8a70-8b9c0d1e2f3a', '2026-11-21T09:30:00.000Z', 4, {
      contact: {
        id: CONTACT_ID,
        deletedAt: '2026-11-21T09:30:00.000Z',
        externalId: contact.externalId,
        phoneNumber: ADA,
        version: 4,
      },
    }),
    request: { id: '2b1a0f9e-8d7c-4b6a-8f4e-3d2c1b0a9f8e', idempotencyKey: null },
  },
  'consent.changed': {
    ...event('consent.changed', '0193a4c4-3b2a-7c1d-8e0f-1a2b3c4d5e6f', '2026-11-20T16:25:03.118Z', 1, {
      consent: {
        number: ADA,
        status: 'opted_out',
        source: 'sms_keyword',
        at: '2026-11-20T16:25:03.117Z',
        note: 'Replied STOP',
      },
      previousStatus: 'unknown',
      contactId: CONTACT_ID,
      externalId: contact.externalId,
      version: 2,
    }),
    request: null,
  },
  'webhook.test': event('webhook.test', '0193a4d0-0001-7002-8003-000400050006', '2026-11-20T17:00:00.000Z', 0, {
    endpointId: '0193a4cf-1111-7222-8333-444455556666',
  }),
};
