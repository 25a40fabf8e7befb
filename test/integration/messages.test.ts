import { randomBytes } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { retryWhileBusy } from '../support/busy-retry';
import { moneyLedgerOf, unsettledMessageIds } from '../support/ledger';
import { createTestTable } from '../support/table';
import { expectTransactionsMet, markRaceMeters, roundsUntilTransactionsMeet } from '../support/engine-meters';
import { rendezvous } from '../support/request-rendezvous';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import {
  CarrierError,
  type Carrier,
  type CarrierErrorDetails,
  type OutboundText,
} from '../../lambdas/contexts/texting/carrier-port';
import { LoopbackCarrier } from '../../lambdas/contexts/carrier/loopback';
import { consentOf } from '../../lambdas/contexts/consent/ledger';
import { createContact, deleteContact, getContact, updateContact } from '../../lambdas/contexts/contacts/contacts';
import { settleUnknownOutcomes } from '../../lambdas/contexts/texting/settlement';
import {
  BillingBlockedError,
  CarrierRejectedError,
  CarrierUnavailableError,
  NoSmsNumberError,
  RecipientOptedOutError,
  SpendingLimitReachedError,
} from '../../lambdas/contexts/texting/errors';
import { recordMessageSid, updateMessageStatus } from '../../lambdas/contexts/texting/delivery-status';
import { getMessage, getMessageItem, listMessages } from '../../lambdas/contexts/texting/messages';
import { spendOf } from '../../lambdas/contexts/texting/spend';
import { receiveInboundMessage } from '../../lambdas/contexts/texting/receiving';
import { sendMessage as sendText } from '../../lambdas/contexts/texting/sending';
import {
  createTenant,
  getTenant,
  tenantKey,
  updateTenant,
  type TenantInput,
} from '../../lambdas/contexts/tenants/tenants';
import { listThreads, threadKey } from '../../lambdas/contexts/texting/threads';

/** The first page of threads (these tests keep well under 100). */
const firstThreads = async (tenantId: string) => (await listThreads(tenantId, { limit: 100 })).items;

const ORG_NUMBER = '+14155550000';
const base = Date.parse('2026-10-01T09:00:00.000Z');
const minutes = (n: number) => new Date(base + n * 60_000);

/** The send as most tests here need it: the message it answers with, at a given time. */
const sendMessage = async (tenantId: string, input: { to: string; body: string }, carrier: Carrier, now = minutes(1)) =>
  (await sendText(tenantId, input, carrier, { now })).message;
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

/**
 * A carrier that fails every send with `failure` (a CarrierError's details, or any other error), counting the calls.
 */
function failingCarrier(failure: CarrierErrorDetails | Error): Carrier & { calls: number } {
  const carrier = {
    name: 'twilio' as const,
    calls: 0,
    send: async (): Promise<never> => {
      carrier.calls += 1;
      throw failure instanceof Error ? failure : new CarrierError(`Twilio failed the send (${failure.kind})`, failure);
    },
  };
  return carrier;
}

/** Each organization its own SMS number: a number belongs to one organization only. */
let orgNumbers = 0;
const newOrg = async (overrides: Partial<TenantInput> = {}) =>
  (
    await createTenant({
      name: 'Texting Org',
      smsNumber: `+1628555${String((orgNumbers += 1)).padStart(4, '0')}`,
      ...overrides,
    })
  ).id;
