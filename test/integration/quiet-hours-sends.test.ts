import { randomBytes } from 'node:crypto';
import { TZDate } from '@date-fns/tz';
import { messageRowsOf, moneyLedgerOf } from '../support/ledger';
import { createTestTable } from '../support/table';
import type { Carrier, OutboundText } from '../../lambdas/contexts/texting/carrier-port';
import { QuietHoursError } from '../../lambdas/contexts/texting/errors';
import { getMessage } from '../../lambdas/contexts/texting/messages';
import { rescheduleMessage } from '../../lambdas/contexts/texting/scheduled-changes';
import { fireDueTexts } from '../../lambdas/contexts/texting/scheduled-texts';
import { sendMessage } from '../../lambdas/contexts/texting/sending';
import type { SendMessageInput } from '../../lambdas/contexts/texting/schemas';
import { createTenant, updateTenant } from '../../lambdas/contexts/tenants/tenants';
import type { OrganizationQuietHours } from '../../lambdas/contexts/tenants/quiet-hours-policy';

/**
 * Quiet hours applied to sends on DynamoDB Local, the clock given to each call (`now`): a send, a scheduled
 * `sendAt`, a reschedule and the firing all hold a text to its recipient's local window under the organization's
 * policy (docs/api.md, "Quiet hours"). The sends live in January 2027 (standard time: New York UTC-5, Dallas
 * UTC-6); the firing's texts in December 2026, before them, so a firing never reaches another test's texts.
 */
const NY = 'America/New_York';
const CHI = 'America/Chicago';
const NEW_YORK = '+12125550100';
const FLORIDA = '+13055550100';
const TEXAS = '+12145550100';
const SAN_FRANCISCO = '+14155550100';

/** An instant given by its wall-clock time in `zone` (month 1-12). */
const local = (zone: string, y: number, mo: number, d: number, h: number, mi = 0, s = 0) =>
  new Date(new TZDate(y, mo - 1, d, h, mi, s, zone).getTime());
/** Wednesday 13 January 2027 in New York, at h:mi. */
const wednesday = (h: number, mi = 0, s = 0) => local(NY, 2027, 1, 13, h, mi, s);
const THURSDAY_8AM_NY = local(NY, 2027, 1, 14, 8);

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
const newOrg = async (quietHours?: Partial<OrganizationQuietHours>) =>
  (
    await createTenant({
      name: 'Quiet Hours Org',
      smsNumber: `+1628557${String((orgNumbers += 1)).padStart(4, '0')}`,
      quietHours,
    })
  ).id;

const text = (to: string, more: Partial<SendMessageInput> = {}): SendMessageInput => ({
  to,
  body: 'Our winter sale starts now',
  ...more,
});

/** The QuietHoursError a send was refused with (fails the test when it was not refused so). */
async function refusal(sending: Promise<unknown>): Promise<QuietHoursError> {
  const error = await sending.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(QuietHoursError);
  return error as QuietHoursError;
}

beforeAll(createTestTable);

