import { TZDate } from '@date-fns/tz';
import type { ApiResult } from './support/api';
import { useLocalRuntime } from './support/e2e';
import { receiveTexts, type SeedText } from './support/texts';

/**
 * Texts: GET /messages, GET /messages/{counterpart} and POST /messages, sent through the local
 * runtime's loopback carrier. The carrier is told to refuse one number (the 502 path) and to step
 * statuses quickly; it accepts every other number. Inbound texts are seeded through the inbound
 * ingestion function itself.
 */
const FAILING_NUMBER = '+14155550666';
const e2e = useLocalRuntime({ env: { LOOPBACK_STATUS_DELAY_MS: '100', LOOPBACK_FAIL_TO: FAILING_NUMBER } });

type Message = {
  id: string;
  status: string;
  body: string;
  isRead: boolean;
  createdAt: string;
  [field: string]: unknown;
};
type Thread = {
  counterpartNumber: string;
  lastMessage: string;
  lastStatus: string;
  hasUnread: boolean;
  [field: string]: unknown;
};
type Org = { tenantId: string; key: string; smsNumber: string | null };

/** The demo organization's SMS number (local/demo.ts). */
const DEMO_SMS_NUMBER = '+15005550006';
const OUTBOUND_STATUS = /^(queued|sent|delivered)$/;
/** 161 GSM-7 characters: two segments. */
const TWO_SEGMENTS = 'a'.repeat(161);

let demoKey: string;
/** Keys of the demo organization lacking sms.view and sms.send, and lacking sms.send. */
let contactsViewKey: string;
let smsViewKey: string;
/** An organization of its own, so its thread list is exactly what a test put there. */
let texting: Org;
/** An organization with no SMS number. */
let voiceOnly: Org;
/** Organizations with a spending limit of 3, 1 and 2 cents (1 cent a segment, the default rate). */
let thrifty: Org;
let frugal: Org;
let careful: Org;

beforeAll(async () => {
  demoKey = e2e.runtime.demoKey;
  const organization = async (name: string, ...args: string[]): Promise<Org> => {
    const { tenant } = await e2e.runtime.admin('tenant', 'create', '--name', name, ...args);
    const { key } = await e2e.runtime.admin('key', 'create', '--tenant', tenant.id, '--scopes', 'sms.view,sms.send');
    return { tenantId: tenant.id, key, smsNumber: tenant.smsNumber };
  };
  const demoKeyWith = async (scopes: string) =>
    (await e2e.runtime.admin('key', 'create', '--tenant', e2e.demoTenantId, '--scopes', scopes)).key as string;
  [contactsViewKey, smsViewKey, texting, voiceOnly, thrifty, frugal, careful] = await Promise.all([
    demoKeyWith('contacts.view'),
    demoKeyWith('sms.view'),
    organization('Texting Org', '--sms-number', '+15005550100'),
    organization('Voice Only Org'),
    organization('Thrifty Org', '--sms-number', '+15005550101', '--spending-limit-cents', '3'),
    organization('Frugal Org', '--sms-number', '+15005550102', '--spending-limit-cents', '1'),
    organization('Careful Org', '--sms-number', '+15005550103', '--spending-limit-cents', '2'),
  ]);
}, 60_000);

/** A distinct, valid counterpart per call, so tests never share a conversation. */
let nextNumber = 4155550400;
const newNumber = () => `+1${(nextNumber += 1)}`;
const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);

/** Inbound texts to an organization's SMS number, in order; the stored messages. */
const receive = async (org: Org, texts: Omit<SeedText, 'to'>[]) =>
  (
    await receiveTexts(
      e2e.runtime.info,
      org.tenantId,
      texts.map((text) => ({ ...text, to: org.smsNumber! })),
    )
  ).map((result) => result.message);
const demo = (): Org => ({ tenantId: e2e.demoTenantId, key: demoKey, smsNumber: DEMO_SMS_NUMBER });