const smsNumberOf = async (tenantId: string) => (await getTenant(tenantId))!.smsNumber!;

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
    const message = await sendMessage(
      tenantId,
      { to: '+14155550101', body: 'Your order shipped' },
      carrier,
      minutes(1),
    );
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
    expect(carrier.sent).toEqual([
      { tenantId, messageId: message.id, from: orgNumber, to: '+14155550101', body: 'Your order shipped' },
    ]);
    expect(await getMessage(tenantId, message.id)).toEqual(message);
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 1, owedCents: 1 });
    expect(await unsettledMessageIds(tenantId)).toEqual([]); // the sid settles it
    expect(await firstThreads(tenantId)).toEqual([
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
    expect((await firstThreads(tenantId))[0].lastStatus).toBe('sent');
  });

  it("bills segments x the organization's rate", async () => {
    const tenantId = await newOrg();
    await dynamo.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: tenantKey(tenantId),
        UpdateExpression: 'SET smsRateCents = :rate',
        ExpressionAttributeValues: { ':rate': 3 },
      }),
    );

    await sendMessage(tenantId, { to: '+14155550102', body: 'x'.repeat(161) }, acceptingCarrier());

    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 6, owedCents: 6 });
    const { Item } = await dynamo.send(
      new GetCommand({ TableName: TABLE_NAME, Key: threadKey(tenantId, '+14155550102') }),
    );
    expect(Item).toMatchObject({ messageCount: 1, unreadCount: 0 });
  });

  it('refuses without an SMS number (409), to an opted-out number (409) and on blocked billing (402), charging nothing', async () => {
    const noNumber = await newOrg({ smsNumber: null });
    const tenantId = await newOrg();
    await inbound(tenantId, '+14155550103', 'STOP', minutes(2));
    const blocked = await newOrg({ billingStatus: 'past_due' });
    const carrier = acceptingCarrier();

    await expect(sendMessage(noNumber, { to: '+14155550104', body: 'hi' }, carrier)).rejects.toBeInstanceOf(
      NoSmsNumberError,
    );
    await expect(sendMessage(tenantId, { to: '+14155550103', body: 'hi' }, carrier)).rejects.toBeInstanceOf(
      RecipientOptedOutError,
    );
    await expect(sendMessage(blocked, { to: '+14155550104', body: 'hi' }, carrier)).rejects.toBeInstanceOf(
      BillingBlockedError,
    );

    expect(carrier.sent).toHaveLength(0);
    for (const org of [noNumber, tenantId, blocked])
      expect(await moneyLedgerOf(org)).toEqual({ spendCents: 0, owedCents: 0 });
  });

  // Near the limit every send races for the last cents: a send that outlasts its retries answers 503
  // with Retry-After, and the client sends it again (retryWhileBusy), as ours would. What these
  // prove is exactness: exactly k charged, whatever the interleaving.
  it('never overspends under concurrency: with a limit allowing exactly k sends, exactly k of N parallel sends succeed, the rest 402', async () => {
    const k = 3;
    const tenantId = await newOrg({ spendingLimitCents: k });
    const carrier = acceptingCarrier();

    const attempts = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) =>
        retryWhileBusy(() =>
          sendMessage(tenantId, { to: `+1415555${String(1000 + i)}`, body: `Parallel ${i}` }, carrier),
        ),
      ),
    );

    const succeeded = attempts.filter((a) => a.status === 'fulfilled');
    const refused = attempts.filter((a) => a.status === 'rejected' && a.reason instanceof SpendingLimitReachedError);
    expect(succeeded).toHaveLength(k);
    expect(refused).toHaveLength(10 - k);
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: k, owedCents: k });
    expect(carrier.sent).toHaveLength(k);
    expect(await firstThreads(tenantId)).toHaveLength(k);
  }, 60_000);

  // More sends than shards and than the limit allows: every shard's headroom is taken or refused, whatever the order.
  it('spends exactly up to a limit spread over the 32 spend shards: 40 parallel sends against 25 cents, 25 succeed, the rest 402', async () => {
    const tenantId = await newOrg({ spendingLimitCents: 25 });
    const carrier = acceptingCarrier();

    const attempts = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) =>
        retryWhileBusy(() =>
          sendMessage(tenantId, { to: `+1415555${String(2000 + i)}`, body: `Parallel ${i}` }, carrier),
        ),
      ),
    );

    expect(attempts.filter((a) => a.status === 'fulfilled')).toHaveLength(25);
    expect(
      attempts.filter((a) => a.status === 'rejected' && a.reason instanceof SpendingLimitReachedError),
    ).toHaveLength(15);
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 25, owedCents: 25 });
    expect(carrier.sent).toHaveLength(25);
  }, 60_000);

  it('blocks at once when the operator blocks billing or lowers the limit below the spend, and sends again when both are lifted', async () => {
    const tenantId = await newOrg({ spendingLimitCents: 100 });
    const carrier = acceptingCarrier();
    await sendMessage(tenantId, { to: '+14155550120', body: 'one' }, carrier);
    await sendMessage(tenantId, { to: '+14155550121', body: 'two' }, carrier);

    await updateTenant(tenantId, { billingStatus: 'suspended' });
    const blocked = sendMessage(tenantId, { to: '+14155550122', body: 'three' }, carrier);
    await expect(blocked).rejects.toBeInstanceOf(BillingBlockedError);
    await updateTenant(tenantId, { billingStatus: 'active', spendingLimitCents: 2 });
    const overLimit = sendMessage(tenantId, { to: '+14155550122', body: 'three' }, carrier);
    await expect(overLimit).rejects.toBeInstanceOf(SpendingLimitReachedError);
    await updateTenant(tenantId, { spendingLimitCents: null });
    await sendMessage(tenantId, { to: '+14155550122', body: 'three' }, carrier);

    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 3, owedCents: 3 });
    expect(carrier.sent).toHaveLength(3);
  }, 30_000);

  it('refuses a text that alone costs more than the limit of an organization never charged before', async () => {
    const tenantId = await newOrg({ spendingLimitCents: 1 });
    const carrier = acceptingCarrier();

    // Two segments at the default rate: 2 cents against a limit of 1
    await expect(sendMessage(tenantId, { to: '+14155550108', body: 'x'.repeat(161) }, carrier)).rejects.toBeInstanceOf(
      SpendingLimitReachedError,
    );

    expect(carrier.sent).toHaveLength(0);
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 0, owedCents: 0 });
  });

  it('follows a limit the operator raises', async () => {
    const tenantId = await newOrg({ spendingLimitCents: 0 });
    await expect(sendMessage(tenantId, { to: '+14155550107', body: 'one' }, acceptingCarrier())).rejects.toBeInstanceOf(
      SpendingLimitReachedError,
    );

    await updateTenant(tenantId, { spendingLimitCents: 1 });

    await expect(sendMessage(tenantId, { to: '+14155550107', body: 'one' }, acceptingCarrier())).resolves.toMatchObject(
      { status: 'queued' },
    );
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

    const threads = await firstThreads(tenantId);

    expect(threads.map((t) => [t.counterpartNumber, t.hasUnread, t.messageCount])).toEqual([
      ['+14155550203', true, 1],
      ['+14155550202', true, 2],
      ['+14155550201', true, 1],
    ]);
    expect(threads[1]).toMatchObject({
      lastMessage: 'Reminder',
      lastDirection: 'outbound',
      lastAt: minutes(11).toISOString(),
    });
    expect(threads[0]).toMatchObject({ lastDirection: 'inbound', lastStatus: 'received' });
  });

  it('keeps counters exact under concurrent inbound and outbound texts on one thread', async () => {
    const tenantId = await newOrg();
    const number = '+14155550204';
    const meters = await markRaceMeters();

    // Sixteen writes of one thread at once: on DynamoDB's limits some are answered busy and sent again, as their
    // callers would.
    await Promise.all([
      ...Array.from({ length: 8 }, (_, i) =>
        retryWhileBusy(() => inbound(tenantId, number, `In ${i}`, minutes(20 + i), `SMin${i}x${tenantId.slice(-8)}`)),
      ),
      ...Array.from({ length: 8 }, (_, i) =>
        retryWhileBusy(() =>
          sendMessage(tenantId, { to: number, body: `Out ${i}` }, acceptingCarrier(), minutes(20 + i)),
        ),
      ),
    ]);

    const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: threadKey(tenantId, number) }));
    expect(Item).toMatchObject({ messageCount: 16, unreadCount: 8 });
    const all = await listMessages(tenantId, number, { limit: 100 });
    expect(all.items).toHaveLength(16);
    // The thread's last message is the newest of them all, whatever order the writes landed in.
    expect(Item!.lastMessageId).toBe(all.items[0].id);
    await expectTransactionsMet(meters);
  }, 30_000);
});

