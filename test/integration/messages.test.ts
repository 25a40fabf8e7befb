import { randomBytes } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createTestTable } from '../support/table';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { CarrierError, type Carrier, type OutboundText } from '../../lambdas/contexts/texting/carrier-port';
import { LoopbackCarrier } from '../../lambdas/contexts/carrier/loopback';
import { consentOf } from '../../lambdas/contexts/consent/ledger';
import { createContact, deleteContact, getContact, updateContact } from '../../lambdas/contexts/contacts/contacts';
import { settleUnknownOutcomes } from '../../lambdas/contexts/texting/settlement';
import { BillingBlockedError, CarrierRejectedError, CarrierUnavailableError, NoSmsNumberError, RecipientOptedOutError, SpendingLimitReachedError } from '../../lambdas/contexts/texting/errors';
import { updateMessageStatus } from '../../lambdas/contexts/texting/delivery-status';
import { getMessage, listMessages } from '../../lambdas/contexts/texting/messages';
import { receiveInboundMessage } from '../../lambdas/contexts/texting/receiving';
import { sendMessage as sendText } from '../../lambdas/contexts/texting/sending';
import { createTenant, getTenant, tenantKey, updateTenant, type TenantInput } from '../../lambdas/contexts/tenants/tenants';
import { listThreads, threadKey } from '../../lambdas/contexts/texting/threads';

/** The send as most tests here need it: the message it answers with, at a given time. */
const sendMessage = async (tenantId: string, input: { to: string; body: string }, carrier: Carrier, now?: Date) =>
  (await sendText(tenantId, input, carrier, { now })).message;

const ORG_NUMBER = '+14155550000';
const base = Date.parse('2026-10-01T09:00:00.000Z');
const minutes = (n: number) => new Date(base + n * 60_000);
const newSid = () => `SM${randomBytes(16).toString('hex')}`;

/** A carrier that accepts everything and remembers what it was given. */
function acceptingCarrier(): Carrier & { sent: OutboundText[] } {
  const sent: OutboundText[] = [];
  return {
    name: 'loopback',
    sent,
    send: async (text) => {
      sent.push(text);
      return { messageSid: newSid() };
    },
  };
}

const refusingCarrier: Carrier = {
  name: 'twilio',
  send: async () => {
    throw new CarrierError('Twilio refused the message: HTTP 400', { kind: 'refused', httpStatus: 400, providerCode: 21211 });
  },
};

/** Each organization its own SMS number: a number belongs to one organization only. */
let orgNumbers = 0;
const newOrg = async (overrides: Partial<TenantInput> = {}) =>
  (await createTenant({ name: 'Texting Org', smsNumber: `+1628555${String((orgNumbers += 1)).padStart(4, '0')}`, ...overrides })).id;
const smsNumberOf = async (tenantId: string) => (await getTenant(tenantId))!.smsNumber!;

const spendOf = async (tenantId: string) => (await getTenant(tenantId))!.spendCents;

const inbound = (tenantId: string, from: string, body: string, at: Date, messageSid = newSid()) =>
  receiveInboundMessage(tenantId, { from, to: ORG_NUMBER, body, messageSid, receivedAt: at });

beforeAll(createTestTable);