const send = (to: string, body: string, key = demoKey, headers?: Record<string, string>) =>
  e2e.api.request('POST', '/messages', { key, json: { to, body }, headers });
const sent = async (to: string, body: string, key = demoKey) => {
  const response = await send(to, body, key);
  expect(response.status).toBe(201);
  return response.body.message as Message;
};
/** GET /messages/{counterpart}, the + sent as %2B. */
const conversation = async (counterpart: string, query = '', key = demoKey) => {
  const response = await e2e.api.get(`/messages/${encodeURIComponent(counterpart)}${query}`, key);
  expect(response.status).toBe(200);
  return response.body as { messages: Message[]; nextCursor: string | null };
};
const threads = async (key = demoKey) => {
  const response = await e2e.api.get('/messages?limit=100', key);
  expect(response.status).toBe(200);
  return response.body.threads as Thread[];
};
const threadOf = async (counterpart: string, key = demoKey) =>
  (await threads(key)).find((thread) => thread.counterpartNumber === counterpart);

/**
 * Reads until `done` holds or 10 s have passed, and answers every value read, in order. A bounded poll, not a timing
 * assertion.
 */
async function readUntil<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T[]> {
  const deadline = Date.now() + 10_000;
  const seen = [await read()];
  while (!done(seen[seen.length - 1]) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    seen.push(await read());
  }
  return seen;
}

const expectError = (response: ApiResult, status: number, code: string) => {
  expect(response.status).toBe(status);
  expect(response.body.code).toBe(code);
};
const expect400Naming = (response: ApiResult, field: string) => {
  expectError(response, 400, 'validation_failed');
  expect(response.body.error).toMatch(new RegExp(`^${field.replace(/[.-]/g, '\\$&')}\\b`));
};

describe('GET /messages', () => {
  it('lists one thread per counterpart, newest activity first, with its last message, count and unread flag', async () => {
    const [early, middle, late] = ['+14155550501', '+14155550502', '+14155550503'];
    const [, hello, callMe] = await receive(texting, [
      { from: early, body: 'Are you open today?', receivedAt: minutesAgo(30) },
      { from: middle, body: 'Hello', receivedAt: minutesAgo(20) },
      { from: late, body: 'Call me back', receivedAt: minutesAgo(10) },
    ]);

    const reply = await sent(early, 'Yes, until six', texting.key);
    const listed = await threads(texting.key);

    expect(listed).toEqual([
      {
        counterpartNumber: early,
        lastMessage: 'Yes, until six',
        lastDirection: 'outbound',
        lastStatus: expect.stringMatching(OUTBOUND_STATUS),
        lastAt: reply.createdAt,
        messageCount: 2,
        hasUnread: true,
      },
      {
        counterpartNumber: late,
        lastMessage: 'Call me back',
        lastDirection: 'inbound',
        lastStatus: 'received',
        lastAt: callMe.createdAt,
        messageCount: 1,
        hasUnread: true,
      },
      {
        counterpartNumber: middle,
        lastMessage: 'Hello',
        lastDirection: 'inbound',
        lastStatus: 'received',
        lastAt: hello.createdAt,
        messageCount: 1,
        hasUnread: true,
      },
    ]);
  });

  it('has no unread flag on a thread of outbound texts only', async () => {
    const to = newNumber();
    await sent(to, 'Your table is ready');

    const thread = await threadOf(to);

    expect(thread).toMatchObject({
      counterpartNumber: to,
      lastDirection: 'outbound',
      messageCount: 1,
      hasUnread: false,
    });
  });

  it('keeps hasUnread after an inbound text, however often the conversation is read through the API', async () => {
    const from = newNumber();
    await receive(demo(), [{ from, body: 'Is my order ready?', receivedAt: minutesAgo(1) }]);

    const before = await threadOf(from);
    const firstRead = await conversation(from);
    const secondRead = await conversation(from);
    const after = await threadOf(from);

    expect(before?.hasUnread).toBe(true);
    expect(firstRead.messages.map((message) => message.isRead)).toEqual([false]);
    expect(secondRead.messages.map((message) => message.isRead)).toEqual([false]);
    expect(after?.hasUnread).toBe(true);
  });

  it("answers an empty list for an organization without texts, never another organization's threads", async () => {
    const listed = await threads(voiceOnly.key);

    expect(listed).toEqual([]);
  });
});

