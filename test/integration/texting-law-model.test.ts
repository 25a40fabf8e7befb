import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { createTestTable } from '../support/table';
import { suiteSize } from '../support/suite-sizes';
import type { Carrier, OutboundText } from '../../lambdas/contexts/texting/carrier-port';
import {
  NotScheduledError,
  QuietHoursError,
  RecipientOptedOutError,
  SpendingLimitReachedError,
} from '../../lambdas/contexts/texting/errors';
import { fromItem, getMessageItem } from '../../lambdas/contexts/texting/messages';
import { nextAllowedInstant, quietHoursApply, type QuietHoursPolicy } from '../../lambdas/contexts/texting/quiet-hours';
import { receiveInboundMessage } from '../../lambdas/contexts/texting/receiving';
import { cancelScheduledText, rescheduleMessage } from '../../lambdas/contexts/texting/scheduled-changes';
import { fireDueTexts } from '../../lambdas/contexts/texting/scheduled-texts';
import { recordConsent } from '../../lambdas/contexts/texting/consent-records';
import { sendMessage } from '../../lambdas/contexts/texting/sending';
import { settleSpend, spendOf } from '../../lambdas/contexts/texting/spend';
import { createTenant } from '../../lambdas/contexts/tenants/tenants';

/**
 * The law of texts as a model-based test (fast-check), on the limits-faithful engine: random sequences of sends
 * (at once or scheduled, marketing or not), cancels, reschedules, STOP and START replies, opt-outs and opt-ins
 * through the consent API, a STOP racing the firing,
 * and the clock moving on with the firing run at each move, under a random quiet-hours policy. After every step,
 * against a model that predicts every answer:
 * - no text was handed to the carrier for a number opted out at that moment, nor outside its recipient's window
 *   while the policy holds it, nor before its `sendAt`, nor twice;
 * - every answer is the one the model predicts (201 now or scheduled, 402, 409 opted out or not scheduled, 422
 *   quiet_hours with the window's next opening), and every text's status and `sendAt` in the table are the model's;
 * - the organization's spend equals the cost of its texts not refunded (scheduled, queued or sent).
 *
 * A fresh seed every run, printed: a failure is replayed with `TEXTING_MODEL_SEED=<seed>`. `npm test` makes a few
 * runs (`TEXTING_MODEL_RUNS`), the bench many (`npm run bench -- --only models`).
 */
jest.setTimeout(300_000);
beforeAll(createTestTable);

const RUNS = suiteSize('TEXTING_MODEL_RUNS', 3);
const SEED = Number(process.env.TEXTING_MODEL_SEED ?? Math.floor(Math.random() * 2 ** 31));
console.info(`texting law model: ${RUNS} runs, TEXTING_MODEL_SEED=${SEED}`);

/** Recipients in four states with different windows: New York, Florida (8-20), Texas (9-21, Sunday 12-21), California. */
const RECIPIENTS = ['+12125550101', '+13055550101', '+15125550101', '+14155550101'];
/** Sunday 6 December 2026, 13:00 UTC: 08:00 in New York and Miami, 07:00 in Austin, 05:00 in San Francisco. */
const START = Date.parse('2026-12-06T13:00:00Z');
const MINUTE = 60_000;

type Status = 'scheduled' | 'handed' | 'canceled';
type Text = { id: string; to: string; cost: number; status: Status; sendAt: number | null; marketing: boolean };
type Model = {
  now: number;
  limit: number;
  policy: QuietHoursPolicy;
  spend: number;
  optedOut: Set<string>;
  texts: Text[];
};
type Handed = OutboundText & { at: number };
type Real = { tenantId: string; smsNumber: string; carrier: Carrier; handed: Handed[]; clock: { now: number } };

const newSid = () => `SM${randomBytes(16).toString('hex')}`;

/** A carrier that accepts every text and records it with the model's clock at that moment. */
function recordingCarrier(tenantId: string, clock: { now: number }, handed: Handed[]): Carrier {
  return {
    name: 'loopback',
    send: async (text) => {
      // The due list is the whole table's: only this run's organization counts here.
      if (text.tenantId === tenantId) handed.push({ ...text, at: clock.now });
      return { messageSid: newSid() };
    },
  };
}

