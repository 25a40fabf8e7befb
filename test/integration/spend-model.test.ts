import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { createTestTable } from '../support/table';
import { suiteSize } from '../support/suite-sizes';
import type { Carrier } from '../../lambdas/contexts/texting/carrier-port';
import { updateMessageStatus } from '../../lambdas/contexts/texting/delivery-status';
import { BillingBlockedError, SpendingLimitReachedError } from '../../lambdas/contexts/texting/errors';
import { sendMessage } from '../../lambdas/contexts/texting/sending';
import { readShards, settleSpend, spendOf } from '../../lambdas/contexts/texting/spend';
import { createTenant, updateTenant, type BillingStatus } from '../../lambdas/contexts/tenants/tenants';

/**
 * The spending limit as a model-based test (fast-check), on the limits-faithful engine: random
 * sequences of concurrent sends, carrier failures (refunds), limit raises and lowerings (below the
 * spend too), billing blocks, and limit changes that land while sends are in flight. After every
 * step, against a model that only adds up what the service answered:
 * - no text was accepted while the spend plus its cost exceeded the limit then in force, and no
 *   text was refused 402 while it fitted (a step's sends run under one limit);
 * - the organization's spend equals the cost of its accepted texts not refunded;
 * - spend plus headroom over the shards equals the limit, and every shard follows the same
 *   limit version and debt flag;
 * - nothing answered anything but 201 or 402 (no 5xx, whatever ran concurrently).
 *
 * A fresh seed every run, printed: a failure is replayed with `SPEND_MODEL_SEED=<seed>`. `npm test` makes a few
 * runs (`SPEND_MODEL_RUNS`, default 4: the suite's time is budgeted); the bench makes many more
 * (`npm run bench -- --only models`).
 */
jest.setTimeout(300_000);
beforeAll(createTestTable);

const RUNS = suiteSize('SPEND_MODEL_RUNS', 4);
const SEED = Number(process.env.SPEND_MODEL_SEED ?? Math.floor(Math.random() * 2 ** 31));
// Printed whatever the outcome, so a failure seen in a log can be replayed.
console.info(`spend model: ${RUNS} runs, SPEND_MODEL_SEED=${SEED}`);

type Model = { limit: number | null; billing: BillingStatus; spend: number; live: { id: string; cost: number }[] };
type Real = { tenantId: string; carrier: Carrier };

const newSid = () => `SM${randomBytes(16).toString('hex')}`;
const acceptingCarrier = (): Carrier => ({ name: 'loopback', send: async () => ({ messageSid: newSid() }) });

let recipients = 0;
const recipient = () => `+1415666${String((recipients += 1) % 10_000).padStart(4, '0')}`;
/** A body of 1 or 2 segments (1 or 2 cents at the default rate). */
const body = (segments: number) => (segments === 1 ? 'model text' : 'x'.repeat(161));

type SendOutcome = { cost: number } & ({ accepted: string } | { refused: 'limit' | 'billing' });

/** Sends concurrently; anything but 201 or 402 fails the test. */
async function sendAll(real: Real, costs: number[]): Promise<SendOutcome[]> {
  return Promise.all(
    costs.map(async (cost): Promise<SendOutcome> => {
      try {
        const { message } = await sendMessage(real.tenantId, { to: recipient(), body: body(cost) }, real.carrier);
        return { cost, accepted: message.id };
      } catch (err) {
        if (err instanceof SpendingLimitReachedError) return { cost, refused: 'limit' };
        if (err instanceof BillingBlockedError) return { cost, refused: 'billing' };
        throw err;
      }
    }),
  );
}

/** The operator's `tenant update --spending-limit-cents`: the row, then the shards settled by that one writer. */
async function setLimit(real: Real, limit: number | null): Promise<void> {
  await updateTenant(real.tenantId, { spendingLimitCents: limit });
  await settleSpend(real.tenantId);
}

const accepted = (outcomes: SendOutcome[]) =>
  outcomes.flatMap((o) => ('accepted' in o ? [{ id: o.accepted, cost: o.cost }] : []));
const fits = (model: Model, cost: number, limit = model.limit) => limit === null || model.spend + cost <= limit;

/** A step of the model run: what it does, then the invariants every step must leave true. */
abstract class Step implements fc.AsyncCommand<Model, Real> {
  check(_model: Readonly<Model>): boolean {
    return true;
  }
  abstract act(model: Model, real: Real): Promise<void>;
  async run(model: Model, real: Real): Promise<void> {
    await this.act(model, real);
    await assertInvariants(model, real);
  }
  abstract toString(): string;
}

class SendBatch extends Step {
  constructor(readonly costs: number[]) {
    super();
  }
  async act(model: Model, real: Real): Promise<void> {
    const outcomes = await sendAll(real, this.costs);
    const taken = accepted(outcomes);
    const added = taken.reduce((sum, t) => sum + t.cost, 0);
    if (model.billing !== 'active') expect(outcomes.every((o) => 'refused' in o && o.refused === 'billing')).toBe(true);
    // Spend only grows during a batch: the last text accepted fitted, so all of them together fit.
    if (taken.length > 0) expect(fits(model, added)).toBe(true);
    // A 402 for the limit means the text did not fit even after every text accepted beside it.
    for (const o of outcomes)
      if ('refused' in o && o.refused === 'limit') expect(fits(model, added + o.cost)).toBe(false);
    model.spend += added;
    model.live.push(...taken);
  }
  toString(): string {
    return `send(${this.costs.join(',')})`;
  }
}

