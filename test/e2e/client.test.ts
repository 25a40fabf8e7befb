import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  deliveryId,
  eventResource,
  Webhook,
  WebhookVerificationError,
  type operations,
} from '../../clients/typescript/src';
import { REPO_ROOT } from '../support/local-runtime';
import { updateDeliveryExample, updateEventExamples, updateExamples } from '../support/api-examples';
import { connectClient, type RecordingClient } from './support/client';
import { unknownId, useLocalRuntime } from './support/e2e';
import { receiveTexts } from './support/texts';
import { runPythonSnippet, runShellSnippet, runTypeScriptSnippet, type SignedDelivery } from './support/doc-snippets';
import { pollUntil } from './support/poll';
import { startReceiver, type Received, type Receiver } from './support/receiver';

/**
 * Every operation of the API through the typed client package (clients/typescript), as an
 * integrator would call it. Each response is also checked against the served OpenAPI document, so
 * a drift between the document (and the types generated from it) and the service fails here. The
 * exchanges become the examples of docs/api.md (`npm run docs:examples`).
 */
const REFUSED = '+14155550133';
// The loopback carrier refuses one number, as Twilio refuses an invalid one; it delivers the others about two seconds
// after the send.
const e2e = useLocalRuntime({ args: ['--allow-http-webhooks'], env: { LOOPBACK_FAIL_TO: REFUSED } });

const DEMO_NUMBER = '+15005550006';
const CALLER = '+14155550111';
const OPTED_OUT = '+14155550122';
const ADA = '+14155550100';

/** A page size as the document types `limit` (its query value is the same whichever way that is). */
type PageSize = NonNullable<NonNullable<operations['listContacts']['parameters']['query']>['limit']>;
const pageSize = (size: number) => String(size) as unknown as PageSize;

let api: RecordingClient;
let readOnly: RecordingClient;
let pastDue: RecordingClient;
let unknownKey: RecordingClient;
let adaId: string;
let receiver: Receiver;
/** The webhook.test delivery the runtime signed and posted to the receiver, and the endpoint's secret. */
let delivery: Received;
let secret: string;
/** The message.delivered and message.failed deliveries of the texts sent below (docs/api.md shows them). */
let textOutcomes: Received[] = [];
/** The request the carrier refused at once, as the client sent it: its message.failed names it. */
let refusedSend: { requestId: string | null; idempotencyKey: string } | undefined;

/** Seven operator commands, at most three in a row: each is a process of its own, slow on a busy machine. */
const SETUP_TIMEOUT_MS = 240_000;