describe('GET /messages/{counterpart}', () => {
  it('answers the conversation newest first, both directions, every field as stored', async () => {
    const counterpart = newNumber();
    const [question] = await receive(demo(), [
      { from: counterpart, body: 'Do you deliver?', receivedAt: minutesAgo(5) },
    ]);
    const answer = await sent(counterpart, 'We do, within 5 miles');

    const read = await conversation(counterpart);

    expect(question).toMatchObject({
      direction: 'inbound',
      fromNumber: counterpart,
      toNumber: DEMO_SMS_NUMBER,
      status: 'received',
      isRead: false,
    });
    expect(read).toEqual({
      messages: [{ ...answer, status: expect.stringMatching(OUTBOUND_STATUS) }, question],
      nextCursor: null,
    });
  });

  describe('paging over four texts', () => {
    const counterpart = '+14155550601';
    let ids: string[];
    beforeAll(async () => {
      const texts = await receive(
        demo(),
        [4, 3, 2, 1].map((minutes) => ({
          from: counterpart,
          body: `${minutes} minutes ago`,
          receivedAt: minutesAgo(minutes),
        })),
      );
      ids = texts.map((text) => text.id).reverse(); // newest first
    });
    const page = async (query: string) => {
      const { messages, nextCursor } = await conversation(counterpart, query);
      return { ids: messages.map((message) => message.id), nextCursor };
    };

    it('pages backwards in time with limit and cursor; nextCursor is null exactly on the last page', async () => {
      const first = await page('?limit=2');
      const second = await page(`?limit=2&cursor=${first.nextCursor}`);
      const ofThree = await page('?limit=3');
      const rest = await page(`?limit=3&cursor=${ofThree.nextCursor}`);

      expect(first).toEqual({ ids: ids.slice(0, 2), nextCursor: ids[1] });
      expect(second).toEqual({ ids: ids.slice(2), nextCursor: null });
      expect(ofThree).toEqual({ ids: ids.slice(0, 3), nextCursor: ids[2] });
      expect(rest).toEqual({ ids: ids.slice(3), nextCursor: null });
    });

    it('takes the counterpart with a literal + as well as %2B', async () => {
      const literal = await e2e.api.get(`/messages/${counterpart}?limit=100`, demoKey);
      const encoded = await e2e.api.get(`/messages/${counterpart.replace('+', '%2B')}?limit=100`, demoKey);

      expect(literal.status).toBe(200);
      expect(literal.body.messages.map((message: Message) => message.id)).toEqual(ids);
      expect(encoded.body).toEqual(literal.body);
    });
  });

  it('answers an empty page for a number with no texts, and for a number only another organization texted', async () => {
    const [otherOrgsText] = await receive(texting, [
      { from: newNumber(), body: 'Only for Texting Org', receivedAt: minutesAgo(1) },
    ]);

    const unknown = await conversation(newNumber());
    const notOurs = await conversation(otherOrgsText.fromNumber as string);

    expect(unknown).toEqual({ messages: [], nextCursor: null });
    expect(notOurs).toEqual({ messages: [], nextCursor: null });
  });

  it.each([
    ['counterpart', '/messages/14155550123'],
    ['counterpart', '/messages/%2B0123456789'],
    ['counterpart', '/messages/%2B1415555O123'],
    ['limit', '/messages/%2B14155550123?limit=0'],
    ['cursor', '/messages/%2B14155550123?cursor=not-a-uuid'],
  ])('answers 400 naming %s for %s', async (field, path) => {
    const response = await e2e.api.get(path, demoKey);

    expect400Naming(response, field);
  });
});