describe('sending a text', () => {
  it('charges the organization, writes the queued message with its thread and records the carrier sid', async () => {
    // Prepare
    const tenantId = await newOrg();
    const orgNumber = await smsNumberOf(tenantId);
    const carrier = acceptingCarrier();
    // Act
    const message = await sendMessage(tenantId, { to: '+14155550101', body: 'Your order shipped' }, carrier, minutes(1));
    // Assess
    expect(message).toMatchObject({
      direction: 'outbound',
      fromNumber: orgNumber,
      toNumber: '+14155550101',
      counterpartNumber: '+14155550101',
      status: 'queued',
      agentId: null,
      isRead: true,
      createdAt: minutes(1).toISOString(),
    });
    expect(message.messageSid).toMatch(/^SM[0-9a-f]{32}$/);
    expect(carrier.sent).toEqual([{ tenantId, messageId: message.id, from: orgNumber, to: '+14155550101', body: 'Your order shipped' }]);
    expect(await getMessage(tenantId, message.id)).toEqual(message);
    expect(await spendOf(tenantId)).toBe(1);
    expect(await listThreads(tenantId)).toEqual([
      {
        counterpartNumber: '+14155550101',
        lastMessage: 'Your order shipped',
        lastDirection: 'outbound',
        lastStatus: 'queued',
        lastAt: minutes(1).toISOString(),
        messageCount: 1,
        hasUnread: false,
      },
    ]);
    // The sid lookup row lets a status callback find the message.
    const { message: sent } = await updateMessageStatus(tenantId, { messageSid: message.messageSid }, 'sent');
    expect(sent.status).toBe('sent');
    expect((await listThreads(tenantId))[0].lastStatus).toBe('sent');
  });

  it("bills segments x the organization's rate", async () => {
    const tenantId = await newOrg();
    await dynamo.send(
      new UpdateCommand({ TableName: TABLE_NAME, Key: tenantKey(tenantId), UpdateExpression: 'SET smsRateCents = :rate', ExpressionAttributeValues: { ':rate': 3 } }),
    );

    await sendMessage(tenantId, { to: '+14155550102', body: 'x'.repeat(161) }, acceptingCarrier());

    expect(await spendOf(tenantId)).toBe(6);
    const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: threadKey(tenantId, '+14155550102') }));
    expect(Item).toMatchObject({ messageCount: 1, unreadCount: 0 });
  });

  it('refuses without an SMS number (409), to an opted-out number (409) and on blocked billing (402), charging nothing', async () => {
    const noNumber = await newOrg({ smsNumber: null });
    const tenantId = await newOrg();
    await inbound(tenantId, '+14155550103', 'STOP', minutes(2));
    const blocked = await newOrg({ billingStatus: 'past_due' });
    const carrier = acceptingCarrier();

    await expect(sendMessage(noNumber, { to: '+14155550104', body: 'hi' }, carrier)).rejects.toBeInstanceOf(NoSmsNumberError);
    await expect(sendMessage(tenantId, { to: '+14155550103', body: 'hi' }, carrier)).rejects.toBeInstanceOf(RecipientOptedOutError);
    await expect(sendMessage(blocked, { to: '+14155550104', body: 'hi' }, carrier)).rejects.toBeInstanceOf(BillingBlockedError);

    expect(carrier.sent).toHaveLength(0);
    expect([await spendOf(noNumber), await spendOf(tenantId), await spendOf(blocked)]).toEqual([0, 0, 0]);
  });

  it('refunds the charge and marks the message failed when the carrier refuses it', async () => {
    const tenantId = await newOrg({ spendingLimitCents: 1 });

    await expect(sendMessage(tenantId, { to: '+14155550105', body: 'hello' }, refusingCarrier, minutes(3))).rejects.toBeInstanceOf(
      CarrierRejectedError,
    );

    expect(await spendOf(tenantId)).toBe(0);
    const [failed] = (await listMessages(tenantId, '+14155550105', { limit: 10 })).items;
    expect(failed).toMatchObject({ status: 'failed', messageSid: '' });
    expect((await listThreads(tenantId))[0]).toMatchObject({ lastStatus: 'failed', messageCount: 1 });
    // The refund restored the budget: the one cent the limit allows is still there.
    await expect(sendMessage(tenantId, { to: '+14155550105', body: 'hello' }, acceptingCarrier())).resolves.toMatchObject({ status: 'queued' });
  });

  it('never overspends under concurrency: with a limit allowing exactly k sends, exactly k of N parallel sends succeed', async () => {
    const k = 3;
    const tenantId = await newOrg({ spendingLimitCents: k });
    const carrier = acceptingCarrier();

    const attempts = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => sendMessage(tenantId, { to: '+14155550106', body: `Parallel ${i}` }, carrier)),
    );

    const succeeded = attempts.filter((a) => a.status === 'fulfilled');
    const refused = attempts.filter((a) => a.status === 'rejected' && a.reason instanceof SpendingLimitReachedError);
    expect(succeeded).toHaveLength(k);
    expect(refused).toHaveLength(10 - k);
    expect(await spendOf(tenantId)).toBe(k);
    expect(carrier.sent).toHaveLength(k);
    expect((await listThreads(tenantId))[0].messageCount).toBe(k);
  });

  it('follows a limit the operator raises', async () => {
    const tenantId = await newOrg({ spendingLimitCents: 0 });
    await expect(sendMessage(tenantId, { to: '+14155550107', body: 'one' }, acceptingCarrier())).rejects.toBeInstanceOf(SpendingLimitReachedError);

    await updateTenant(tenantId, { spendingLimitCents: 1 });

    await expect(sendMessage(tenantId, { to: '+14155550107', body: 'one' }, acceptingCarrier())).resolves.toMatchObject({ status: 'queued' });
    expect(await spendOf(tenantId)).toBe(1);
  });
});