const body = (cost: number) => (cost === 1 ? 'model text' : 'x'.repeat(161));

/** The instant a text asked for `at` may go under the policy: `at`, or the window's next opening. */
async function allowedAt(model: Model, to: string, marketing: boolean, at: number): Promise<number> {
  if (!quietHoursApply(model.policy, marketing ? 'marketing' : undefined)) return at;
  const next = await nextAllowedInstant(to, new Date(at), model.policy);
  return next === null ? at : next.getTime();
}

const cancelToNumber = (model: Model, to: string) => {
  for (const text of model.texts)
    if (text.to === to && text.status === 'scheduled') {
      text.status = 'canceled';
      model.spend -= text.cost;
    }
};

abstract class Step implements fc.AsyncCommand<Model, Real> {
  check(_model: Readonly<Model>): boolean {
    return true;
  }
  abstract act(model: Model, real: Real): Promise<void>;
  async run(model: Model, real: Real): Promise<void> {
    const before = { handed: real.handed.length, optedOut: new Set(model.optedOut) };
    tally.steps += 1;
    await this.act(model, real);
    tally.handed += real.handed.length - before.handed;
    await assertInvariants(model, real, before);
  }
  abstract toString(): string;
}

class Send extends Step {
  constructor(
    readonly recipient: number,
    readonly cost: number,
    readonly aheadMinutes: number | null,
    readonly marketing: boolean,
  ) {
    super();
  }
  async act(model: Model, real: Real): Promise<void> {
    const to = RECIPIENTS[this.recipient];
    const asked = this.aheadMinutes === null ? model.now : model.now + this.aheadMinutes * MINUTE;
    const goes = await allowedAt(model, to, this.marketing, asked);
    const input = {
      to,
      body: body(this.cost),
      ...(this.aheadMinutes !== null && { sendAt: new Date(asked).toISOString() }),
      ...(this.marketing && { category: 'marketing' as const }),
    };
    const outcome = await sendMessage(real.tenantId, input, real.carrier, { now: new Date(model.now) }).then(
      ({ message }) => message,
      (err: unknown) => err,
    );
    if (goes !== asked && model.policy.mode === 'refuse') {
      expect(outcome).toBeInstanceOf(QuietHoursError);
      expect((outcome as QuietHoursError).allowedAt.toISOString()).toBe(new Date(goes).toISOString());
      tally.refused += 1;
      return;
    }
    const overLimit = model.spend + this.cost > model.limit;
    if (model.optedOut.has(to) || overLimit) {
      // Consent and the charge are one transaction: when both refuse, either answer is right.
      const expected = [
        ...(model.optedOut.has(to) ? [RecipientOptedOutError] : []),
        ...(overLimit ? [SpendingLimitReachedError] : []),
      ];
      expect(expected.some((type) => outcome instanceof type)).toBe(true);
      return;
    }
    const scheduled = goes !== model.now;
    expect(outcome).toMatchObject({
      status: scheduled ? 'scheduled' : expect.stringMatching(/^(queued|sent)$/),
      ...(scheduled && { sendAt: new Date(goes).toISOString() }),
    });
    const id = (outcome as { id: string }).id;
    if (scheduled) tally.scheduled += 1;
    model.spend += this.cost;
    model.texts.push({
      id,
      to,
      cost: this.cost,
      status: scheduled ? 'scheduled' : 'handed',
      sendAt: scheduled ? goes : null,
      marketing: this.marketing,
    });
  }
  toString(): string {
    const when = this.aheadMinutes === null ? 'now' : `+${this.aheadMinutes}m`;
    return `send(${this.recipient}, ${this.cost}c, ${when}${this.marketing ? ', marketing' : ''})`;
  }
}

/** Picks one of the run's texts, whatever its status: a cancel or move of one no longer scheduled is a 409. */
abstract class OnText extends Step {
  constructor(readonly pick: number) {
    super();
  }
  override check(model: Readonly<Model>): boolean {
    return model.texts.length > 0;
  }
  textOf(model: Model): Text {
    return model.texts[this.pick % model.texts.length];
  }
}