beforeAll(async () => {
  const admin = e2e.runtime.admin;
  receiver = await startReceiver();
  const webhookEndpoint = async () => {
    await admin('tenant', 'update', e2e.demoTenantId, '--approve-host', '127.0.0.1');
    const added = await admin(
      'webhook',
      'add',
      '--tenant',
      e2e.demoTenantId,
      '--url',
      receiver.url('/hooks'),
      '--events',
      'sms.received,message.delivered,message.failed,contact.created,contact.updated,contact.deleted,consent.changed',
    );
    await admin('webhook', 'test', added.endpoint.id);
    return added;
  };
  const pastDueOrgKey = async () => {
    const { tenant } = await admin(
      'tenant',
      'create',
      '--name',
      'Past Due Org',
      '--sms-number',
      '+15005550190',
      '--billing-status',
      'past_due',
    );
    return admin('key', 'create', '--tenant', tenant.id);
  };
  const [call, , contactsViewKey, pastDueKey, endpoint] = await Promise.all([
    admin(
      'simulate',
      'call',
      '--tenant',
      e2e.demoTenantId,
      '--direction',
      'inbound',
      '--from',
      CALLER,
      '--to',
      DEMO_NUMBER,
      '--duration',
      '42',
    ),
    receiveTexts(e2e.runtime.info, e2e.demoTenantId, [
      { from: OPTED_OUT, to: DEMO_NUMBER, body: 'STOP', receivedAt: new Date() },
    ]),
    admin('key', 'create', '--tenant', e2e.demoTenantId, '--name', 'read-only', '--scopes', 'contacts.view'),
    pastDueOrgKey(),
    webhookEndpoint(),
  ]);
  expect(call.call.fromNumber).toBe(CALLER);
  secret = endpoint.secret;
  const baseUrl = e2e.runtime.baseUrl;
  [api, readOnly, pastDue, unknownKey] = await Promise.all([
    connectClient(baseUrl, e2e.runtime.demoKey),
    connectClient(baseUrl, contactsViewKey.key, '$READ_ONLY_KEY'),
    connectClient(baseUrl, pastDueKey.key, '$PAST_DUE_KEY'),
    connectClient(baseUrl, `cct_${'x'.repeat(43)}`, 'cct_revoked_or_unknown'),
  ]);
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  try {
    if (!process.env.UPDATE_API_EXAMPLES || !api || !delivery) return;
    const page = join(REPO_ROOT, 'docs', 'api.md');
    const exchanges = [api, readOnly, pastDue, unknownKey].flatMap((recording) => recording.exchanges);
    const directoryEventsOf = () =>
      receiver
        .received()
        .filter((r) => r.path === '/hooks' && /^(contact|consent)\./.test(String(r.headers['x-service-event'])));
    const types = ['contact.created', 'contact.updated', 'contact.deleted', 'consent.changed'];
    const directoryEvents = await pollUntil(
      'an event of every directory type',
      directoryEventsOf,
      (found) => types.every((type) => found.some((r) => r.headers['x-service-event'] === type)),
      30_000,
    );
    const withEvents = updateEventExamples(
      updateExamples(readFileSync(page, 'utf8'), exchanges),
      [...textOutcomes, ...directoryEvents].map((r) => r.body),
    );
    writeFileSync(page, updateDeliveryExample(withEvents, delivery));
  } finally {
    await receiver?.close();
  }
}, 60_000);