describe('a conversation', () => {
  it('pages newest first with the message id as cursor, nextCursor null exactly on the last page', async () => {
    const tenantId = await newOrg();
    const number = '+14155550301';
    const ids: string[] = [];
    for (const n of [2, 0, 4, 1, 3])
      ids[n] = (await inbound(tenantId, number, `Message ${n}`, minutes(30 + n))).message.id;
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
    expect(first.items[0]).toMatchObject({
      direction: 'inbound',
      status: 'received',
      isRead: false,
      body: 'Message 4',
      toNumber: ORG_NUMBER,
    });
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

    expect(contactBefore).toMatchObject({
      source: 'auto_inbound',
      isAutoCreated: true,
      normalizedNumber: number,
      consentStatus: 'unknown',
    });
    expect(afterSentence.consentStatus).toBe('unknown');
    expect(stop.consent).toEqual({ keyword: 'STOP', status: 'opted_out' });
    expect(optedOut).toMatchObject({
      consentStatus: 'opted_out',
      consentSource: 'sms_keyword',
      consentAt: minutes(52).toISOString(),
      consentNote: 'Replied STOP',
    });
    expect(optedIn).toMatchObject({
      consentStatus: 'opted_in',
      consentSource: 'sms_keyword',
      consentNote: 'Replied START',
    });
    // The contact only shows it: the number's row in the ledger holds it.
    expect(await consentOf(tenantId, number)).toEqual({
      status: 'opted_in',
      source: 'sms_keyword',
      at: minutes(53).toISOString(),
      note: 'Replied START',
    });
    await expect(
      sendMessage(tenantId, { to: number, body: 'Welcome back' }, acceptingCarrier()),
    ).resolves.toMatchObject({ status: 'queued' });
  });

  it('lets a late, older keyword not override a newer one: a late YES does not re-allow texts', async () => {
    const tenantId = await newOrg();
    const number = '+14155550402';
    const { contactId } = await inbound(tenantId, number, 'UNSUBSCRIBE', minutes(60));

    const late = await inbound(tenantId, number, 'yes', minutes(59));

    expect(late.duplicate).toBe(false); // stored as a message all the same
    expect(await consentOf(tenantId, number)).toEqual({
      status: 'opted_out',
      source: 'sms_keyword',
      at: minutes(60).toISOString(),
      note: 'Replied UNSUBSCRIBE',
    });
    expect(await getContact(tenantId, contactId)).toMatchObject({
      consentStatus: 'opted_out',
      consentNote: 'Replied UNSUBSCRIBE',
    });
    await expect(sendMessage(tenantId, { to: number, body: 'Hello?' }, acceptingCarrier())).rejects.toBeInstanceOf(
      RecipientOptedOutError,
    );
  });

  it('stores a carrier retry of the same sid once', async () => {
    const tenantId = await newOrg();
    const sid = newSid();

    const first = await inbound(tenantId, '+14155550403', 'Once', minutes(61), sid);
    const retry = await inbound(tenantId, '+14155550403', 'Once', minutes(61), sid);

    expect(retry).toMatchObject({ duplicate: true, message: first.message });
    expect((await firstThreads(tenantId))[0].messageCount).toBe(1);
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
    expect((await firstThreads(tenantId))[0]).toMatchObject({ lastMessage: 'Second', lastStatus: 'delivered' });
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 1, owedCents: 1 }); // the failed one was refunded
  });

  it('plays the loopback carrier status progress back through the same ingestion', async () => {
    const tenantId = await newOrg();
    const carrier = new LoopbackCarrier({ statusDelayMs: 0 });

    const message = await sendMessage(tenantId, { to: '+14155550502', body: 'Loop' }, carrier);
    await carrier.idle();
    await carrier.stop();

    expect(message.messageSid).toMatch(/^SM[0-9a-f]{32}$/);
    expect((await getMessage(tenantId, message.id)).status).toBe('delivered');
    expect((await firstThreads(tenantId))[0].lastStatus).toBe('delivered');
  });
});