describe('a send under quiet hours', () => {
  it('with refuse: 422 quiet_hours with allowedAt at the next 8:00 where it is night, nothing charged or kept; 201 where it is day', async () => {
    // Prepare: 22:30 in New York is 19:30 in San Francisco.
    const tenantId = await newOrg({ mode: 'refuse' });
    const carrier = acceptingCarrier();
    const now = wednesday(22, 30);
    // Act
    const night = await refusal(sendMessage(tenantId, text(NEW_YORK), carrier, { now, idempotencyKey: 'k-night' }));
    const day = await sendMessage(tenantId, text(SAN_FRANCISCO), carrier, { now });
    // Assess
    expect(night.status).toBe(422);
    expect(night.code).toBe('quiet_hours');
    expect(night.allowedAt).toEqual(THURSDAY_8AM_NY);
    expect(day.message).toMatchObject({ status: 'queued', toNumber: SAN_FRANCISCO });
    expect(carrier.sent.map((sent) => sent.to)).toEqual([SAN_FRANCISCO]);
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 1, owedCents: 1 });
    expect((await messageRowsOf(tenantId)).map((row) => row.toNumber)).toEqual([SAN_FRANCISCO]);

    // Act: the refused request kept no Idempotency-Key, so its retry in the morning is judged again and sent.
    const retried = await sendMessage(tenantId, text(NEW_YORK), carrier, {
      now: wednesday(9),
      idempotencyKey: 'k-night',
    });
    // Assess
    expect(retried).toMatchObject({ replayed: false, message: { status: 'queued', toNumber: NEW_YORK } });
  });

  it('with defer: the same text is scheduled for that 8:00, charged now, even when 8:00 is under a minute away', async () => {
    // Prepare
    const tenantId = await newOrg({ mode: 'defer' });
    const carrier = acceptingCarrier();
    // Act
    const night = await sendMessage(tenantId, text(NEW_YORK), carrier, { now: wednesday(22, 30), idempotencyKey: 'k' });
    const retry = await sendMessage(tenantId, text(NEW_YORK), carrier, { now: wednesday(22, 31), idempotencyKey: 'k' });
    const dawn = await sendMessage(tenantId, text(NEW_YORK), carrier, { now: local(NY, 2027, 1, 14, 7, 59, 30) });
    const day = await sendMessage(tenantId, text(NEW_YORK), carrier, { now: wednesday(12) });
    // Assess
    expect(night.message).toMatchObject({ status: 'scheduled', sendAt: THURSDAY_8AM_NY.toISOString() });
    expect(retry).toEqual({ message: night.message, replayed: true });
    expect(dawn.message).toMatchObject({ status: 'scheduled', sendAt: THURSDAY_8AM_NY.toISOString() });
    expect(day.message.status).toBe('queued');
    expect(day.message.sendAt).toBeUndefined();
    expect(carrier.sent).toHaveLength(1);
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 3, owedCents: 3 });
  });

  it('holds a scheduled sendAt to the window: Florida at 20:30 and Texas on a Sunday at 10:00 refused, New York at 20:30 and Texas on a Monday at 10:00 not', async () => {
    // Prepare
    const tenantId = await newOrg({ mode: 'refuse' });
    const deferring = await newOrg({ mode: 'defer' });
    const carrier = acceptingCarrier();
    const now = wednesday(12);
    const at = (to: string, sendAt: Date, org = tenantId) =>
      sendMessage(org, text(to, { sendAt: sendAt.toISOString() }), carrier, { now });
    // Act
    const florida = await refusal(at(FLORIDA, wednesday(20, 30)));
    const texasSunday = await refusal(at(TEXAS, local(CHI, 2027, 1, 17, 10)));
    const newYork = await at(NEW_YORK, wednesday(20, 30));
    const texasMonday = await at(TEXAS, local(CHI, 2027, 1, 18, 10));
    const floridaDeferred = await at(FLORIDA, wednesday(20, 30), deferring);
    // Assess
    expect(florida.allowedAt).toEqual(THURSDAY_8AM_NY);
    expect(texasSunday.allowedAt).toEqual(local(CHI, 2027, 1, 17, 12));
    expect(newYork.message).toMatchObject({ status: 'scheduled', sendAt: wednesday(20, 30).toISOString() });
    expect(texasMonday.message).toMatchObject({
      status: 'scheduled',
      sendAt: local(CHI, 2027, 1, 18, 10).toISOString(),
    });
    expect(floridaDeferred.message).toMatchObject({ status: 'scheduled', sendAt: THURSDAY_8AM_NY.toISOString() });
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 2, owedCents: 2 });
    expect(carrier.sent).toEqual([]);
  });

  it('with appliesTo marketing, holds only the texts marked marketing; with the policy off, holds none', async () => {
    // Prepare
    const marketingOnly = await newOrg({ mode: 'refuse', appliesTo: 'marketing' });
    const off = await newOrg();
    const carrier = acceptingCarrier();
    const now = wednesday(23);
    // Act
    const marketing = await refusal(
      sendMessage(marketingOnly, text(NEW_YORK, { category: 'marketing' }), carrier, { now }),
    );
    const transactional = await sendMessage(marketingOnly, text(NEW_YORK, { category: 'transactional' }), carrier, {
      now,
    });
    const unmarked = await sendMessage(marketingOnly, text(NEW_YORK), carrier, { now });
    const offMarketing = await sendMessage(off, text(NEW_YORK, { category: 'marketing' }), carrier, { now });
    // Assess
    expect(marketing.allowedAt).toEqual(THURSDAY_8AM_NY);
    expect([transactional, unmarked, offMarketing].map((sent) => sent.message.status)).toEqual([
      'queued',
      'queued',
      'queued',
    ]);
    expect(carrier.sent).toHaveLength(3);
  });
});