describe('threads', () => {
  it('lists one thread per number, newest activity first, with hasUnread while inbound texts are unread', async () => {
    const tenantId = await newOrg();
    await inbound(tenantId, '+14155550201', 'Hi there', minutes(10));
    await sendMessage(tenantId, { to: '+14155550202', body: 'Reminder' }, acceptingCarrier(), minutes(11));
    await inbound(tenantId, '+14155550203', 'Call me', minutes(12));
    // An older text arriving late counts, but does not become the thread's last message.
    await inbound(tenantId, '+14155550202', 'Earlier reply', minutes(5));

    const threads = await listThreads(tenantId);

    expect(threads.map((t) => [t.counterpartNumber, t.hasUnread, t.messageCount])).toEqual([
      ['+14155550203', true, 1],
      ['+14155550202', true, 2],
      ['+14155550201', true, 1],
    ]);
    expect(threads[1]).toMatchObject({ lastMessage: 'Reminder', lastDirection: 'outbound', lastAt: minutes(11).toISOString() });
    expect(threads[0]).toMatchObject({ lastDirection: 'inbound', lastStatus: 'received' });
  });

  it('keeps counters exact under concurrent inbound and outbound texts on one thread', async () => {
    const tenantId = await newOrg();
    const number = '+14155550204';

    await Promise.all([
      ...Array.from({ length: 8 }, (_, i) => inbound(tenantId, number, `In ${i}`, minutes(20 + i))),
      ...Array.from({ length: 8 }, (_, i) => sendMessage(tenantId, { to: number, body: `Out ${i}` }, acceptingCarrier(), minutes(20 + i))),
    ]);

    const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: threadKey(tenantId, number) }));
    expect(Item).toMatchObject({ messageCount: 16, unreadCount: 8 });
    const all = await listMessages(tenantId, number, { limit: 100 });
    expect(all.items).toHaveLength(16);
    // The thread's last message is the newest of them all, whatever order the writes landed in.
    expect(Item!.lastMessageId).toBe(all.items[0].id);
  });
});

describe('a conversation', () => {
  it('pages newest first with the message id as cursor, nextCursor null exactly on the last page', async () => {
    const tenantId = await newOrg();
    const number = '+14155550301';
    const ids: string[] = [];
    for (const n of [2, 0, 4, 1, 3]) ids[n] = (await inbound(tenantId, number, `Message ${n}`, minutes(30 + n))).message.id;
    await inbound(tenantId, '+14155550302', 'Someone else', minutes(40));

    const first = await listMessages(tenantId, number, { limit: 2 });
    const second = await listMessages(tenantId, number, { limit: 2, cursor: first.nextCursor! });
    const third = await listMessages(tenantId, number, { limit: 2, cursor: second.nextCursor! });
    const exact = await listMessages(tenantId, number, { limit: 5 });

    expect(first.items.map((m) => m.id)).toEqual([ids[4], ids[3]]);
    expect(second.items.map((m) => m.id)).toEqual([ids[2], ids[1]]);
    expect(third.items.map((m) => m.id)).toEqual([ids[0]]);
    expect(third.nextCursor).toBeNull();
    expect(exact.nextCursor).toBeNull();
    expect(first.items[0]).toMatchObject({ direction: 'inbound', status: 'received', isRead: false, body: 'Message 4', toNumber: ORG_NUMBER });
  });

  it('is empty for a number never texted', async () => {
    const tenantId = await newOrg();

    expect(await listMessages(tenantId, '+14155550399', { limit: 10 })).toEqual({ items: [], nextCursor: null });
  });
});