class Cancel extends OnText {
  async act(model: Model, real: Real): Promise<void> {
    const text = this.textOf(model);
    const outcome = await cancelScheduledText(real.tenantId, text.id, 'api').catch((err: unknown) => err);
    if (text.status !== 'scheduled') {
      expect(outcome).toBeInstanceOf(NotScheduledError);
      return;
    }
    expect(outcome).toMatchObject({ status: 'canceled', cancelReason: 'api' });
    text.status = 'canceled';
    model.spend -= text.cost;
  }
  toString(): string {
    return `cancel(${this.pick})`;
  }
}

class Reschedule extends OnText {
  constructor(
    pick: number,
    readonly aheadMinutes: number,
  ) {
    super(pick);
  }
  async act(model: Model, real: Real): Promise<void> {
    const text = this.textOf(model);
    const asked = model.now + this.aheadMinutes * MINUTE;
    const sendAt = new Date(asked).toISOString();
    const outcome = await rescheduleMessage(real.tenantId, text.id, sendAt, new Date(model.now)).catch(
      (err: unknown) => err,
    );
    if (text.status !== 'scheduled') {
      expect(outcome).toBeInstanceOf(NotScheduledError);
      return;
    }
    const goes = await allowedAt(model, text.to, text.marketing, asked);
    if (goes !== asked && model.policy.mode === 'refuse') {
      expect(outcome).toBeInstanceOf(QuietHoursError);
      return;
    }
    expect(outcome).toMatchObject({ status: 'scheduled', sendAt: new Date(goes).toISOString() });
    text.sendAt = goes;
  }
  toString(): string {
    return `reschedule(${this.pick}, +${this.aheadMinutes}m)`;
  }
}

/** A STOP or START reply, a minute after the last step (keywords are ordered by when they arrived). */
class Keyword extends Step {
  constructor(
    readonly recipient: number,
    readonly keyword: 'STOP' | 'START',
  ) {
    super();
  }
  async act(model: Model, real: Real): Promise<void> {
    model.now += MINUTE;
    real.clock.now = model.now;
    const from = RECIPIENTS[this.recipient];
    await receiveInboundMessage(real.tenantId, {
      from,
      to: real.smsNumber,
      body: this.keyword,
      messageSid: newSid(),
      receivedAt: new Date(model.now),
    });
    if (this.keyword === 'START') model.optedOut.delete(from);
    else {
      model.optedOut.add(from);
      cancelToNumber(model, from);
    }
  }
  toString(): string {
    return `${this.keyword}(${this.recipient})`;
  }
}

/** What the runs exercised, printed at the end: a model run that never defers or races proves little. */
const tally = { steps: 0, handed: 0, scheduled: 0, refused: 0, deferredAtTheirTime: 0, raced: 0 };

/**
 * Consent gathered elsewhere (`POST /consent`): an opt-out by email, or an opt-in on a web form with its evidence,
 * a minute after the last step. An opt-out cancels the number's scheduled texts, as a STOP does.
 */
class ConsentApi extends Step {
  constructor(
    readonly recipient: number,
    readonly status: 'opted_out' | 'opted_in',
  ) {
    super();
  }
  async act(model: Model, real: Real): Promise<void> {
    model.now += MINUTE;
    real.clock.now = model.now;
    const phoneNumber = RECIPIENTS[this.recipient];
    const at = new Date(model.now);
    const answer = await recordConsent(
      real.tenantId,
      this.status === 'opted_out'
        ? { phoneNumber, status: 'opted_out', source: 'email' }
        : {
            phoneNumber,
            status: 'opted_in',
            source: 'web_form',
            evidence: { statement: 'Texts about my orders', where: 'checkout form', collectedAt: at.toISOString() },
          },
      at,
    );
    expect(answer).toMatchObject({ status: this.status });
    if (this.status === 'opted_in') model.optedOut.delete(phoneNumber);
    else {
      model.optedOut.add(phoneNumber);
      cancelToNumber(model, phoneNumber);
    }
  }
  toString(): string {
    return `consent(${this.recipient}, ${this.status})`;
  }
}