describe('path parameters sent encoded or not', () => {
  /** Every character of a value percent-encoded, as a cautious client or SDK may send it. */
  const encodeAll = (value: string) =>
    [...Buffer.from(value)].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');

  it('gives the same answers for a counterpart and a contact id, whether encoded or not', async () => {
    const counterpart = newNumber();
    await receive(demo(), [{ from: counterpart, body: 'Encoded or not?', receivedAt: minutesAgo(1) }]);
    const created = await e2e.api.post('/contacts', demoKey, {
      displayName: 'Percent Encoded',
      phoneNumber: newNumber(),
    });
    const { id } = created.body.contact;

    const conversations = await Promise.all(
      [counterpart, encodeURIComponent(counterpart), encodeAll(counterpart)].map((sentAs) =>
        e2e.api.get(`/messages/${sentAs}`, demoKey),
      ),
    );
    const contacts = await Promise.all(
      [id, encodeAll(id)].map((sentAs) => e2e.api.get(`/contacts/${sentAs}`, demoKey)),
    );

    expect(conversations.map((response) => response.status)).toEqual([200, 200, 200]);
    expect(conversations[0].body.messages).toHaveLength(1);
    expect(conversations[1].body).toEqual(conversations[0].body);
    expect(conversations[2].body).toEqual(conversations[0].body);
    expect(contacts.map((response) => response.status)).toEqual([200, 200]);
    expect(contacts[1].body).toEqual(contacts[0].body);
  });

  it('answers a malformed escape with 400 naming the parameter, and decodes only once', async () => {
    const malformed = await Promise.all([
      e2e.api.get('/messages/%E0%A4%A', demoKey),
      e2e.api.get('/contacts/%ZZ', demoKey),
      e2e.api.delete('/contacts/0199a000%', demoKey),
    ]);
    const twice = await e2e.api.get(`/messages/${encodeURIComponent(encodeURIComponent(newNumber()))}`, demoKey);

    // Each body carries the request id its x-amzn-RequestId header names.
    expect(malformed.map((response) => [response.status, response.body])).toEqual([
      [
        400,
        {
          error: 'counterpart: malformed percent-encoding in the path',
          code: 'validation_failed',
          requestId: malformed[0].headers.get('x-amzn-requestid'),
        },
      ],
      [
        400,
        {
          error: 'id: malformed percent-encoding in the path',
          code: 'validation_failed',
          requestId: malformed[1].headers.get('x-amzn-requestid'),
        },
      ],
      [
        400,
        {
          error: 'id: malformed percent-encoding in the path',
          code: 'validation_failed',
          requestId: malformed[2].headers.get('x-amzn-requestid'),
        },
      ],
    ]);
    expect400Naming(twice, 'counterpart');
  });
});

