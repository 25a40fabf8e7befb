import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { toItem as callToItem } from '../../lambdas/contexts/calls/calls';
import { fromItem as messageFromItem } from '../../lambdas/contexts/texting/messages';
import { fromItem as contactFromItem, toItem as toContactItem } from '../../lambdas/contexts/contacts/contact-rows';
import type { Item } from '../../lambdas/shared/table/dynamo';
import { changeRequestParts } from '../../lambdas/shared/table/row-types';
import { uuidv7 } from '../../lambdas/shared/ids';
import type { Call } from '../../lambdas/contexts/calls/schemas';
import { enqueueRequestOf } from '../../lambdas/contexts/webhooks/deliveries';
import { EVENT_SCHEMAS } from '../../lambdas/contexts/webhooks/event-schemas';
import { deriveEvent } from '../../lambdas/contexts/webhooks/events';
import { ROUTER_FILTER_PATTERNS } from '../../lambdas/contexts/webhooks/filter-criteria';
import type { StreamChange } from '../../lambdas/contexts/webhooks/stream-change';
import { fromLambdaRecord } from '../../lambdas/handlers/webhooks/stream-records';

const tenantId = uuidv7();
const at = Date.parse('2026-11-21T10:00:05Z');

const call = (status: string): Call => ({
  id: '0190a5b0-1111-7000-8000-000000000001',
  direction: 'inbound',
  fromNumber: '+14155550100',
  toNumber: '+14155559999',
  status,
  startedAt: '2026-11-21T09:58:00.000Z',
  answeredAt: '2026-11-21T09:58:04.000Z',
  endedAt: status === 'completed' ? '2026-11-21T10:00:04.000Z' : null,
  durationSec: status === 'completed' ? 120 : null,
  isInternal: false,
  agentId: null,
  contactId: '0190a5b0-2222-7000-8000-000000000002',
});

const message = (direction: 'inbound' | 'outbound'): Item => ({
  pk: `T#${tenantId}`,
  sk: 'MSG#x',
  type: 'message',
  id: '0190a5b0-3333-7000-8000-000000000003',
  tenantId,
  direction,
  fromNumber: '+14155550100',
  toNumber: '+14155559999',
  counterpartNumber: '+14155550100',
  body: 'Running late',
  status: direction === 'inbound' ? 'received' : 'queued',
  messageSid: 'SM123',
  agentId: null,
  isRead: false,
  createdAt: '2026-11-21T10:00:05.000Z',
});

const voicemail = (recordingReady: boolean, transcript: string | null = null): Item => ({
  pk: `T#${tenantId}`,
  sk: 'VOICEMAIL#x',
  type: 'voicemail',
  id: '0190a5b0-4444-7000-8000-000000000004',
  tenantId,
  callId: null,
  fromNumber: '+14155550100',
  toNumber: '+14155559999',
  recordingReady,
  transcript,
  createdAt: '2026-11-21T10:00:00.000Z',
  durationSec: 17,
});

const change = (
  eventName: StreamChange['eventName'],
  newImage?: Item,
  oldImage?: Item,
  eventId = 'ev-1',
): StreamChange => ({
  eventId,
  eventName,
  approximateCreationMs: at,
  newImage,
  oldImage,
});