/** The texts due at `now`, as the firing must treat them: sent when the window is open, else moved to its opening. */
async function fireInModel(model: Model): Promise<void> {
  for (const text of model.texts) {
    if (text.status !== 'scheduled' || text.sendAt! > model.now) continue;
    const goes = await allowedAt(model, text.to, text.marketing, model.now);
    if (goes === model.now) text.status = 'handed';
    else {
      text.sendAt = goes;
      tally.deferredAtTheirTime += 1;
    }
  }
}

/** The clock moves on; the firing runs at the new time. */
class Advance extends Step {
  constructor(readonly minutes: number) {
    super();
  }
  async act(model: Model, real: Real): Promise<void> {
    model.now += this.minutes * MINUTE;
    real.clock.now = model.now;
    await fireDueTexts({ now: new Date(model.now), carrier: real.carrier });
    await fireInModel(model);
  }
  toString(): string {
    return `advance(${this.minutes}m)`;
  }
}

/**
 * A STOP arriving while the firing runs: each due text to that number is either handed over (its firing committed
 * first) or canceled `opted_out` and refunded, never both; texts to other numbers fire as usual. The STOP comes from
 * the recipient of a scheduled text (picked), and the clock moves on to at least that text's time, so they race.
 */
class StopDuringFiring extends Step {
  constructor(
    readonly pick: number,
    readonly minutes: number,
  ) {
    super();
  }
  async act(model: Model, real: Real): Promise<void> {
    const scheduled = model.texts.filter((t) => t.status === 'scheduled');
    const target = scheduled.length > 0 ? scheduled[this.pick % scheduled.length] : undefined;
    const from = target?.to ?? RECIPIENTS[this.pick % RECIPIENTS.length];
    model.now = Math.max(model.now + this.minutes * MINUTE, target?.sendAt ?? 0);
    real.clock.now = model.now;
    if (model.texts.some((t) => t.to === from && t.status === 'scheduled' && t.sendAt! <= model.now)) tally.raced += 1;
    const handedBefore = real.handed.length;
    await Promise.all([
      fireDueTexts({ now: new Date(model.now), carrier: real.carrier }),
      receiveInboundMessage(real.tenantId, {
        from,
        to: real.smsNumber,
        body: 'STOP',
        messageSid: newSid(),
        receivedAt: new Date(model.now),
      }),
    ]);
    const handedNow = new Set(real.handed.slice(handedBefore).map((h) => h.messageId));
    for (const text of model.texts)
      if (text.to === from && text.status === 'scheduled' && handedNow.has(text.id)) text.status = 'handed';
    model.optedOut.add(from);
    cancelToNumber(model, from);
    await fireInModel(model);
  }
  toString(): string {
    return `STOP(scheduled text ${this.pick}) during firing +${this.minutes}m`;
  }
}

/** The invariants every step must leave true, read from the table and the carrier's record. */
async function assertInvariants(
  model: Model,
  real: Real,
  before: { handed: number; optedOut: Set<string> },
): Promise<void> {
  // Handed over during this step: to a number not opted out when the step began (a STOP racing the step may land
  // after the handover), inside its window, not before its time.
  for (const handed of real.handed.slice(before.handed)) {
    const text = model.texts.find((t) => t.id === handed.messageId);
    expect(text?.status).toBe('handed');
    expect(before.optedOut.has(handed.to)).toBe(false);
    expect(await allowedAt(model, handed.to, text!.marketing, handed.at)).toBe(handed.at);
    if (text!.sendAt !== null) expect(handed.at).toBeGreaterThanOrEqual(text!.sendAt);
  }
  expect(new Set(real.handed.map((h) => h.messageId)).size).toBe(real.handed.length);
  expect(real.handed.length).toBe(model.texts.filter((t) => t.status === 'handed').length);
  expect(await spendOf(real.tenantId)).toBe(model.spend);
  for (const text of model.texts) {
    const stored = fromItem(await getMessageItem(real.tenantId, text.id));
    if (text.status === 'handed') expect(['queued', 'sent']).toContain(stored.status);
    else expect(stored.status).toBe(text.status);
    if (text.status === 'scheduled') expect(stored.sendAt).toBe(new Date(text.sendAt!).toISOString());
  }
}