describe('POST /messages', () => {
  it("answers 201 with the text queued, sent from the organization's SMS number, no agent, a carrier sid", async () => {
    const to = newNumber();

    const response = await send(to, 'Hello from the test');

    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      message: {
        id: expect.any(String),
        tenantId: e2e.demoTenantId,
        direction: 'outbound',
        fromNumber: DEMO_SMS_NUMBER,
        toNumber: to,
        counterpartNumber: to,
        body: 'Hello from the test',
        status: 'queued',
        messageSid: expect.stringMatching(/^SM[0-9a-f]{32}$/),
        agentId: null,
        isRead: true,
        createdAt: expect.any(String),
      },
    });
  });

  it('moves the text forward as the carrier reports it: sent, then delivered, never backwards', async () => {
    const to = newNumber();
    const posted = await sent(to, 'Watch my status');

    const reads = await readUntil(
      () => conversation(to),
      (read) => read.messages[0]?.status === 'delivered',
    );
    const thread = await threadOf(to);

    const statuses = reads.map((read) => read.messages[0].status).filter((status, i, all) => status !== all[i - 1]);
    expect(statuses.join(' > ')).toMatch(/^(queued > )?(sent > )?delivered$/);
    expect(reads[reads.length - 1].messages).toEqual([{ ...posted, status: 'delivered' }]);
    expect(thread?.lastStatus).toBe('delivered');
  });

  it('accepts a body of exactly 1600 characters', async () => {
    const body = 'x'.repeat(1600);

    const message = await sent(newNumber(), body);

    expect(message.body).toBe(body);
  });

  it.each([
    ['body.to', 'a number that is not E.164', { to: '415-555-0123', body: 'Hi' }],
    ['body.to', 'no to', { body: 'Hi' }],
    ['body.body', 'an empty body', { to: '+14155550123', body: '' }],
    ['body.body', 'a body of 1601 characters', { to: '+14155550123', body: 'x'.repeat(1601) }],
    ['body.body', 'no body', { to: '+14155550123' }],
    ['body.subject', 'an unknown field', { to: '+14155550123', body: 'Hi', subject: 'Greeting' }],
  ])('answers 400 naming %s for %s', async (field, _name, json) => {
    const response = await e2e.api.request('POST', '/messages', { key: demoKey, json });

    expect400Naming(response, field);
  });

  it('answers 400 naming the body for malformed JSON, and 415 for a body that is not JSON', async () => {
    const malformed = await e2e.api.request('POST', '/messages', {
      key: demoKey,
      rawBody: '{"to": "+14155550123",',
      headers: { 'Content-Type': 'application/json' },
    });
    const notJson = await e2e.api.request('POST', '/messages', {
      key: demoKey,
      rawBody: 'to=+14155550123&body=Hi',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });

    expect400Naming(malformed, 'body');
    expect(notJson.status).toBe(415);
  });

  it('answers 402 billing_blocked while the billing status is not active, and sends again once it is', async () => {
    const to = newNumber();
    await e2e.runtime.admin('tenant', 'update', e2e.demoTenantId, '--billing-status', 'past_due');
    let blocked: ApiResult;
    try {
      blocked = await send(to, 'Are we paid up?');
    } finally {
      await e2e.runtime.admin('tenant', 'update', e2e.demoTenantId, '--billing-status', 'active');
    }

    const again = await send(to, 'We are now');

    expectError(blocked, 402, 'billing_blocked');
    expect(again.status).toBe(201);
    expect((await conversation(to)).messages.map((message) => message.body)).toEqual(['We are now']);
  });

  it('charges per segment up to the spending limit exactly, then answers 402 spending_limit_reached', async () => {
    // Thrifty Org: limit 3 cents at 1 cent a segment.
    const to = newNumber();

    const twoSegments = await send(to, TWO_SEGMENTS, thrifty.key); // 2 of 3 cents
    const twoMore = await send(to, TWO_SEGMENTS, thrifty.key); // would be 4
    const oneSegment = await send(to, 'Fits exactly', thrifty.key); // 3 of 3
    const oneMore = await send(to, 'One too many', thrifty.key); // would be 4

    expect(twoSegments.status).toBe(201);
    expectError(twoMore, 402, 'spending_limit_reached');
    expect(oneSegment.status).toBe(201);
    expectError(oneMore, 402, 'spending_limit_reached');
    expect((await conversation(to, '', thrifty.key)).messages.map((message) => message.body)).toEqual([
      'Fits exactly',
      TWO_SEGMENTS,
    ]);
  });

  it('answers 409 no_sms_number for an organization without an SMS number', async () => {
    const response = await send(newNumber(), 'From nowhere', voiceOnly.key);

    expectError(response, 409, 'no_sms_number');
  });

  it('answers 409 recipient_opted_out after the number replied STOP, and sends again after START', async () => {
    const to = newNumber();
    const [stop] = await receiveTexts(e2e.runtime.info, e2e.demoTenantId, [
      { from: to, to: DEMO_SMS_NUMBER, body: 'STOP', receivedAt: minutesAgo(2) },
    ]);

    const refused = await send(to, 'Last chance offer');
    const contact = await e2e.api.get(`/contacts/${stop.contactId}`, demoKey);
    await receive(demo(), [{ from: to, body: 'start', receivedAt: minutesAgo(1) }]);
    const allowed = await send(to, 'Welcome back');

    expectError(refused, 409, 'recipient_opted_out');
    expect(contact.body.contact).toMatchObject({
      phoneNumber: to,
      isAutoCreated: true,
      consentStatus: 'opted_out',
      consentSource: expect.any(String),
    });
    expect(allowed.status).toBe(201);
  });

  it('answers 422 carrier_rejected naming the message when the carrier refuses the text; the text is failed', async () => {
    const response = await send(FAILING_NUMBER, 'Nobody home');
    const read = await conversation(FAILING_NUMBER);

    expectError(response, 422, 'carrier_rejected');
    expect(response.body).toMatchObject({ messageId: read.messages[0].id, carrierCode: 21211 });
    expect(read.messages).toEqual([expect.objectContaining({ body: 'Nobody home', status: 'failed' })]);
  });

  it('refunds a text the carrier refused: the spending limit still has room for it', async () => {
    // Frugal Org: limit 1 cent, one segment.
    const refused = await send(FAILING_NUMBER, 'Refused', frugal.key);

    const accepted = await send(newNumber(), 'Paid for', frugal.key);
    const overLimit = await send(newNumber(), 'Over the limit', frugal.key);

    expectError(refused, 422, 'carrier_rejected');
    expect(accepted.status).toBe(201);
    expectError(overLimit, 402, 'spending_limit_reached');
  });
});