describe('PATCH /messages/{id} under quiet hours', () => {
  it('refuses a new sendAt outside the window with 422 (the text keeps its time), and defer moves it to the opening', async () => {
    // Prepare
    const refusing = await newOrg({ mode: 'refuse' });
    const deferring = await newOrg({ mode: 'defer' });
    const now = wednesday(12);
    const noon = { sendAt: wednesday(13).toISOString() };
    const scheduled = async (org: string) =>
      (await sendMessage(org, text(NEW_YORK, noon), acceptingCarrier(), { now })).message.id;
    const [refusedId, deferredId] = await Promise.all([scheduled(refusing), scheduled(deferring)]);
    const late = wednesday(22, 30).toISOString();
    // Act
    const refused = await refusal(rescheduleMessage(refusing, refusedId, late, now));
    const moved = await rescheduleMessage(deferring, deferredId, late, now);
    const kept = await rescheduleMessage(refusing, refusedId, wednesday(20).toISOString(), now);
    // Assess
    expect(refused.allowedAt).toEqual(THURSDAY_8AM_NY);
    expect(moved).toMatchObject({ status: 'scheduled', sendAt: THURSDAY_8AM_NY.toISOString() });
    expect((await getMessage(deferring, deferredId)).sendAt).toBe(THURSDAY_8AM_NY.toISOString());
    expect(kept.sendAt).toBe(wednesday(20).toISOString());
  });
});

describe('the firing under quiet hours', () => {
  it('defers, with its charge kept, a due text whose window is closed when it fires, and sends it once at the opening', async () => {
    // Prepare: December 2026, before every other test's texts. One text scheduled at night while the policy was
    // off (it changed since); one at 20:59:30, in the window, that a firing at 21:00:20 finds closed.
    const dec = (d: number, h: number, mi = 0, s = 0) => local(NY, 2026, 12, d, h, mi, s);
    const tenantId = await newOrg();
    const carrier = acceptingCarrier();
    const schedule = async (sendAt: Date) =>
      (await sendMessage(tenantId, text(NEW_YORK, { sendAt: sendAt.toISOString() }), carrier, { now: dec(9, 20, 55) }))
        .message.id;
    const night = await schedule(dec(9, 22));
    await updateTenant(tenantId, { quietHours: { mode: 'refuse' } });
    const lastMinute = await schedule(dec(9, 20, 59, 30));
    const opening = dec(10, 8).toISOString();
    // Act
    const atNine = await fireDueTexts({ now: dec(9, 21, 0, 20), carrier });
    const atTen = await fireDueTexts({ now: dec(9, 22, 0, 30), carrier });
    const [lastMinuteHeld, nightHeld] = await Promise.all([
      getMessage(tenantId, lastMinute),
      getMessage(tenantId, night),
    ]);
    const ledgerHeld = await moneyLedgerOf(tenantId);
    const atDawn = await fireDueTexts({ now: dec(10, 8, 0, 10), carrier });
    const again = await fireDueTexts({ now: dec(10, 8, 1, 10), carrier });
    // Assess
    expect([atNine.deferred, atTen.deferred, atNine.sent + atTen.sent]).toEqual([1, 1, 0]);
    expect([lastMinuteHeld, nightHeld].map((m) => [m.status, m.sendAt])).toEqual([
      ['scheduled', opening],
      ['scheduled', opening],
    ]);
    expect(ledgerHeld).toEqual({ spendCents: 2, owedCents: 2 });
    expect([atDawn.sent, again.sent]).toEqual([2, 0]);
    expect(carrier.sent.map((sent) => sent.to)).toEqual([NEW_YORK, NEW_YORK]);
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 2, owedCents: 2 });
  });
});