describe('the consent ledger: a STOP belongs to the number, whatever happens to its contact', () => {
  /** An organization whose `number` replied STOP (its contact auto-created), and that contact named. */
  async function optedOut(number: string) {
    const tenantId = await newOrg();
    await inbound(tenantId, number, 'STOP', minutes(1));
    const { contact } = await createContact(tenantId, { displayName: 'Stopped Stella', phoneNumber: number });
    return { tenantId, contact };
  }

  it('keeps refusing texts (409) to an opted-out number after its contact is deleted', async () => {
    // Prepare
    const number = '+14155551001';
    const { tenantId, contact } = await optedOut(number);
    const carrier = acceptingCarrier();
    // Act
    await deleteContact(tenantId, contact.id);
    // Assess
    await expect(sendMessage(tenantId, { to: number, body: 'Still there?' }, carrier)).rejects.toBeInstanceOf(
      RecipientOptedOutError,
    );
    expect(await consentOf(tenantId, number)).toMatchObject({
      status: 'opted_out',
      source: 'sms_keyword',
      note: 'Replied STOP',
    });
    expect(carrier.sent).toHaveLength(0);
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 0, owedCents: 0 });
  });

  it('keeps refusing texts to the old number after its contact is renumbered away; the new number is not opted out', async () => {
    // Prepare
    const [number, newNumber] = ['+14155551002', '+14155551092'];
    const { tenantId, contact } = await optedOut(number);
    const carrier = acceptingCarrier();
    // Act
    const moved = await updateContact(tenantId, contact.id, { phoneNumber: newNumber });
    // Assess
    await expect(sendMessage(tenantId, { to: number, body: 'Still there?' }, carrier)).rejects.toBeInstanceOf(
      RecipientOptedOutError,
    );
    expect((await consentOf(tenantId, number)).status).toBe('opted_out');
    // The contact shows its new number's consent, which nobody withdrew.
    expect(moved.consentStatus).toBe('unknown');
    expect((await consentOf(tenantId, newNumber)).status).toBe('unknown');
    await expect(sendMessage(tenantId, { to: newNumber, body: 'New number' }, carrier)).resolves.toMatchObject({
      status: 'queued',
    });
    expect(carrier.sent.map((t) => t.to)).toEqual([newNumber]);
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 1, owedCents: 1 });
  });

  it('keeps refusing texts to the number when a new contact is created for it', async () => {
    // Prepare
    const number = '+14155551003';
    const { tenantId, contact } = await optedOut(number);
    await deleteContact(tenantId, contact.id);
    const carrier = acceptingCarrier();
    // Act
    const { contact: fresh } = await createContact(tenantId, { displayName: 'Fresh Fred', phoneNumber: number });
    // Assess
    expect(fresh).toMatchObject({
      consentStatus: 'opted_out',
      consentSource: 'sms_keyword',
      consentNote: 'Replied STOP',
    });
    await expect(sendMessage(tenantId, { to: number, body: 'Hi Fred' }, carrier)).rejects.toBeInstanceOf(
      RecipientOptedOutError,
    );
    expect(carrier.sent).toHaveLength(0);
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 0, owedCents: 0 });
  });

  it('lets a later START re-allow texts, and a late older STOP change nothing', async () => {
    // Prepare
    const tenantId = await newOrg();
    const number = '+14155551010';
    await inbound(tenantId, number, 'STOP', minutes(1));
    // Act
    await inbound(tenantId, number, 'START', minutes(3));
    await inbound(tenantId, number, 'STOP', minutes(2)); // the carrier retried an older text late
    // Assess
    expect(await consentOf(tenantId, number)).toEqual({
      status: 'opted_in',
      source: 'sms_keyword',
      at: minutes(3).toISOString(),
      note: 'Replied START',
    });
    await expect(
      sendMessage(tenantId, { to: number, body: 'Welcome back' }, acceptingCarrier(), minutes(4)),
    ).resolves.toMatchObject({ status: 'queued' });
    // Both STOPs are stored as messages all the same.
    expect((await listMessages(tenantId, number, { limit: 10 })).items.map((m) => m.body)).toEqual([
      'Welcome back',
      'START',
      'STOP',
      'STOP',
    ]);
  });
});