/**
 * Numbers whose zone (Google's prefix data) is one zone under the federal window alone, around the globe: at any
 * instant one of them is at night and one in the day, at least five minutes from either edge of its window.
 */
const AROUND_THE_GLOBE = [
  { number: '+18085550100', zone: 'Pacific/Honolulu' },
  { number: '+12125550100', zone: 'America/New_York' },
  { number: '+442079460000', zone: 'Europe/London' },
  { number: '+81312345678', zone: 'Asia/Tokyo' },
  { number: '+61291234567', zone: 'Australia/Sydney' },
];

/** By the real clock: a number where it is night (with its next 8:00 local) and one where it is day. */
function recipientsByTheClock(now: Date) {
  const places = AROUND_THE_GLOBE.map((place) => {
    const local = new TZDate(now.getTime(), place.zone);
    const minute = local.getHours() * 60 + local.getMinutes();
    const day = local.getDate() + (local.getHours() >= 8 ? 1 : 0);
    const next8am = new Date(new TZDate(local.getFullYear(), local.getMonth(), day, 8, 0, 0, place.zone).getTime());
    return { ...place, minute, next8am };
  });
  const night = places.find((place) => place.minute >= 21 * 60 + 5 || place.minute < 7 * 60 + 55);
  const day = places.find((place) => place.minute >= 8 * 60 + 5 && place.minute < 20 * 60 + 55);
  if (!night || !day) throw new Error(`No number at night and one in the day at ${now.toISOString()}`);
  return { night, day };
}