class FailTexts extends Step {
  constructor(readonly picks: number[]) {
    super();
  }
  override check(model: Readonly<Model>): boolean {
    return model.live.length > 0;
  }
  async act(model: Model, real: Real): Promise<void> {
    const chosen = [...new Set(this.picks.map((p) => p % model.live.length))].map((i) => model.live[i]);
    // The carrier reports them failed, all at once: each refunded exactly once.
    await Promise.all(
      chosen.map((text) =>
        updateMessageStatus(real.tenantId, { messageId: text.id }, 'failed', { failureReason: 'carrier_failed' }),
      ),
    );
    model.live = model.live.filter((text) => !chosen.includes(text));
    model.spend -= chosen.reduce((sum, text) => sum + text.cost, 0);
  }
  toString(): string {
    return `fail(${this.picks.join(',')})`;
  }
}

class SetLimit extends Step {
  constructor(readonly limit: number | null) {
    super();
  }
  async act(model: Model, real: Real): Promise<void> {
    await setLimit(real, this.limit);
    model.limit = this.limit;
  }
  toString(): string {
    return `limit(${this.limit})`;
  }
}

class SetBilling extends Step {
  constructor(readonly billing: BillingStatus) {
    super();
  }
  async act(model: Model, real: Real): Promise<void> {
    await updateTenant(real.tenantId, { billingStatus: this.billing });
    model.billing = this.billing;
  }
  toString(): string {
    return `billing(${this.billing})`;
  }
}

/** A limit change that lands while sends are in flight: each send runs under the old limit or the new. */
class SetLimitDuringSends extends Step {
  constructor(
    readonly limit: number | null,
    readonly costs: number[],
  ) {
    super();
  }
  async act(model: Model, real: Real): Promise<void> {
    const [outcomes] = await Promise.all([sendAll(real, this.costs), setLimit(real, this.limit)]);
    const taken = accepted(outcomes);
    const added = taken.reduce((sum, t) => sum + t.cost, 0);
    const larger = model.limit === null || this.limit === null ? null : Math.max(model.limit, this.limit);
    if (model.billing !== 'active') expect(taken).toHaveLength(0);
    if (taken.length > 0) expect(fits(model, added, larger)).toBe(true);
    model.spend += added;
    model.live.push(...taken);
    model.limit = this.limit;
  }
  toString(): string {
    return `limit(${this.limit}) during send(${this.costs.join(',')})`;
  }
}

/** The invariants every step must leave true, read from the table. */
async function assertInvariants(model: Model, real: Real): Promise<void> {
  expect(await spendOf(real.tenantId)).toBe(model.spend);
  const shards = await readShards(real.tenantId);
  expect(shards.every((s) => s !== undefined)).toBe(true);
  expect(new Set(shards.map((s) => `${s!.limitVersion}/${s!.owing}`)).size).toBe(1);
  if (model.limit !== null)
    expect(shards.reduce((sum, s) => sum + s!.spendCents + s!.headroomCents, 0)).toBe(model.limit);
}

/** Each organization its own SMS number (a number belongs to one organization). */
let organizations = 0;
const smsNumber = () => `+1628778${String((organizations += 1)).padStart(4, '0')}`;

// Small limits, so that sends meet them, lowerings fall below the spend and refunds pay debts back.
const limitArb = fc.option(fc.integer({ min: 0, max: 8 }), { nil: null, freq: 6 });
const costsArb = fc.array(fc.integer({ min: 1, max: 2 }), { minLength: 1, maxLength: 6 });
const commands = [
  costsArb.map((costs) => new SendBatch(costs)),
  costsArb.map((costs) => new SendBatch(costs)),
  fc.array(fc.nat(), { minLength: 1, maxLength: 3 }).map((picks) => new FailTexts(picks)),
  fc.array(fc.nat(), { minLength: 1, maxLength: 3 }).map((picks) => new FailTexts(picks)),
  limitArb.map((limit) => new SetLimit(limit)),
  fc.constantFrom<BillingStatus>('active', 'active', 'past_due', 'suspended').map((billing) => new SetBilling(billing)),
  fc.tuple(limitArb, costsArb).map(([limit, costs]) => new SetLimitDuringSends(limit, costs)),
];

it('keeps the spending limit exact through random concurrent sends, refunds, limit changes and billing blocks', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 2, max: 8 }),
      fc.commands(commands, { maxCommands: 8 }),
      async (initialLimit, steps) => {
        // Prepare: an organization as `tenant create` makes it (its shards settled at once)
        const tenant = await createTenant({
          name: 'Spend Model',
          smsNumber: smsNumber(),
          spendingLimitCents: initialLimit,
        });
        const real: Real = { tenantId: tenant.id, carrier: acceptingCarrier() };
        await settleSpend(tenant.id);
        const model: Model = { limit: initialLimit, billing: 'active', spend: 0, live: [] };
        // Act + Assess: each step checks the invariants after it (Step.run)
        await fc.asyncModelRun(() => ({ model, real }), steps);
      },
    ),
    { numRuns: RUNS, seed: SEED, endOnFailure: true },
  );
});
