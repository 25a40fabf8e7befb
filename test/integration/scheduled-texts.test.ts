import { randomBytes } from 'node:crypto';
import { moneyLedgerOf } from '../support/ledger';
import { createTestTable } from '../support/table';
import { recordConsentChange } from '../../lambdas/contexts/contacts/consent-copies';
import type { Carrier, OutboundText } from '../../lambdas/contexts/texting/carrier-port';
import { NotScheduledError, SpendingLimitReachedError } from '../../lambdas/contexts/texting/errors';
import { getMessage, getMessageItem } from '../../lambdas/contexts/texting/messages';
import { receiveInboundMessage } from '../../lambdas/contexts/texting/receiving';
import { cancelScheduledText, rescheduleText } from '../../lambdas/contexts/texting/scheduled-changes';
import { fireDueTexts } from '../../lambdas/contexts/texting/scheduled-texts';
import { sendMessage } from '../../lambdas/contexts/texting/sending';
import { ValidationError } from '../../lambdas/shared/errors';
import { GSIS } from '../../lambdas/shared/table/table-schema';
import { createTenant, updateTenant, type TenantInput } from '../../lambdas/contexts/tenants/tenants';

/**
 * Scheduled texts on DynamoDB Local, the clock driven by the tests (`now`): scheduling reserves the
 * cost, a cancel gives it back, the firing sends each due text once and never before its time, and
 * judges consent and billing again at its time. Every firing reads the whole table's due list, so
 * each test lives earlier in time than the one before it: a test's firing never reaches the texts
 * an earlier test left scheduled.
 */
let testIndex = 0;
const clockOfTest = () => {
  testIndex += 1;
  const base = Date.parse('2027-06-01T12:00:00.000Z') - testIndex * 24 * 60 * 60 * 1000;
  return (seconds: number) => new Date(base + seconds * 1000);
};

function acceptingCarrier(): Carrier & { sent: OutboundText[] } {
  const sent: OutboundText[] = [];
  return {
    name: 'loopback',
    sent,
    send: async (text) => {
      sent.push(text);
      return { messageSid: `SM${randomBytes(16).toString('hex')}` };
    },
  };
}

let orgNumbers = 0;
const newOrg = async (overrides: Partial<TenantInput> = {}) =>
  (
    await createTenant({
      name: 'Scheduling Org',
      smsNumber: `+1628556${String((orgNumbers += 1)).padStart(4, '0')}`,
      ...overrides,
    })
  ).id;

const schedule = (tenantId: string, to: string, sendAt: Date, now: Date, idempotencyKey?: string) =>
  sendMessage(tenantId, { to, body: 'See you tomorrow', sendAt: sendAt.toISOString() }, acceptingCarrier(), {
    now,
    idempotencyKey,
  });

beforeAll(createTestTable);

describe('scheduling a text', () => {
  it('stores it scheduled with its cost reserved: a fifth over a 4-cent limit is 402, a cancel makes room', async () => {
    // Prepare
    const at = clockOfTest();
    const tenantId = await newOrg({ spendingLimitCents: 4 });
    const carrier = acceptingCarrier();
    // Act
    const four = [];
    for (let i = 0; i < 4; i += 1) four.push((await schedule(tenantId, `+1415555020${i}`, at(75), at(0))).message);
    const fifth = schedule(tenantId, '+14155550209', at(75), at(0));
    // Assess
    expect(four.map((m) => [m.status, m.sendAt])).toEqual(four.map(() => ['scheduled', at(75).toISOString()]));
    await expect(fifth).rejects.toBeInstanceOf(SpendingLimitReachedError);
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 4, owedCents: 4 });
    expect(carrier.sent).toEqual([]);

    // Act: a cancel gives the cost back; a second one is 409.
    const canceled = await cancelScheduledText(tenantId, four[0].id, 'api');
    const again = cancelScheduledText(tenantId, four[0].id, 'api');
    const another = await schedule(tenantId, '+14155550209', at(75), at(1));
    // Assess
    expect(canceled).toMatchObject({ status: 'canceled', cancelReason: 'api' });
    await expect(again).rejects.toBeInstanceOf(NotScheduledError);
    expect(another.message.status).toBe('scheduled');
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 4, owedCents: 4 });
    expect((await getMessageItem(tenantId, four[0].id))[GSIS.gsi2.partitionKey]).toBeUndefined();
  });

  it('refuses a sendAt less than a minute ahead, in the past or more than 90 days ahead, naming sendAt', async () => {
    // Prepare
    const at = clockOfTest();
    const tenantId = await newOrg();
    // Act
    const attempts = [at(59), at(-10), at(120 * 24 * 60 * 60)].map((sendAt) =>
      schedule(tenantId, '+14155550210', sendAt, at(0)),
    );
    // Assess
    for (const attempt of attempts) {
      await expect(attempt).rejects.toBeInstanceOf(ValidationError);
      await expect(attempt).rejects.toThrow(/^sendAt: /);
    }
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 0, owedCents: 0 });
  });
});