describe('quiet hours', () => {
  it("after tenant update --quiet-hours refuse, answers 422 quiet_hours with allowedAt at the recipient's next 8:00 where it is night, 201 where it is day", async () => {
    // Prepare: an organization of its own, its policy set by the operator.
    const admin = e2e.runtime.admin;
    const { tenant } = await admin('tenant', 'create', '--name', 'Quiet Org', '--sms-number', '+15005550104');
    const { key } = await admin('key', 'create', '--tenant', tenant.id, '--scopes', 'sms.view,sms.send');
    await admin('tenant', 'update', tenant.id, '--quiet-hours', 'refuse');
    const { night, day } = recipientsByTheClock(new Date());

    // Act
    const refused = await send(night.number, 'Good night', key);
    const accepted = await send(day.number, 'Good day', key);

    // Assess
    expectError(refused, 422, 'quiet_hours');
    expect(refused.body.allowedAt).toBe(night.next8am.toISOString());
    expect(accepted.status).toBe(201);
    expect(accepted.body.message).toMatchObject({
      toNumber: day.number,
      status: expect.stringMatching(OUTBOUND_STATUS),
    });
  });
});

describe('Idempotency-Key on POST /messages', () => {
  it('answers a retry with the same key and body with the same message, and sends once', async () => {
    const to = newNumber();
    const headers = { 'Idempotency-Key': `retry-${to}` };

    const first = await send(to, 'Sent once', demoKey, headers);
    const retry = await send(to, 'Sent once', demoKey, headers);
    const read = await conversation(to);

    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    // The same message, as it now stands (the loopback carrier moves it on after a second).
    expect(retry.body).toEqual({
      message: { ...first.body.message, status: expect.stringMatching(/^(queued|sent|delivered)$/) },
    });
    expect(retry.headers.get('Idempotent-Replayed')).toBe('true');
    expect(read.messages.map((message) => message.id)).toEqual([first.body.message.id]);
  });

  it('does not charge a replay again', async () => {
    // Careful Org: limit 2 cents, one segment each.
    const to = newNumber();
    const headers = { 'Idempotency-Key': `billed-once-${to}` };

    const first = await send(to, 'The first cent', careful.key, headers);
    const replay = await send(to, 'The first cent', careful.key, headers);
    const second = await send(to, 'The second cent', careful.key);
    const third = await send(to, 'No cent left', careful.key);

    expect(first.status).toBe(201);
    // The same message as it now stands: the loopback carrier may have moved it on before the replay came.
    expect(replay.body).toEqual({
      message: { ...first.body.message, status: expect.stringMatching(/^(queued|sent|delivered)$/) },
    });
    expect(second.status).toBe(201);
    expectError(third, 402, 'spending_limit_reached');
  });

  it('answers 422 idempotency_mismatch for the same key with another body, and sends nothing', async () => {
    const [to, other] = [newNumber(), newNumber()];
    const headers = { 'Idempotency-Key': `mismatch-${to}` };
    await send(to, 'The first body', demoKey, headers);

    const mismatch = await send(other, 'Another body', demoKey, headers);
    const read = await conversation(other);

    expectError(mismatch, 422, 'idempotency_mismatch');
    expect(read.messages).toEqual([]);
  });

  it('keeps keys per organization: another organization may use the same key for its own text', async () => {
    const headers = { 'Idempotency-Key': 'shared-key-between-organizations' };
    const mine = await send(newNumber(), 'Demo text', demoKey, headers);

    const theirs = await send(newNumber(), 'Texting Org text', texting.key, headers);

    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.body.message.id).not.toBe(mine.body.message.id);
  });

  it.each([
    ['a space', 'two words'],
    ['256 characters', 'k'.repeat(256)],
  ])('answers 400 naming Idempotency-Key for a key with %s, and sends nothing', async (_name, key) => {
    const to = newNumber();

    const response = await send(to, 'Never sent', demoKey, { 'Idempotency-Key': key });
    const read = await conversation(to);

    expect400Naming(response, 'Idempotency-Key');
    expect(read.messages).toEqual([]);
  });
});