describe('inbound texts and consent', () => {
  it('auto-creates the contact of a new number and applies STOP / START keywords (whole trimmed body, any case)', async () => {
    const tenantId = await newOrg();
    const number = '+14155550401';

    const first = await inbound(tenantId, number, 'Hello, is this the shop?', minutes(50));
    const contactBefore = await getContact(tenantId, first.contactId);
    await inbound(tenantId, number, 'please stop', minutes(51));
    const afterSentence = await getContact(tenantId, first.contactId);
    const stop = await inbound(tenantId, number, '  sToP \n', minutes(52));
    const optedOut = await getContact(tenantId, first.contactId);
    await inbound(tenantId, number, 'Start', minutes(53));
    const optedIn = await getContact(tenantId, first.contactId);

    expect(contactBefore).toMatchObject({ source: 'auto_inbound', isAutoCreated: true, normalizedNumber: number, consentStatus: 'unknown' });
    expect(afterSentence.consentStatus).toBe('unknown');
    expect(stop.consent).toEqual({ keyword: 'STOP', status: 'opted_out' });
    expect(optedOut).toMatchObject({ consentStatus: 'opted_out', consentSource: 'sms_keyword', consentAt: minutes(52).toISOString(), consentNote: 'Replied STOP' });
    expect(optedIn).toMatchObject({ consentStatus: 'opted_in', consentSource: 'sms_keyword', consentNote: 'Replied START' });
    await expect(sendMessage(tenantId, { to: number, body: 'Welcome back' }, acceptingCarrier())).resolves.toMatchObject({ status: 'queued' });
  });

  it('lets a late, older keyword not override a newer one', async () => {
    const tenantId = await newOrg();
    const number = '+14155550402';
    const { contactId } = await inbound(tenantId, number, 'UNSUBSCRIBE', minutes(60));

    await inbound(tenantId, number, 'yes', minutes(59));

    expect(await getContact(tenantId, contactId)).toMatchObject({ consentStatus: 'opted_out', consentNote: 'Replied UNSUBSCRIBE' });
  });

  it('stores a carrier retry of the same sid once', async () => {
    const tenantId = await newOrg();
    const sid = newSid();

    const first = await inbound(tenantId, '+14155550403', 'Once', minutes(61), sid);
    const retry = await inbound(tenantId, '+14155550403', 'Once', minutes(61), sid);

    expect(retry).toMatchObject({ duplicate: true, message: first.message });
    expect((await listThreads(tenantId))[0].messageCount).toBe(1);
  });
});