describe('carrier outcomes', () => {
  it('fails and refunds a text the carrier refused, answering 422 carrier_rejected', async () => {
    // Prepare: the limit allows exactly one text
    const tenantId = await newOrg({ spendingLimitCents: 1 });
    const to = '+14155551020';
    const carrier = failingCarrier({ kind: 'refused', httpStatus: 400, providerCode: 21211 });
    // Act
    const refusal = await sendMessage(tenantId, { to, body: 'hello' }, carrier).catch((err: unknown) => err);
    // Assess
    expect(refusal).toBeInstanceOf(CarrierRejectedError);
    const [failed] = (await listMessages(tenantId, to, { limit: 10 })).items;
    expect(refusal).toMatchObject({
      status: 422,
      code: 'carrier_rejected',
      details: { messageId: failed.id, carrierCode: 21211 },
    });
    expect(failed).toMatchObject({ status: 'failed', messageSid: '' });
    expect(await getMessageItem(tenantId, failed.id)).toMatchObject({
      failureReason: 'carrier_rejected',
      carrierCode: 21211,
    });
    expect((await firstThreads(tenantId))[0]).toMatchObject({ lastStatus: 'failed', messageCount: 1 });
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 0, owedCents: 0 });
    expect(await unsettledMessageIds(tenantId)).toEqual([]);
    // The refund restored the budget: the one cent the limit allows is still there.
    await expect(sendMessage(tenantId, { to, body: 'hello' }, acceptingCarrier())).resolves.toMatchObject({
      status: 'queued',
    });
  });

  it.each([
    ['a refused connection', { kind: 'not_sent' } as const],
    ['429 Too Many Requests', { kind: 'not_sent', httpStatus: 429 } as const],
    ['401, our credentials refused', { kind: 'not_sent', httpStatus: 401 } as const],
  ])(
    'fails and refunds a text that never reached the carrier (%s), answering 502 carrier_unavailable',
    async (_, failure) => {
      // Prepare
      const tenantId = await newOrg();
      const to = '+14155551021';
      // Act
      const unavailable = await sendMessage(tenantId, { to, body: 'Not sent' }, failingCarrier(failure)).catch(
        (err: unknown) => err,
      );
      // Assess
      expect(unavailable).toBeInstanceOf(CarrierUnavailableError);
      expect(unavailable).toMatchObject({ status: 502, code: 'carrier_unavailable' });
      const [failed] = (await listMessages(tenantId, to, { limit: 5 })).items;
      expect(failed.status).toBe('failed');
      expect(await getMessageItem(tenantId, failed.id)).toMatchObject({ failureReason: 'carrier_unavailable' });
      expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 0, owedCents: 0 });
      expect(await unsettledMessageIds(tenantId)).toEqual([]);
    },
  );

  const GRACE_MS = 10 * 60_000;

  it.each([
    ['a timeout', { kind: 'unknown' } as const],
    ['a 503 from the carrier', { kind: 'unknown', httpStatus: 503 } as const],
    ['an error that is no CarrierError', new Error('socket hang up')],
  ])(
    'keeps a text whose outcome is unknown (%s) queued and charged; the sweep fails and refunds it once after the ' +
      'grace period',
    async (_, failure) => {
      // Prepare
      const tenantId = await newOrg();
      const to = '+14155551022';
      const carrier = failingCarrier(failure);
      const message = await sendMessage(tenantId, { to, body: 'Maybe sent' }, carrier, minutes(1));
      const charged = await moneyLedgerOf(tenantId);
      const queued = await unsettledMessageIds(tenantId);
      // Act
      await settleUnknownOutcomes({ now: minutes(5), graceMs: GRACE_MS }); // within the grace period
      const early = await getMessage(tenantId, message.id);
      await settleUnknownOutcomes({ now: minutes(20), graceMs: GRACE_MS });
      const afterFirst = await moneyLedgerOf(tenantId);
      await settleUnknownOutcomes({ now: minutes(21), graceMs: GRACE_MS }); // a second run finds nothing to refund
      // Assess
      expect(message).toMatchObject({ status: 'queued', messageSid: '' });
      expect(carrier.calls).toBe(1);
      expect(charged).toEqual({ spendCents: 1, owedCents: 1 });
      expect(queued).toEqual([message.id]);
      expect(early.status).toBe('queued');
      expect(afterFirst).toEqual({ spendCents: 0, owedCents: 0 });
      expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 0, owedCents: 0 });
      expect(await getMessageItem(tenantId, message.id)).toMatchObject({
        status: 'failed',
        failureReason: 'carrier_outcome_unknown',
      });
      expect(await unsettledMessageIds(tenantId)).toEqual([]);
    },
  );

  it('refunds an unknown outcome once when two sweeps run at the same time', async () => {
    // The racers may miss each other by a hair (one settles before the other reaches the engine): a right outcome
    // that proves nothing, so the race runs again, on a new text, until their transactions meet.
    await roundsUntilTransactionsMeet(1, async () => {
      const tenantId = await newOrg();
      const message = await sendMessage(
        tenantId,
        { to: '+14155551023', body: 'Swept twice' },
        failingCarrier({ kind: 'unknown' }),
        minutes(1),
      );
      // The sweeps read their shards in parallel, so left alone one may settle the text before the other
      // reaches it: the first settling transaction waits until the second has set off, and they meet.
      const settles = (input: string) => input.includes('TransactItems') && input.includes('carrier_outcome_unknown');
      let firstSettleSeen = false;
      const meeting = rendezvous(dynamo, {
        held: (input) => settles(input) && (firstSettleSeen = true),
        until: (input) => firstSettleSeen && settles(input),
      });
      meeting.arm();
      try {
        await Promise.all([
          settleUnknownOutcomes({ now: minutes(20), graceMs: GRACE_MS }),
          settleUnknownOutcomes({ now: minutes(20), graceMs: GRACE_MS }),
        ]);
      } finally {
        meeting.remove();
      }

      expect(meeting.met()).toBe(true);
      expect((await getMessage(tenantId, message.id)).status).toBe('failed');
      expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 0, owedCents: 0 });
    });
  });
});