describe('keys', () => {
  const everyRoute = (key?: string) => [
    e2e.api.get('/messages', key),
    e2e.api.get('/messages/%2B14155550123', key),
    e2e.api.request('POST', '/messages', { key, json: { to: '+14155550123', body: 'Hi' } }),
  ];

  it('answers 401 with WWW-Authenticate: Bearer without a key or with an unknown one', async () => {
    const responses = await Promise.all([...everyRoute(), ...everyRoute(`cct_${'A'.repeat(43)}`)]);

    for (const response of responses) {
      expect(response.status).toBe(401);
      expect(response.headers.get('WWW-Authenticate')).toBe('Bearer');
    }
  });

  it('answers 403 insufficient_scope, naming the scope, to a key without sms.view and sms.send', async () => {
    const responses = await Promise.all(everyRoute(contactsViewKey));

    expect(responses.map((response) => [response.status, response.body.code])).toEqual([
      [403, 'insufficient_scope'],
      [403, 'insufficient_scope'],
      [403, 'insufficient_scope'],
    ]);
    expect(responses.map((response) => response.body.error)).toEqual([
      expect.stringContaining('sms.view'),
      expect.stringContaining('sms.view'),
      expect.stringContaining('sms.send'),
    ]);
  });

  it('lets a key with sms.view read but not send: 403 naming sms.send, and nothing sent', async () => {
    const to = newNumber();

    const refused = await send(to, 'Not allowed', smsViewKey);
    const read = await conversation(to, '', smsViewKey);
    const listed = await e2e.api.get('/messages', smsViewKey);

    expectError(refused, 403, 'insufficient_scope');
    expect(refused.body.error).toContain('sms.send');
    expect(read).toEqual({ messages: [], nextCursor: null });
    expect(listed.status).toBe(200);
  });
});

describe('rate-limit headers', () => {
  const requests: [string, number, () => Promise<ApiResult>][] = [
    ['GET /messages', 200, () => e2e.api.get('/messages', texting.key)],
    ['GET /messages/{counterpart}', 200, () => e2e.api.get('/messages/%2B14155550123', texting.key)],
    ['GET /messages/{counterpart}', 400, () => e2e.api.get('/messages/not-a-number', texting.key)],
    ['POST /messages', 201, () => send(newNumber(), 'Counted', texting.key)],
    ['POST /messages', 400, () => send('not-a-number', 'Counted', texting.key)],
    ['POST /messages', 409, () => send(newNumber(), 'Counted', voiceOnly.key)],
  ];

  it.each(requests)('are on the response of %s answering %i', async (_name, status, request) => {
    const response = await request();

    expect(response.status).toBe(status);
    expect(response.headers.get('RateLimit-Limit')).toBe('120');
    expect(response.headers.get('RateLimit-Remaining')).toMatch(/^\d+$/);
    expect(response.headers.get('RateLimit-Reset')).toMatch(/^\d+$/);
  });
});

describe("the README's curl examples", () => {
  it('send a text, then read the thread list and the conversation', async () => {
    // curl -X POST -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" \
    //   -d '{"to":"+14155550123","body":"Hello from the API"}' $BASE/messages
    const posted = await e2e.api.request('POST', '/messages', {
      key: demoKey,
      headers: { 'Content-Type': 'application/json' },
      rawBody: '{"to":"+14155550123","body":"Hello from the API"}',
    });
    // curl -H "Authorization: Bearer $KEY" $BASE/messages
    const list = await e2e.api.get('/messages', demoKey);
    // curl -H "Authorization: Bearer $KEY" $BASE/messages/%2B14155550123
    const read = await e2e.api.get('/messages/%2B14155550123', demoKey);

    expect(posted.status).toBe(201);
    expect(posted.body.message).toMatchObject({
      toNumber: '+14155550123',
      body: 'Hello from the API',
      status: 'queued',
    });
    expect(list.status).toBe(200);
    expect(list.body.threads).toContainEqual(
      expect.objectContaining({ counterpartNumber: '+14155550123', lastMessage: 'Hello from the API' }),
    );
    expect(read.status).toBe(200);
    expect(read.body.messages[0]).toMatchObject({ id: posted.body.message.id, body: 'Hello from the API' });
  });
});