describe('delivery status', () => {
  it('moves queued -> sent -> delivered, never backwards, and the thread follows only its newest message', async () => {
    const tenantId = await newOrg();
    const number = '+14155550501';
    const older = await sendMessage(tenantId, { to: number, body: 'First' }, acceptingCarrier(), minutes(70));
    const newer = await sendMessage(tenantId, { to: number, body: 'Second' }, acceptingCarrier(), minutes(71));

    await updateMessageStatus(tenantId, { messageSid: newer.messageSid }, 'delivered');
    const late = await updateMessageStatus(tenantId, { messageSid: newer.messageSid }, 'sent');
    await updateMessageStatus(tenantId, { messageId: older.id }, 'failed');

    expect(late.changed).toBe(false);
    expect((await getMessage(tenantId, newer.id)).status).toBe('delivered');
    expect((await getMessage(tenantId, older.id)).status).toBe('failed');
    expect((await listThreads(tenantId))[0]).toMatchObject({ lastMessage: 'Second', lastStatus: 'delivered' });
  });

  it('plays the loopback carrier status progress back through the same ingestion', async () => {
    const tenantId = await newOrg();
    const carrier = new LoopbackCarrier({ statusDelayMs: 0 });

    const message = await sendMessage(tenantId, { to: '+14155550502', body: 'Loop' }, carrier);
    await carrier.idle();
    await carrier.stop();

    expect(message.messageSid).toMatch(/^SM[0-9a-f]{32}$/);
    expect((await getMessage(tenantId, message.id)).status).toBe('delivered');
    expect((await listThreads(tenantId))[0].lastStatus).toBe('delivered');
  });
});

/** A carrier that fails each send as told. */
const failingCarrier = (kind: 'unknown' | 'not_sent'): Carrier & { calls: number } => {
  const carrier = {
    name: 'twilio' as const,
    calls: 0,
    send: async () => {
      carrier.calls += 1;
      throw new CarrierError(kind === 'unknown' ? 'Twilio did not answer in time' : 'Twilio could not be reached (ECONNREFUSED)', { kind });
    },
  };
  return carrier;
};

/** Charges minus refunds against the cost of the organization's texts that did not fail. */
async function ledgerDelta(tenantId: string, counterparts: string[]): Promise<number> {
  let cost = 0;
  for (const counterpart of counterparts) {
    for (const message of (await listMessages(tenantId, counterpart, { limit: 100 })).items) {
      if (message.direction !== 'outbound' || message.status === 'failed') continue;
      const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: { pk: `T#${tenantId}`, sk: `MSG#${message.id}` } }));
      cost += Item!.costCents as number;
    }
  }
  return (await spendOf(tenantId)) - cost;
}

describe('the consent ledger: a STOP belongs to the number, whatever happens to its contact', () => {
  it('keeps refusing texts to an opted-out number after its contact is deleted, renumbered away or created anew', async () => {
    // Prepare: three numbers reply STOP; each has a named contact
    const tenantId = await newOrg();
    const [deleted, renumbered, recreated] = ['+14155551001', '+14155551002', '+14155551003'];
    for (const number of [deleted, renumbered, recreated]) await inbound(tenantId, number, 'STOP', minutes(1));
    const contactOf = async (number: string) => (await createContact(tenantId, { displayName: `Contact ${number}`, phoneNumber: number })).contact;
    // Act
    await deleteContact(tenantId, (await contactOf(deleted)).id);
    const moved = await updateContact(tenantId, (await contactOf(renumbered)).id, { phoneNumber: '+14155551099' });
    const old = await contactOf(recreated);
    await deleteContact(tenantId, old.id);
    const fresh = (await createContact(tenantId, { displayName: 'Fresh', phoneNumber: recreated })).contact;
    // Assess
    for (const number of [deleted, renumbered, recreated]) {
      await expect(sendMessage(tenantId, { to: number, body: 'Still there?' }, acceptingCarrier())).rejects.toBeInstanceOf(RecipientOptedOutError);
      expect((await consentOf(tenantId, number)).status).toBe('opted_out');
    }
    expect(fresh).toMatchObject({ consentStatus: 'opted_out', consentSource: 'sms_keyword', consentNote: 'Replied STOP' });
    // The renumbered contact shows its new number's consent, not the old one's.
    expect(moved.consentStatus).toBe('unknown');
    expect((await getContact(tenantId, moved.id)).consentStatus).toBe('unknown');
    expect(await spendOf(tenantId)).toBe(0);
  });

  it('lets a later START re-allow texts, and a late older STOP change nothing', async () => {
    const tenantId = await newOrg();
    const number = '+14155551010';
    await inbound(tenantId, number, 'STOP', minutes(1));
    await inbound(tenantId, number, 'START', minutes(3));
    await inbound(tenantId, number, 'STOP', minutes(2)); // the carrier retried an older text late

    expect((await consentOf(tenantId, number)).status).toBe('opted_in');
    await expect(sendMessage(tenantId, { to: number, body: 'Welcome back' }, acceptingCarrier())).resolves.toMatchObject({ status: 'queued' });
  });
});