describe('status callbacks and the send answer, in any order', () => {
  /** A text whose send answer never came: queued, charged, no sid. */
  async function unanswered(to: string) {
    const tenantId = await newOrg();
    const message = await sendMessage(tenantId, { to, body: 'Race' }, failingCarrier({ kind: 'unknown' }), minutes(1));
    return { tenantId, message };
  }

  it('applies a callback that arrives before the send answer by the message id in its URL, recording the sid with the status', async () => {
    // Prepare
    const { tenantId, message } = await unanswered('+14155551030');
    const sid = newSid();
    // Act
    const applied = await updateMessageStatus(tenantId, { messageId: message.id, messageSid: sid }, 'sent');
    // Assess
    expect(applied).toMatchObject({ changed: true, message: { id: message.id, status: 'sent', messageSid: sid } });
    expect(await getMessage(tenantId, message.id)).toMatchObject({ status: 'sent', messageSid: sid });
    expect(await unsettledMessageIds(tenantId)).toEqual([]);
    // The sid's lookup row was written too: a callback naming only the sid finds the message.
    await expect(updateMessageStatus(tenantId, { messageSid: sid }, 'delivered')).resolves.toMatchObject({
      changed: true,
    });
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 1, owedCents: 1 });
  });

  it('takes the late send answer with the same sid harmlessly, and refuses another sid', async () => {
    // Prepare
    const { tenantId, message } = await unanswered('+14155551031');
    const sid = newSid();
    await updateMessageStatus(tenantId, { messageId: message.id, messageSid: sid }, 'delivered');
    // Act
    const sameSid = await recordMessageSid(tenantId, message.id, sid);
    const otherSid = await recordMessageSid(tenantId, message.id, newSid());
    // Assess
    expect([sameSid, otherSid]).toEqual([true, false]);
    expect(await getMessage(tenantId, message.id)).toMatchObject({ status: 'delivered', messageSid: sid });
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 1, owedCents: 1 });
  });

  it('never moves a status backwards: sent after delivered, and failed after delivered, change nothing and refund nothing', async () => {
    // Prepare
    const { tenantId, message } = await unanswered('+14155551032');
    const sid = newSid();
    await updateMessageStatus(tenantId, { messageId: message.id, messageSid: sid }, 'delivered');
    // Act
    const lateSent = await updateMessageStatus(tenantId, { messageId: message.id, messageSid: sid }, 'sent');
    const lateFailed = await updateMessageStatus(tenantId, { messageSid: sid }, 'failed');
    await settleUnknownOutcomes({ now: minutes(24 * 60) }); // settled: out of the worklist, the sweep skips it
    // Assess
    expect([lateSent.changed, lateFailed.changed]).toEqual([false, false]);
    expect(await getMessage(tenantId, message.id)).toMatchObject({ status: 'delivered', messageSid: sid });
    expect((await firstThreads(tenantId))[0].lastStatus).toBe('delivered');
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 1, owedCents: 1 });
  });

  it('refunds a queued text failed by concurrent callbacks exactly once', async () => {
    // Left alone, the callbacks may land one after another (right, but no race): again, on a new text, until they meet.
    await roundsUntilTransactionsMeet(1, async () => {
      // Prepare
      const tenantId = await newOrg();
      const message = await sendMessage(tenantId, { to: '+14155551040', body: 'Doomed' }, acceptingCarrier());
      // Act: Twilio retries the same callback, and a second one names our id
      const results = await Promise.all([
        updateMessageStatus(tenantId, { messageSid: message.messageSid }, 'failed'),
        updateMessageStatus(tenantId, { messageSid: message.messageSid }, 'failed'),
        updateMessageStatus(tenantId, { messageId: message.id, messageSid: message.messageSid }, 'failed'),
      ]);
      // Assess
      expect(results.filter((r) => r.changed)).toHaveLength(1);
      expect((await getMessage(tenantId, message.id)).status).toBe('failed');
      expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 0, owedCents: 0 });
    });
  });
});