/** Each organization its own SMS number (a number belongs to one organization). */
let organizations = 0;
const smsNumber = () => `+1628779${String((organizations += 1)).padStart(4, '0')}`;

const recipientArb = fc.integer({ min: 0, max: RECIPIENTS.length - 1 });
const aheadArb = fc.constantFrom(2, 15, 90, 400, 1000);
const commands = [
  fc
    .tuple(recipientArb, fc.integer({ min: 1, max: 2 }), fc.option(aheadArb, { nil: null }), fc.boolean())
    .map(([recipient, cost, ahead, marketing]) => new Send(recipient, cost, ahead, marketing)),
  fc
    .tuple(recipientArb, fc.integer({ min: 1, max: 2 }), aheadArb, fc.boolean())
    .map(([recipient, cost, ahead, marketing]) => new Send(recipient, cost, ahead, marketing)),
  fc.nat().map((pick) => new Cancel(pick)),
  fc.tuple(fc.nat(), aheadArb).map(([pick, ahead]) => new Reschedule(pick, ahead)),
  fc.tuple(recipientArb, fc.constantFrom<'STOP' | 'START'>('STOP', 'START')).map(([r, k]) => new Keyword(r, k)),
  fc.constantFrom(1, 30, 120, 480, 900).map((minutes) => new Advance(minutes)),
  fc.constantFrom(1, 30, 120, 480, 900).map((minutes) => new Advance(minutes)),
  fc
    .tuple(recipientArb, fc.constantFrom<'opted_out' | 'opted_in'>('opted_out', 'opted_in'))
    .map(([r, status]) => new ConsentApi(r, status)),
  fc.tuple(fc.nat(), fc.constantFrom(1, 120)).map(([pick, minutes]) => new StopDuringFiring(pick, minutes)),
];

const policyArb = fc.record({
  mode: fc.constantFrom<QuietHoursPolicy['mode']>('off', 'refuse', 'defer', 'defer'),
  appliesTo: fc.constantFrom<QuietHoursPolicy['appliesTo']>('all', 'all', 'marketing'),
  window: fc.constantFrom({ start: '08:00', end: '21:00' }, { start: '09:30', end: '18:00' }),
});

afterAll(() => console.info(`texting law model exercised: ${JSON.stringify(tally)}`));

it('never texts an opted-out number or outside its window, and keeps spend exact, through random texting', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 6, max: 14 }),
      policyArb,
      // At least 8 steps a run: fc.commands' own sizes make runs of 5 or so, too short to schedule, move and race.
      fc.array(fc.oneof(...commands), { minLength: 8, maxLength: 14 }),
      async (limit, policy, steps) => {
        // Prepare: an organization with its policy, its spend shards settled as `tenant create` leaves them
        const tenant = await createTenant({
          name: 'Texting Law Model',
          smsNumber: smsNumber(),
          spendingLimitCents: limit,
          quietHours: policy,
        });
        await settleSpend(tenant.id);
        const clock = { now: START };
        const handed: Handed[] = [];
        const real: Real = {
          tenantId: tenant.id,
          smsNumber: tenant.smsNumber!,
          carrier: recordingCarrier(tenant.id, clock, handed),
          handed,
          clock,
        };
        const model: Model = { now: START, limit, policy, spend: 0, optedOut: new Set(), texts: [] };
        try {
          // Act + Assess: each step checks the invariants after it (Step.run)
          await fc.asyncModelRun(() => ({ model, real }), steps);
        } finally {
          // Nothing of this run stays due for the next run's firing (the due list is the table's).
          for (const text of model.texts)
            if (text.status === 'scheduled') await cancelScheduledText(tenant.id, text.id, 'api').catch(() => {});
        }
      },
    ),
    { numRuns: RUNS, seed: SEED, endOnFailure: true },
  );
});