describe('carrier outcomes', () => {
  it('keeps a text with an unknown outcome queued and charged, and the sweep fails and refunds it once after the grace period', async () => {
    // Prepare
    const tenantId = await newOrg();
    const to = '+14155551020';
    const carrier = failingCarrier('unknown');
    // Act
    const message = await sendMessage(tenantId, { to, body: 'Maybe sent' }, carrier, minutes(1));
    const charged = await spendOf(tenantId);
    const early = await settleUnknownOutcomes({ now: minutes(30) });
    const sweeps = await Promise.all([settleUnknownOutcomes({ now: minutes(62) }), settleUnknownOutcomes({ now: minutes(62) })]);
    // Assess
    expect(message).toMatchObject({ status: 'queued', messageSid: '' });
    expect(charged).toBe(1);
    expect(early.failed).toBe(0);
    expect(sweeps.reduce((sum, run) => sum + run.failed, 0)).toBe(1);
    expect(await getMessage(tenantId, message.id)).toMatchObject({ status: 'failed' });
    expect(await spendOf(tenantId)).toBe(0);
    expect(await ledgerDelta(tenantId, [to])).toBe(0);
  });

  it('answers 502 and refunds only when nothing reached the carrier', async () => {
    const tenantId = await newOrg();

    await expect(sendMessage(tenantId, { to: '+14155551021', body: 'Not sent' }, failingCarrier('not_sent'))).rejects.toBeInstanceOf(CarrierUnavailableError);

    expect(await spendOf(tenantId)).toBe(0);
    expect((await listMessages(tenantId, '+14155551021', { limit: 5 })).items).toEqual([expect.objectContaining({ status: 'failed' })]);
  });

  it('applies a status callback that arrives before the send answer, by the message id in its URL; the late answer is harmless', async () => {
    // Prepare: the carrier has not answered yet
    const tenantId = await newOrg();
    const to = '+14155551030';
    const message = await sendMessage(tenantId, { to, body: 'Race' }, failingCarrier('unknown'));
    const sid = newSid();
    // Act: delivered arrives first, sent second (out of order), then the lost answer's sid is recorded
    await updateMessageStatus(tenantId, { messageId: message.id, messageSid: sid }, 'delivered');
    const late = await updateMessageStatus(tenantId, { messageId: message.id, messageSid: sid }, 'sent');
    const { recordMessageSid } = await import('../../lambdas/contexts/texting/delivery-status');
    await recordMessageSid(tenantId, message.id, sid);
    const swept = await settleUnknownOutcomes({ now: minutes(24 * 60) });
    // Assess
    expect(late.changed).toBe(false);
    expect(await getMessage(tenantId, message.id)).toMatchObject({ status: 'delivered', messageSid: sid });
    expect(await updateMessageStatus(tenantId, { messageSid: sid }, 'failed')).toMatchObject({ changed: false });
    expect(swept.failed).toBe(0); // settled: out of the worklist
    expect(await ledgerDelta(tenantId, [to])).toBe(0);
  });

  it('refunds a text failed by two concurrent callbacks exactly once', async () => {
    const tenantId = await newOrg();
    const to = '+14155551040';
    const message = await sendMessage(tenantId, { to, body: 'Doomed' }, acceptingCarrier());

    await Promise.all([
      updateMessageStatus(tenantId, { messageSid: message.messageSid }, 'failed'),
      updateMessageStatus(tenantId, { messageSid: message.messageSid }, 'failed'),
      updateMessageStatus(tenantId, { messageId: message.id }, 'failed'),
    ]);

    expect(await spendOf(tenantId)).toBe(0);
    expect(await ledgerDelta(tenantId, [to])).toBe(0);
  });
});