describe('firing scheduled texts', () => {
  it('sends a text once, at its time and never before, however often and concurrently the firing runs', async () => {
    // Prepare
    const at = clockOfTest();
    const tenantId = await newOrg();
    const { message } = await schedule(tenantId, '+14155550220', at(75), at(0));
    const carrier = acceptingCarrier();
    // Act
    const early = await fireDueTexts({ now: at(74), carrier });
    const runs = await Promise.all([1, 2, 3].map(() => fireDueTexts({ now: at(80), carrier })));
    const later = await fireDueTexts({ now: at(130), carrier });
    // Assess
    expect(early.sent).toBe(0);
    expect(runs.reduce((sum, r) => sum + r.sent, 0)).toBe(1);
    expect(later).toMatchObject({ examined: 0, sent: 0 });
    expect(carrier.sent.map((t) => t.messageId)).toEqual([message.id]);
    const fired = await getMessage(tenantId, message.id);
    expect(fired).toMatchObject({ status: 'queued', sendAt: at(75).toISOString() });
    expect(fired.messageSid).toMatch(/^SM/);
    expect(Math.max(...runs.map((r) => r.maxLateMs))).toBeGreaterThanOrEqual(5_000);
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 1, owedCents: 1 });
  });

  it('never sends a canceled text, nor one whose recipient replied STOP (canceled at once, refunded)', async () => {
    // Prepare
    const at = clockOfTest();
    const tenantId = await newOrg();
    const canceled = (await schedule(tenantId, '+14155550230', at(75), at(0))).message;
    const toStop = [
      (await schedule(tenantId, '+14155550231', at(75), at(0))).message,
      (await schedule(tenantId, '+14155550231', at(600), at(0))).message,
    ];
    const kept = (await schedule(tenantId, '+14155550232', at(75), at(0))).message;
    await cancelScheduledText(tenantId, canceled.id, 'api');
    // Act
    await receiveInboundMessage(tenantId, {
      from: '+14155550231',
      to: '+16285560000',
      body: 'STOP',
      messageSid: `SM${randomBytes(16).toString('hex')}`,
      receivedAt: at(10),
    });
    const carrier = acceptingCarrier();
    const run = await fireDueTexts({ now: at(700), carrier });
    // Assess
    expect(carrier.sent.map((t) => t.messageId)).toEqual([kept.id]);
    expect(run).toMatchObject({ sent: 1, canceled: 0 });
    for (const m of toStop) {
      expect(await getMessage(tenantId, m.id)).toMatchObject({ status: 'canceled', cancelReason: 'opted_out' });
    }
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 1, owedCents: 1 });
  });

  it('judges consent and billing again at its time: an opt-out it missed or a billing block cancels and refunds', async () => {
    // Prepare
    const at = clockOfTest();
    const optedOut = await newOrg();
    const blocked = await newOrg();
    const missed = (await schedule(optedOut, '+14155550240', at(75), at(0))).message;
    const unpaid = (await schedule(blocked, '+14155550241', at(75), at(0))).message;
    // An opt-out recorded in the ledger alone, as if the cancel that follows it had crashed.
    await recordConsentChange(optedOut, '+14155550240', {
      status: 'opted_out',
      source: 'email',
      at: at(10),
      note: 'Asked by email',
    });
    await updateTenant(blocked, { billingStatus: 'suspended' });
    const carrier = acceptingCarrier();
    // Act
    const run = await fireDueTexts({ now: at(80), carrier });
    // Assess
    expect(carrier.sent).toEqual([]);
    expect(run).toMatchObject({ sent: 0, canceled: 2 });
    expect(await getMessage(optedOut, missed.id)).toMatchObject({ status: 'canceled', cancelReason: 'opted_out' });
    expect(await getMessage(blocked, unpaid.id)).toMatchObject({ status: 'canceled', cancelReason: 'billing' });
    expect(await moneyLedgerOf(blocked)).toEqual({ spendCents: 0, owedCents: 0 });
  });

  it('moves a rescheduled text with its time: not sent at the old time, sent at the new one', async () => {
    // Prepare
    const at = clockOfTest();
    const tenantId = await newOrg();
    const { message } = await schedule(tenantId, '+14155550250', at(75), at(0));
    const carrier = acceptingCarrier();
    // Act
    const moved = await rescheduleText(tenantId, message.id, at(300));
    const atOldTime = await fireDueTexts({ now: at(100), carrier });
    const atNewTime = await fireDueTexts({ now: at(310), carrier });
    const again = rescheduleText(tenantId, message.id, at(600));
    // Assess
    expect(moved.sendAt).toBe(at(300).toISOString());
    expect(atOldTime.sent).toBe(0);
    expect(atNewTime.sent).toBe(1);
    await expect(again).rejects.toBeInstanceOf(NotScheduledError);
    expect(carrier.sent.map((t) => t.messageId)).toEqual([message.id]);
  });
});