describe('the typed client, operation by operation', () => {
  it('getOpenApi and getMe: the document and the key', async () => {
    const document = await api.client.GET('/openapi.json');
    const me = await api.client.GET('/me');

    expect(document.data).toMatchObject({ openapi: '3.1.0' });
    expect(me.data?.tenant?.id).toBe(e2e.demoTenantId);
    expect(me.data?.permissions).toEqual(
      expect.arrayContaining(['calls.view.team', 'contacts.view', 'contacts.manage', 'sms.view', 'sms.send']),
    );
  });

  it('getApiReference: the reference page, as HTML', async () => {
    const page = await api.client.GET('/docs', { parseAs: 'text' });

    expect(page.response.status).toBe(200);
    expect(page.response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.data).toContain('<html');
  });

  it('createContact: creates, adopts the auto-created contact of a caller, refuses a taken number and a bad field', async () => {
    const body = { displayName: 'Ada Lovelace', phoneNumber: ADA, company: 'Analytical Engines', tag: 'vip' };
    const created = await api.client.POST('/contacts', {
      body,
      params: { header: { 'Idempotency-Key': 'create-ada-0001' } },
    });
    const adopted = await api.client.POST('/contacts', { body: { displayName: 'Grace Hopper', phoneNumber: CALLER } });
    const taken = await api.client.POST('/contacts', { body: { displayName: 'Ada again', phoneNumber: ADA } });
    const invalid = await api.client.POST('/contacts', { body: { displayName: 'Nobody', phoneNumber: 'call me' } });

    expect(created.response.status).toBe(201);
    expect(created.data).toMatchObject({
      adopted: false,
      contact: { displayName: 'Ada Lovelace', normalizedNumber: ADA, source: 'manual' },
    });
    expect(adopted.response.status).toBe(200);
    expect(adopted.data).toMatchObject({
      adopted: true,
      contact: { displayName: 'Grace Hopper', source: 'auto_inbound', isAutoCreated: false },
    });
    adaId = created.data!.contact.id;
    expect(taken.error).toMatchObject({ code: 'contact_conflict', contactId: adaId });
    expect(invalid.response.status).toBe(400);
    expect(invalid.error?.error).toContain('body.phoneNumber');
  });

  it('listContacts: search, and pages of one named contact with their cursor', async () => {
    const search = await api.client.GET('/contacts', { params: { query: { search: 'ada' } } });
    const first = await api.client.GET('/contacts', {
      params: { query: { limit: pageSize(1), includeAutoCreated: 'false' } },
    });
    const second = await api.client.GET('/contacts', {
      params: { query: { limit: pageSize(1), includeAutoCreated: 'false', cursor: first.data!.nextCursor! } },
    });

    expect(search.data?.contacts.map((contact) => contact.id)).toEqual([adaId]);
    expect(first.data?.contacts.map((contact) => contact.displayName)).toEqual(['Ada Lovelace']);
    expect(second.data?.contacts.map((contact) => contact.displayName)).toEqual(['Grace Hopper']);
  });

  it('getContact, updateContact and deleteContact, then not_found', async () => {
    const path = { id: adaId };
    const read = await api.client.GET('/contacts/{id}', { params: { path } });
    const updated = await api.client.PATCH('/contacts/{id}', {
      params: { path },
      body: { notes: 'Prefers texts after 5 pm' },
    });
    const deleted = await api.client.DELETE('/contacts/{id}', { params: { path } });
    const gone = await api.client.GET('/contacts/{id}', { params: { path } });

    expect(read.data?.contact).toMatchObject({ id: adaId, consentStatus: 'unknown' });
    expect(updated.data?.contact).toMatchObject({
      id: adaId,
      notes: 'Prefers texts after 5 pm',
      company: 'Analytical Engines',
    });
    expect(deleted.response.status).toBe(204);
    expect(gone.response.status).toBe(404);
    expect(gone.error?.code).toBe('not_found');
  });

  it('upsertContacts, the feed of changes and a contact by external id; the client imports a list', async () => {
    const since = new Date(Date.now() - 1).toISOString();
    const batch = await api.client.POST('/contacts/batch', {
      body: {
        contacts: [
          {
            displayName: 'Charles Babbage',
            phoneNumber: '+14155550170',
            externalId: 'hs-1001',
            customFields: { lifecycleStage: 'customer' },
          },
          { displayName: 'Mary Somerville', phoneNumber: '+14155550171', externalId: 'hs-1002' },
          { displayName: 'Charles B.', phoneNumber: '+14155550170', externalId: 'hs-1003' },
        ],
      },
      params: { header: { 'Idempotency-Key': 'crm-sync-2026-11-30' } },
    });
    const feed = await api.client.GET('/contacts', { params: { query: { updatedSince: since } } });
    const one = await api.client.GET('/contacts', { params: { query: { externalId: 'hs-1001' } } });
    const imported = await api.client.contacts.import([
      { displayName: 'Ada Byron', phoneNumber: '+14155550172', externalId: 'hs-1004' },
    ]);
    await receiveTexts(e2e.runtime.info, e2e.demoTenantId, [
      { from: '+14155550171', to: DEMO_NUMBER, body: 'STOP', receivedAt: new Date() },
    ]);

    expect(batch.data?.results.map((result) => result.status)).toEqual(['created', 'created', 'invalid']);
    // Written by one request at one millisecond: the feed has them in no particular order.
    expect(feed.data?.contacts.map((contact) => contact.externalId).sort()).toEqual(['hs-1001', 'hs-1002']);
    expect(one.data?.contacts).toEqual(feed.data!.contacts.filter((contact) => contact.externalId === 'hs-1001'));
    expect(imported).toMatchObject({
      counts: { created: 1 },
      requests: 1,
      results: [{ index: 0, status: 'created', externalId: 'hs-1004' }],
    });
  });

  it('deleteContacts: by id and by external id, each answered in order', async () => {
    const charles = await api.client.GET('/contacts', { params: { query: { externalId: 'hs-1001' } } });
    const deleted = await api.client.POST('/contacts/batch/delete', {
      body: { contacts: [{ id: charles.data!.contacts[0].id }, { externalId: 'hs-1004' }, { externalId: 'hs-1099' }] },
      params: { header: { 'Idempotency-Key': 'crm-cleanup-2026-11-30' } },
    });

    expect(deleted.data?.results.map((result) => [result.status, result.code])).toEqual([
      ['deleted', null],
      ['deleted', null],
      ['not_found', 'not_found'],
    ]);
  });

  it('listCalls and getCall', async () => {
    const list = await api.client.GET('/calls', { params: { query: { direction: 'inbound', limit: pageSize(10) } } });
    const call = list.data!.calls[0];
    const one = await api.client.GET('/calls/{id}', { params: { path: { id: call.id } } });
    const none = await api.client.GET('/calls/{id}', { params: { path: { id: unknownId() } } });

    expect(list.data?.calls).toHaveLength(1);
    expect(call).toMatchObject({ fromNumber: CALLER, toNumber: DEMO_NUMBER, direction: 'inbound', durationSec: 42 });
    expect(one.data?.call).toEqual(call);
    expect(none.error?.code).toBe('not_found');
  });

  it('sendMessage, listThreads and listMessages; an opted-out number and a past-due organization are refused', async () => {
    const sent = await api.client.POST('/messages', {
      body: { to: ADA, body: 'Your table for two is booked for 7 pm.' },
      params: { header: { 'Idempotency-Key': 'booking-2931-confirmation' } },
    });
    const optedOut = await api.client.POST('/messages', { body: { to: OPTED_OUT, body: 'Hello again' } });
    const refused = await api.client.POST('/messages', {
      body: { to: REFUSED, body: 'Your table is ready' },
      params: { header: { 'Idempotency-Key': 'booking-4711-ready' } },
    });
    refusedSend = { requestId: refused.response.headers.get('x-amzn-requestid'), idempotencyKey: 'booking-4711-ready' };
    const unpaid = await pastDue.client.POST('/messages', { body: { to: ADA, body: 'Hello' } });
    const threads = await api.client.GET('/messages');
    const conversation = await api.client.GET('/messages/{counterpart}', { params: { path: { counterpart: ADA } } });

    expect(sent.response.status).toBe(201);
    expect(sent.data?.message).toMatchObject({
      direction: 'outbound',
      toNumber: ADA,
      fromNumber: DEMO_NUMBER,
      agentId: null,
    });
    expect(optedOut.error?.code).toBe('recipient_opted_out');
    expect(refused.error).toMatchObject({ code: 'carrier_rejected', carrierCode: 21211 });
    expect(unpaid.response.status).toBe(402);
    expect(unpaid.error?.code).toBe('billing_blocked');
    expect(threads.data?.threads.map((thread) => thread.counterpartNumber)).toEqual(
      expect.arrayContaining([ADA, OPTED_OUT]),
    );
    expect(conversation.data?.messages.map((message) => message.id)).toEqual([sent.data!.message.id]);
  });

  it('schedules a text, moves it and cancels it (its cost back), and answers 409 to a second cancel', async () => {
    const inAnHour = new Date(Date.now() + 3_600_000).toISOString();
    const inTwoHours = new Date(Date.now() + 7_200_000).toISOString();
    const scheduled = await api.client.POST('/messages', {
      body: { to: ADA, body: 'Reminder: your table for two is at 7 pm.', sendAt: inAnHour },
    });
    const id = { params: { path: { counterpart: scheduled.data!.message.id } } };
    const moved = await api.client.PATCH('/messages/{counterpart}', { ...id, body: { sendAt: inTwoHours } });
    const canceled = await api.client.POST('/messages/{counterpart}/cancel', id);
    const again = await api.client.POST('/messages/{counterpart}/cancel', id);

    expect(scheduled.data?.message).toMatchObject({ status: 'scheduled', sendAt: inAnHour });
    expect(moved.data?.message).toMatchObject({ status: 'scheduled', sendAt: inTwoHours });
    expect(canceled.data?.message).toMatchObject({ status: 'canceled', cancelReason: 'api' });
    expect(again.response.status).toBe(409);
    expect(again.error?.code).toBe('not_scheduled');
  });

  it('recordConsent and getConsent: an opt-out by email refuses the next text, an opt-in needs evidence and reopens sending', async () => {
    const number = '+14155550144';
    const optedOut = await api.client.POST('/consent', {
      body: { phoneNumber: number, status: 'opted_out', source: 'email' },
    });
    const refused = await api.client.POST('/messages', { body: { to: number, body: 'Our spring offers' } });
    const noEvidence = await api.client.POST('/consent', {
      body: { phoneNumber: number, status: 'opted_in', source: 'web_form' },
    });
    const optedIn = await api.client.POST('/consent', {
      body: {
        phoneNumber: number,
        status: 'opted_in',
        source: 'web_form',
        evidence: {
          statement: 'I agree to receive offers by text from the restaurant. Reply STOP to end.',
          where: 'https://example.com/newsletter',
          collectedAt: new Date(Date.now() + 1000).toISOString(),
          reference: 'form-submission-8812',
        },
      },
      params: { header: { 'Idempotency-Key': 'newsletter-8812' } },
    });
    const sent = await api.client.POST('/messages', { body: { to: number, body: 'Welcome to our offers' } });
    const shown = await api.client.GET('/consent', { params: { query: { phoneNumber: number } } });

    expect(optedOut.data?.consent).toMatchObject({ status: 'opted_out', source: 'email' });
    expect(refused.error?.code).toBe('recipient_opted_out');
    expect(noEvidence.response.status).toBe(400);
    expect(noEvidence.error?.error).toMatch(/^body\.evidence: /);
    expect(optedIn.data?.consent).toMatchObject({ status: 'opted_in', source: 'web_form' });
    expect(sent.response.status).toBe(201);
    expect(shown.data?.consent.history.map((change) => change.source)).toEqual(['web_form', 'email']);
  });

  it('answers 403 insufficient_scope to a key without the scope and 401 to an unknown key', async () => {
    const forbidden = await readOnly.client.POST('/contacts', {
      body: { displayName: 'Nobody', phoneNumber: '+14155550199' },
    });
    const unauthorized = await unknownKey.client.GET('/me');

    expect(forbidden.response.status).toBe(403);
    expect(forbidden.error?.code).toBe('insufficient_scope');
    expect(unauthorized.response.status).toBe(401);
    expect(unauthorized.response.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('covered every operation of the served document', async () => {
    const document = (await api.client.GET('/openapi.json')).data as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    const operations = Object.values(document.paths).flatMap((path) =>
      Object.values(path).map((operation) => operation.operationId),
    );

    expect(new Set(api.exchanges.map((exchange) => exchange.operationId))).toEqual(new Set(operations));
  });
});

describe('webhook verification: the client package and the code of docs/api.md on a real signed delivery', () => {
  const header = (name: string) => String(delivery.headers[name.toLowerCase()]);
  const signed = (): SignedDelivery => ({
    timestamp: header('X-Service-Timestamp'),
    signature: header('X-Service-Signature'),
    body: delivery.body,
    secret,
  });
  const tampered = (): SignedDelivery => ({ ...signed(), body: delivery.body.replace('webhook.test', 'webhook.tset') });

  beforeAll(async () => {
    const found = await pollUntil(
      'the webhook.test delivery',
      () => receiver.received().find((r) => r.path === '/hooks' && r.headers['x-service-event'] === 'webhook.test'),
      Boolean,
      60_000,
    );
    delivery = found!;
  }, 90_000);

  it('Webhook.verify types the outcome of each text sent above: one message.delivered and one message.failed, about that text', async () => {
    const outcomes = () =>
      receiver
        .received()
        .filter((r) => r.path === '/hooks' && String(r.headers['x-service-event']).startsWith('message.'));

    textOutcomes = await pollUntil('the two text outcomes', outcomes, (found) => found.length >= 2, 15_000);
    const events = textOutcomes.map((r) => new Webhook(secret).verify(r.body, r.headers));

    expect(events.map((event) => event.type).sort()).toEqual(['message.delivered', 'message.failed']);
    for (const event of events) {
      if (event.type !== 'message.delivered' && event.type !== 'message.failed')
        throw new Error(`unexpected ${event.type}`);
      expect(eventResource(event)).toEqual({ type: 'message', id: event.data.messageId });
      expect([ADA, REFUSED]).toContain(event.data.counterpartNumber);
      if (event.type === 'message.failed')
        expect(event.data).toMatchObject({ reason: 'carrier_rejected', carrierErrorCode: 21211, refunded: true });
    }
    // The refusal was the POST's own answer: its event names that request, with the Idempotency-Key the client sent;
    // the delivery was the carrier's callback, so it names none.
    const failed = events.find((event) => event.type === 'message.failed')!;
    expect(refusedSend?.requestId).toEqual(expect.any(String));
    expect(failed.request).toEqual({ id: refusedSend!.requestId, idempotencyKey: 'booking-4711-ready' });
    expect(events.find((event) => event.type === 'message.delivered')!.request).toBeNull();
  });

  it('Webhook.verify returns the typed event from the Standard Webhooks headers and from the service headers alone', () => {
    const serviceOnly = Object.fromEntries(
      Object.entries(delivery.headers).filter(([name]) => !name.startsWith('webhook-')),
    );

    const event = new Webhook(secret).verify(delivery.body, delivery.headers);

    expect(event.type).toBe('webhook.test');
    expect(new Webhook(secret).verify(Buffer.from(delivery.body), serviceOnly)).toEqual(event);
    expect(deliveryId(delivery.headers)).toBe(header('X-Service-Delivery'));
    expect(() => new Webhook(secret).verify(tampered().body, delivery.headers)).toThrow(WebhookVerificationError);
  });

  it('the TypeScript snippet accepts the delivery and refuses it tampered or with another secret', () => {
    const results = runTypeScriptSnippet([signed(), tampered(), { ...signed(), secret: `${secret}x` }]);

    expect(results).toEqual([true, false, false]);
  });

  it('the Python snippet accepts the delivery and refuses it tampered (when python3 is installed)', () => {
    const results = runPythonSnippet([signed(), tampered()]);

    // No python3 on this machine: nothing to run the snippet with, and nothing else to prove.
    if (results !== undefined) expect(results).toEqual([true, false]);
  });

  it('the openssl snippet says valid for the delivery and invalid for it tampered', async () => {
    const variables = { TIMESTAMP: signed().timestamp, SIGNATURE: signed().signature, SIGNING_SECRET: secret };

    expect(await runShellSnippet('shell', delivery.body, variables)).toBe('valid');
    expect(await runShellSnippet('shell', tampered().body, variables)).toBe('invalid');
  });

  it('the curl snippet posts a delivery the client package verifies', async () => {
    const output = await runShellSnippet('curl', delivery.body, {
      URL: receiver.url('/manual'),
      SIGNING_SECRET: secret,
    });
    const manual = receiver.received().find((r) => r.path === '/manual')!;

    expect(output).toBe('204');
    expect(new Webhook(secret).verify(manual.body, manual.headers)).toEqual(JSON.parse(delivery.body));
  });
});