describe('call.completed', () => {
  it('is raised when a call is inserted already ended, with the API Call shape', () => {
    // Act
    const event = deriveEvent(change('INSERT', callToItem(tenantId, call('completed'))))!;

    // Assess
    expect(event).toMatchObject({ tenantId, type: 'call.completed', createdAt: '2026-11-21T10:00:05.000Z' });
    const body = JSON.parse(event.body);
    expect(body).toEqual({
      id: event.id,
      type: 'call.completed',
      createdAt: event.createdAt,
      sequence: 0,
      data: { call: call('completed') },
      request: null,
    });
    expect(EVENT_SCHEMAS['call.completed'].safeParse(body).success).toBe(true);
  });

  it.each(['failed', 'no-answer', 'busy', 'canceled'])('is raised on a change from ringing to %s', (status) => {
    const event = deriveEvent(
      change('MODIFY', callToItem(tenantId, call(status)), callToItem(tenantId, call('ringing'))),
    );

    expect(event?.type).toBe('call.completed');
  });

  it('is not raised for a non-terminal status, nor again for an edit of an ended call', () => {
    expect(deriveEvent(change('INSERT', callToItem(tenantId, call('ringing'))))).toBeUndefined();
    expect(
      deriveEvent(change('MODIFY', callToItem(tenantId, call('in-progress')), callToItem(tenantId, call('ringing')))),
    ).toBeUndefined();
    expect(
      deriveEvent(change('MODIFY', callToItem(tenantId, call('completed')), callToItem(tenantId, call('completed')))),
    ).toBeUndefined();
    expect(deriveEvent(change('REMOVE', undefined, callToItem(tenantId, call('completed'))))).toBeUndefined();
  });

  it('derives the same id and bytes from a replayed record, and another id from another record', () => {
    const item = callToItem(tenantId, call('completed'));

    const first = deriveEvent(change('INSERT', item));
    const replay = deriveEvent(change('INSERT', structuredClone(item)));
    const other = deriveEvent(change('INSERT', item, undefined, 'ev-2'));

    expect(replay).toEqual(first);
    expect(other!.id).not.toBe(first!.id);
    expect(first!.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('sms.received', () => {
  it('is raised when an inbound message row is inserted, with the Message shape', () => {
    const event = deriveEvent(change('INSERT', message('inbound')))!;

    const body = JSON.parse(event.body);
    expect(event.type).toBe('sms.received');
    expect(body.data.message).toMatchObject({
      id: message('inbound').id,
      body: 'Running late',
      direction: 'inbound',
      messageSid: 'SM123',
    });
    expect(body.data.message).not.toHaveProperty('pk');
    expect(EVENT_SCHEMAS['sms.received'].safeParse(body).success).toBe(true);
  });

  it('is not raised for outbound messages or status updates', () => {
    expect(deriveEvent(change('INSERT', message('outbound')))).toBeUndefined();
    expect(deriveEvent(change('MODIFY', { ...message('inbound'), isRead: true }, message('inbound')))).toBeUndefined();
  });
});

describe('message.delivered and message.failed', () => {
  /** An outbound text's row in `status`, as texting writes it; `facts` are what the final write adds. */
  const text = (status: string, facts: Item = {}): Item => ({
    ...message('outbound'),
    toNumber: '+14155550100',
    fromNumber: '+14155559999',
    status,
    costCents: 2,
    segments: 1,
    ...facts,
  });
  const reportedAt = Date.parse('2026-11-21T10:00:07.321Z');

  it('raises message.delivered once, on the change into delivered, with the message as the API shows it and when the carrier reported it', () => {
    // Act
    const event = deriveEvent(
      change(
        'MODIFY',
        text('delivered', { carrierReportedAt: reportedAt, changedAt: reportedAt + 4, sequence: 4 }),
        text('sent', { sequence: 3 }),
      ),
    )!;

    // Assess
    const body = JSON.parse(event.body);
    expect(event.type).toBe('message.delivered');
    expect(body).toMatchObject({ type: 'message.delivered', createdAt: '2026-11-21T10:00:07.325Z', sequence: 4 });
    expect(body.data).toEqual({
      messageId: message('outbound').id,
      counterpartNumber: '+14155550100',
      carrierReportedAt: '2026-11-21T10:00:07.321Z',
      status: 'delivered',
      message: { ...messageFromItem(text('delivered')) },
    });
    expect(body.data.message).not.toHaveProperty('costCents');
    expect(EVENT_SCHEMAS['message.delivered'].safeParse(body).success).toBe(true);
  });

  it('raises message.failed with the reason, the carrier code and words, and the refund', () => {
    // Prepare
    const failed = text('failed', {
      failureReason: 'carrier_failed',
      carrierCode: 30003,
      carrierMessage: 'Unreachable destination handset',
      carrierReportedAt: reportedAt,
      sequence: 3,
    });

    // Act
    const event = deriveEvent(change('MODIFY', failed, text('queued', { sequence: 2 })))!;

    // Assess
    const body = JSON.parse(event.body);
    expect(event.type).toBe('message.failed');
    expect(body.data).toMatchObject({
      status: 'failed',
      reason: 'carrier_failed',
      carrierErrorCode: 30003,
      carrierErrorMessage: 'Unreachable destination handset',
      carrierReportedAt: '2026-11-21T10:00:07.321Z',
      refunded: true,
      refundedCents: 2,
      message: { status: 'failed' },
    });
    expect(body.sequence).toBe(3);
    expect(EVENT_SCHEMAS['message.failed'].safeParse(body).success).toBe(true);
  });

  it('says when the carrier never reported (the sweep) and when nothing was charged', () => {
    // Prepare: the settlement sweep failed a text nobody reported; a row written before billing has no cost
    const swept = text('failed', { failureReason: 'carrier_outcome_unknown', costCents: undefined });

    // Act
    const body = JSON.parse(deriveEvent(change('MODIFY', swept, text('queued')))!.body);

    // Assess
    expect(body.data).toMatchObject({
      reason: 'carrier_outcome_unknown',
      carrierErrorCode: null,
      carrierErrorMessage: null,
      carrierReportedAt: null,
      refunded: false,
      refundedCents: 0,
    });
    expect(EVENT_SCHEMAS['message.failed'].safeParse(body).success).toBe(true);
  });

  it.each([
    ['a duplicate of the final write (delivered -> delivered)', text('delivered'), text('delivered')],
    ['a later edit of a failed text (a late sid)', text('failed', { messageSid: 'SMlate' }), text('failed')],
    ['a move that is not final (queued -> sent)', text('sent'), text('queued')],
    ['an inbound text', { ...message('inbound'), status: 'delivered' }, message('inbound')],
  ])('raises nothing for %s', (_name, newImage, oldImage) => {
    expect(deriveEvent(change('MODIFY', newImage, oldImage))).toBeUndefined();
  });

  it('raises nothing for the insert of an outbound text, even in a final status: a text is stored queued, its final status is a change of it', () => {
    expect(deriveEvent(change('INSERT', text('delivered')))).toBeUndefined();
    expect(deriveEvent(change('INSERT', text('failed', { failureReason: 'carrier_failed' })))).toBeUndefined();
  });

  it('reads the text from its attributes, never its key: a message under another key layout raises the same event', () => {
    // Prepare: the texting context may move messages to a partition of their own
    const moved = {
      ...text('delivered', { sequence: 4 }),
      pk: `T#${tenantId}#MSG#${message('outbound').id}`,
      sk: 'MESSAGE',
    };

    // Act
    const here = deriveEvent(change('MODIFY', text('delivered', { sequence: 4 }), text('sent')))!;
    const there = deriveEvent(change('MODIFY', moved, { ...text('sent'), pk: moved.pk, sk: moved.sk }))!;

    // Assess
    expect(there.body).toBe(here.body);
    expect(there.tenantId).toBe(tenantId);
  });
});

describe('sequence', () => {
  it("is the row's sequence number at the change, so the newer of two events about one resource has the higher number", () => {
    // Prepare: the row counted 1 at its insert, 2 for its sid, 3 for sent, 4 for delivered
    const received = deriveEvent(change('INSERT', { ...message('inbound'), sequence: 1 }))!;
    const delivered = deriveEvent(
      change(
        'MODIFY',
        { ...message('outbound'), status: 'delivered', sequence: 4 },
        { ...message('outbound'), status: 'sent', sequence: 3 },
      ),
    )!;

    // Assess
    expect(JSON.parse(received.body).sequence).toBe(1);
    expect(JSON.parse(delivered.body).sequence).toBe(4);
  });

  it('is 0 for a row written before sequence numbers existed', () => {
    expect(JSON.parse(deriveEvent(change('INSERT', message('inbound')))!.body).sequence).toBe(0);
  });
});

describe('voicemail.received', () => {
  it('is raised when the recording becomes ready, carrying the transcript when it is there', () => {
    const event = deriveEvent(change('MODIFY', voicemail(true, 'Call me back'), voicemail(false)))!;

    const body = JSON.parse(event.body);
    expect(event.type).toBe('voicemail.received');
    expect(body.data.voicemail).toEqual({
      id: voicemail(true).id,
      callId: null,
      fromNumber: '+14155550100',
      toNumber: '+14155559999',
      durationSec: 17,
      transcript: 'Call me back',
      createdAt: '2026-11-21T10:00:00.000Z',
    });
    expect(EVENT_SCHEMAS['voicemail.received'].safeParse(body).success).toBe(true);
  });

  it('is raised on an insert already ready, and not again when the transcript arrives later', () => {
    expect(deriveEvent(change('INSERT', voicemail(true)))?.type).toBe('voicemail.received');
    expect(deriveEvent(change('INSERT', voicemail(false)))).toBeUndefined();
    expect(deriveEvent(change('MODIFY', voicemail(true, 'late'), voicemail(true)))).toBeUndefined();
  });
});

describe('event time', () => {
  it('is the millisecond the row carries (changedAt), not the coarse stream time: two events of one second are ordered and distinct', () => {
    // Prepare: the stream gives both records the same approximate time, as it does within a second.
    const earlier = { ...message('inbound'), changedAt: at + 120 };
    const later = { ...message('inbound'), id: '0190a5b0-3333-7000-8000-000000000009', changedAt: at + 480 };

    // Act
    const first = deriveEvent(change('INSERT', earlier, undefined, 'ev-a'))!;
    const second = deriveEvent(change('INSERT', later, undefined, 'ev-b'))!;

    // Assess
    expect([first.createdAt, second.createdAt]).toEqual(['2026-11-21T10:00:05.120Z', '2026-11-21T10:00:05.480Z']);
    expect(first.id).not.toBe(second.id);
    expect(first.id < second.id).toBe(true);
    expect(JSON.parse(second.body).createdAt).toBe(second.createdAt);
  });

  it('falls back to the stream time for a row written before changedAt existed', () => {
    const event = deriveEvent(change('INSERT', message('inbound')))!;

    expect(event.createdAt).toBe(new Date(at).toISOString());
  });
});

describe('stream records', () => {
  it('turns a Lambda record (seconds, marshalled images) into a change', () => {
    const record: DynamoDBRecord = {
      eventID: 'abc123',
      eventName: 'INSERT',
      dynamodb: {
        ApproximateCreationDateTime: at / 1000,
        NewImage: marshall(message('inbound')) as never,
        SequenceNumber: '1',
      },
    };

    const result = fromLambdaRecord(record);

    expect(result).toEqual({
      eventId: 'abc123',
      eventName: 'INSERT',
      approximateCreationMs: at,
      newImage: message('inbound'),
      oldImage: undefined,
    });
    expect(fromLambdaRecord({ ...record, eventID: undefined })).toBeUndefined();
  });

  it('recognises an operator request to enqueue a delivery only when it appears', () => {
    const row = { type: 'webhookDelivery', tenantId, endpointId: 'ep', id: 'd1', cycle: 2, enqueueRequested: true };

    expect(enqueueRequestOf(change('MODIFY', row, { ...row, cycle: 1, enqueueRequested: undefined }))).toEqual({
      tenantId,
      id: 'd1',
    });
    expect(enqueueRequestOf(change('INSERT', { ...row, cycle: 1 }))).toEqual({ tenantId, id: 'd1' });
    // The sender recording an attempt while the flag is still set is not a new request.
    expect(enqueueRequestOf(change('MODIFY', { ...row, attempts: 1 }, row))).toBeUndefined();
    expect(enqueueRequestOf(change('MODIFY', { ...row, enqueueRequested: undefined }, row))).toBeUndefined();
  });
});

describe('contact.created, contact.updated and contact.deleted', () => {
  const contactId = '0190a5b0-5555-7000-8000-000000000005';
  /** A contact row as contacts.ts writes it, at sequence `sequence`, its own fields last written at `changedAt`. */
  const contactRow = (sequence: number, changedAt: number, fields: Item = {}): Item => ({
    ...toContactItem({
      id: contactId,
      tenantId,
      displayName: 'Ada',
      phoneNumber: '+14155550100',
      company: null,
      tag: null,
      notes: null,
      createdByAgentId: null,
      createdAt: '2026-11-21T10:00:00.000Z',
      updatedAt: '2026-11-21T10:00:00.000Z',
      normalizedNumber: '+14155550100',
      isAutoCreated: false,
      source: 'manual',
      consentStatus: 'unknown',
      consentSource: null,
      consentAt: null,
      consentNote: null,
      externalId: 'crm-1',
      customFields: { tier: 'gold' },
      version: 1,
    }),
    sequence,
    changedAt,
    ...fields,
  });

  it('raises contact.created on the insert of a contact, with the API Contact shape, its sequence and its time', () => {
    // Act
    const event = deriveEvent(change('INSERT', contactRow(1, at)))!;

    // Assess
    const body = JSON.parse(event.body);
    expect(body).toMatchObject({ type: 'contact.created', createdAt: '2026-11-21T10:00:05.000Z', sequence: 1 });
    expect(body.data.contact).toEqual(contactFromItem(contactRow(1, at)));
    expect(body.data.contact).not.toHaveProperty('pk');
    expect(EVENT_SCHEMAS['contact.created'].safeParse(body).success).toBe(true);
  });

  it("raises contact.updated for a write of its own fields, and nothing for a copy of its number's consent (consent.changed says it)", () => {
    // Prepare
    const patched = contactRow(2, at + 10, { tag: 'vip' });
    const consentCopied = contactRow(3, at + 10, { tag: 'vip', consentStatus: 'opted_out', changessk: uuidv7() });

    // Act
    const updated = deriveEvent(change('MODIFY', patched, contactRow(1, at)))!;
    const copied = deriveEvent(change('MODIFY', consentCopied, patched));

    // Assess
    expect(JSON.parse(updated.body)).toMatchObject({
      type: 'contact.updated',
      sequence: 2,
      data: { contact: { id: contactId, tag: 'vip' } },
    });
    expect(EVENT_SCHEMAS['contact.updated'].safeParse(JSON.parse(updated.body)).success).toBe(true);
    expect(copied).toBeUndefined();
    expect(deriveEvent(change('REMOVE', undefined, patched))).toBeUndefined();
  });

  it("raises contact.deleted on the insert of its tombstone: the id and when, with the sequence after the contact's last", () => {
    // Prepare: the tombstone deleteContact writes beside the contact
    const tombstone = {
      pk: `T#${tenantId}#CONTACT#${contactId}`,
      sk: 'TOMBSTONE',
      type: 'contactTombstone',
      id: contactId,
      tenantId,
      deletedAt: '2026-11-21T10:00:09.000Z',
      sequence: 4,
      changedAt: at + 4000,
    };

    // Act
    const event = deriveEvent(change('INSERT', tombstone))!;

    // Assess
    const body = JSON.parse(event.body);
    expect(body).toMatchObject({
      type: 'contact.deleted',
      sequence: 4,
      createdAt: '2026-11-21T10:00:09.000Z',
      data: { contact: { id: contactId, deletedAt: '2026-11-21T10:00:09.000Z' } },
    });
    expect(EVENT_SCHEMAS['contact.deleted'].safeParse(body).success).toBe(true);
  });
});

describe('consent.changed', () => {
  const ledgerRow = (status: string, consentAt: string, sequence: number): Item => ({
    pk: `T#${tenantId}#CONSENT#+14155550100`,
    sk: 'CONSENT',
    type: 'consent',
    tenantId,
    number: '+14155550100',
    consentStatus: status,
    consentSource: 'sms_keyword',
    consentAt,
    consentNote: status === 'opted_out' ? 'Replied STOP' : 'Replied START',
    sequence,
    changedAt: Date.parse(consentAt) + 3,
  });

  it('is raised once per change of a number: a STOP, then a START', () => {
    // Act
    const stop = deriveEvent(change('INSERT', ledgerRow('opted_out', '2026-11-21T10:00:00.000Z', 1)))!;
    const start = deriveEvent(
      change(
        'MODIFY',
        ledgerRow('opted_in', '2026-11-21T10:05:00.000Z', 2),
        ledgerRow('opted_out', '2026-11-21T10:00:00.000Z', 1),
      ),
    )!;

    // Assess
    expect(JSON.parse(stop.body)).toMatchObject({
      type: 'consent.changed',
      sequence: 1,
      createdAt: '2026-11-21T10:00:00.003Z',
      data: {
        consent: {
          number: '+14155550100',
          status: 'opted_out',
          source: 'sms_keyword',
          at: '2026-11-21T10:00:00.000Z',
          note: 'Replied STOP',
        },
      },
    });
    expect(JSON.parse(start.body)).toMatchObject({
      type: 'consent.changed',
      sequence: 2,
      data: { consent: { status: 'opted_in' } },
    });
    expect(EVENT_SCHEMAS['consent.changed'].safeParse(JSON.parse(start.body)).success).toBe(true);
  });

  it('is not raised when the same change is written again (a carrier retry of one opt-out)', () => {
    const row = ledgerRow('opted_out', '2026-11-21T10:00:00.000Z', 1);
    expect(deriveEvent(change('MODIFY', { ...row, sequence: 2 }, row))).toBeUndefined();
  });
});

describe('request: the API request an event names', () => {
  const crm = { changeRequestId: 'c0ffee00-1111-4222-8333-444455556666', changeIdempotencyKey: 'crm-42' };
  const outbound = (status: string, fields: Item = {}): Item => ({
    ...message('outbound'),
    status,
    costCents: 1,
    segments: 1,
    ...fields,
  });
  const bodyOf = (newImage: Item, oldImage?: Item) =>
    JSON.parse(deriveEvent(change(oldImage ? 'MODIFY' : 'INSERT', newImage, oldImage))!.body);

  it.each([
    ['call.completed', callToItem(tenantId, call('completed')), undefined],
    ['voicemail.received', voicemail(true), undefined],
    ['sms.received', message('inbound'), undefined],
    ['message.delivered (a carrier callback)', outbound('delivered'), outbound('sent')],
    [
      'message.failed (the settlement sweep)',
      outbound('failed', { failureReason: 'carrier_outcome_unknown' }),
      outbound('queued'),
    ],
    [
      'message.canceled (the firing met a billing block)',
      outbound('canceled', { cancelReason: 'billing' }),
      outbound('scheduled'),
    ],
  ])('is null on %s, a change no API request made', (_name, newImage, oldImage) => {
    // Act
    const body = bodyOf(newImage as Item, oldImage);

    // Assess
    expect(body).toHaveProperty('request', null);
    expect(EVENT_SCHEMAS[body.type as keyof typeof EVENT_SCHEMAS].safeParse(body).success).toBe(true);
  });

  it.each([
    [
      'message.failed (the send the carrier refused at once)',
      outbound('failed', { failureReason: 'carrier_rejected', ...crm }),
      outbound('queued'),
    ],
    [
      'message.canceled (POST /messages/{id}/cancel)',
      outbound('canceled', { cancelReason: 'api', ...crm }),
      outbound('scheduled'),
    ],
    [
      'consent.changed (POST /consent)',
      {
        pk: `T#${tenantId}#CONSENT#+14155550100`,
        sk: 'CONSENT',
        type: 'consent',
        tenantId,
        number: '+14155550100',
        consentStatus: 'opted_out',
        consentSource: 'email',
        consentAt: '2026-11-21T10:00:00.000Z',
        consentNote: 'Opted out by email',
        ...crm,
      },
      undefined,
    ],
  ])('names the request the write recorded on %s: its id and Idempotency-Key', (_name, newImage, oldImage) => {
    // Act
    const body = bodyOf(newImage as Item, oldImage);

    // Assess
    expect(body.request).toEqual({ id: crm.changeRequestId, idempotencyKey: 'crm-42' });
    expect(EVENT_SCHEMAS[body.type as keyof typeof EVENT_SCHEMAS].safeParse(body).success).toBe(true);
  });

  it('gives a null idempotencyKey to a request that sent none', () => {
    // Act
    const body = bodyOf(
      outbound('canceled', { cancelReason: 'api', changeRequestId: crm.changeRequestId }),
      outbound('scheduled'),
    );

    // Assess
    expect(body.request).toEqual({ id: crm.changeRequestId, idempotencyKey: null });
  });
});

describe('changeRequestParts: how a write names its request', () => {
  it('sets both attributes for a request with a key, removes the key for one without, removes both for none', () => {
    expect(changeRequestParts({ id: 'r-1', idempotencyKey: 'k-1' })).toEqual({
      set: { changeRequestId: 'r-1', changeIdempotencyKey: 'k-1' },
      remove: [],
    });
    expect(changeRequestParts({ id: 'r-1', idempotencyKey: null })).toEqual({
      set: { changeRequestId: 'r-1' },
      remove: ['changeIdempotencyKey'],
    });
    expect(changeRequestParts(null)).toEqual({ set: {}, remove: ['changeRequestId', 'changeIdempotencyKey'] });
    expect(changeRequestParts(undefined)).toEqual(changeRequestParts(null));
  });
});

describe('the router filter', () => {
  it('lets contact, tombstone and ledger rows through in one pattern (Lambda takes at most five filters)', () => {
    const types = ROUTER_FILTER_PATTERNS.flatMap(
      (pattern) => (pattern as { dynamodb: { NewImage: { type: { S: string[] } } } }).dynamodb.NewImage.type.S,
    );
    expect(ROUTER_FILTER_PATTERNS.length).toBeLessThanOrEqual(5);
    expect(types).toEqual(expect.arrayContaining(['contact', 'contactTombstone', 'consent', 'voicemail']));
  });
});
