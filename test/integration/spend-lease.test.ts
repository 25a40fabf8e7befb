import { createTestTable } from '../support/table';
import { transactWrite } from '../../lambdas/shared/table/dynamo';
import { BillingBlockedError } from '../../lambdas/contexts/texting/errors';
import { chargeWithin, readShards, settleSpend, spendFor, spendOf } from '../../lambdas/contexts/texting/spend';
import { planSettlement } from '../../lambdas/contexts/texting/spend-plan';
import { createTenant, updateTenant } from '../../lambdas/contexts/tenants/tenants';
import { SettlementLease } from '../../lambdas/contexts/texting/spend-lease';
import { NotFoundError } from '../../lambdas/shared/errors';

/**
 * The settlement lease (texting/spend-lease.ts) at its edges: a settler that outlived its lease, a holder that
 * died, the operator's settlement that must finish or say so, and a send that waited out a settlement.
 */
beforeAll(createTestTable);

let organizations = 0;
async function organization(spendingLimitCents: number | null): Promise<string> {
  const { id } = await createTenant({
    name: 'Spend Lease',
    smsNumber: `+1628780${String((organizations += 1)).padStart(4, '0')}`,
    spendingLimitCents,
  });
  await settleSpend(id);
  return id;
}

const versions = async (tenantId: string) => new Set((await readShards(tenantId)).map((s) => s?.limitVersion));

/** Waits (polling, no fixed sleep) until `untilMs` has passed. */
async function until(untilMs: number): Promise<void> {
  while (Date.now() <= untilMs) await new Promise((resolve) => setTimeout(resolve, 20));
}

it('refuses the writes of a settler that outlived its lease once a later holder settled the shards', async () => {
  // Prepare: settler A takes a short lease and stalls past it; the limit changes and B settles it under a new claim
  const tenantId = await organization(10);
  const spend = spendFor(tenantId);
  const stale = (await spend.lease.claim(100))!;
  await updateTenant(tenantId, { spendingLimitCents: 50 });
  await until(stale.untilMs);
  await settleSpend(tenantId);
  const settledByB = await readShards(tenantId);
  // Act: A wakes, reads the limit and the shards as B left them, plans (for a 5-cent text) and writes
  const writes = planSettlement(await spend.lease.readPolicy(), settledByB, 5, 0);
  const refusal = await spend.writeSettlement(stale, writes);
  // Assess: refused for its lost lease; the shards exactly as B left them
  expect(writes.length).toBeGreaterThan(0);
  expect(refusal).toBe('lease lost');
  expect(await readShards(tenantId)).toEqual(settledByB);
});

it('never writes a limit version older than the shards hold, even under a fresh lease', async () => {
  // Prepare: a limit read (version 0), then changed and settled (version 1) before the writer takes its lease
  const tenantId = await organization(10);
  const spend = spendFor(tenantId);
  const stalePolicy = await spend.lease.readPolicy();
  await updateTenant(tenantId, { spendingLimitCents: 20 });
  await settleSpend(tenantId);
  const lease = (await spend.lease.claim())!;
  const writes = planSettlement(stalePolicy, await readShards(tenantId), 1, 0);
  // Act
  const refusal = await spend.writeSettlement(lease, writes);
  await spend.lease.release(lease);
  // Assess: refused as changed (read again), nothing written
  expect(writes.length).toBeGreaterThan(0);
  expect(refusal).toBe('changed');
  expect(await versions(tenantId)).toEqual(new Set([1]));
});

it('returns from a limit change only with the shards on the new version, taking over the lease of a holder that died', async () => {
  // Prepare: a writer took the lease and died holding it
  const tenantId = await organization(10);
  await spendFor(tenantId).lease.claim(300);
  await updateTenant(tenantId, { spendingLimitCents: 30 });
  // Act
  const shards = await settleSpend(tenantId);
  // Assess
  expect(new Set(shards.map((s) => s?.limitVersion))).toEqual(new Set([1]));
  expect(await versions(tenantId)).toEqual(new Set([1]));
});

it('fails loudly when the lease stays held past its bound, the row holding the change', async () => {
  // Prepare: another writer holds the lease for longer than the bound
  const tenantId = await organization(10);
  const spend = spendFor(tenantId);
  const lease = (await spend.lease.claim(10_000))!;
  await updateTenant(tenantId, { spendingLimitCents: 30 });
  // Act + Assess
  await expect(settleSpend(tenantId, { boundMs: 200 })).rejects.toThrow(/did not reach its current limit/);
  expect(await versions(tenantId)).toEqual(new Set([0]));
  await spend.lease.release(lease);
});

it('reads billing again after waiting out a settlement: blocked meanwhile -> 402, nothing charged', async () => {
  // Prepare: the send read the row while a settlement was under way and billing active; then billing was blocked
  const tenantId = await organization(10);
  const spend = spendFor(tenantId);
  const lease = (await spend.lease.claim(5_000))!;
  const asRead = await spend.lease.readPolicy();
  await updateTenant(tenantId, { billingStatus: 'past_due' });
  let attempts = 0;
  // Act: the send's transaction is the charge alone; the settlement ends while it waits
  const sent = chargeWithin(tenantId, asRead, 1, async (charge) => {
    attempts += 1;
    return (await transactWrite([charge.item])) ? { chargeRefused: undefined } : { charged: true };
  });
  await spend.lease.release(lease);
  // Assess
  expect(asRead.settlingUntil).toBe(lease.untilMs);
  await expect(sent).rejects.toBeInstanceOf(BillingBlockedError);
  expect(attempts).toBe(0);
  expect(await spendOf(tenantId)).toBe(0);
});

describe('the lease itself', () => {
  it('is held up to its last millisecond, then taken over under a higher fence; a claim sets how long it lasts', async () => {
    // Prepare
    const lease = spendFor(await organization(10)).lease;
    const first = (await lease.claim(1_000, 5_000))!;
    // Act
    const whileHeld = await lease.claim(1_000, 6_000);
    const takenOver = (await lease.claim(2_000, 6_001))!;
    // Assess
    expect(first.untilMs).toBe(6_000);
    expect(whileHeld).toBeUndefined();
    expect(takenOver.untilMs).toBe(8_001);
    expect(takenOver.fence).toBeGreaterThan(first.fence);
    expect(takenOver.holder).not.toBe(first.holder);
    expect((await lease.readPolicy()).settlingUntil).toBe(8_001);
  });

  it('is never claimed for an organization that does not exist, and creates no row for it', async () => {
    // Prepare
    const lease = new SettlementLease('0199a000-0000-7000-8000-00000000dead');
    // Act + Assess
    expect(await lease.claim()).toBeUndefined();
    await expect(lease.readPolicy()).rejects.toBeInstanceOf(NotFoundError);
  });

  it("is given back by its holder, and a holder whose lease was taken over leaves the new holder's", async () => {
    // Prepare: A's lease ran out and B took it over
    const lease = spendFor(await organization(10)).lease;
    const now = Date.now();
    const a = (await lease.claim(100, now - 1_000))!;
    const b = (await lease.claim(60_000, now))!;
    // Act + Assess: A's release leaves B holding; B's frees the row
    await lease.release(a);
    expect((await lease.readPolicy()).settlingUntil).toBe(b.untilMs);
    await lease.release(b);
    expect((await lease.readPolicy()).settlingUntil).toBeNull();
    expect(await lease.claim()).toBeDefined();
  });

  it('is waited out until released or run out, and no longer than the deadline given', async () => {
    // Prepare: one lease that runs out in 1.5 s, on another organization one held for a minute
    const short = spendFor(await organization(10)).lease;
    const long = spendFor(await organization(10)).lease;
    const ending = (await short.claim(1_500))!;
    const held = (await long.claim(60_000))!;
    // Act
    const afterShort = await short.waitOut();
    const shortReturnedAt = Date.now();
    const deadline = Date.now() + 150;
    const afterLong = await long.waitOut(deadline);
    // Assess: the first returns once the lease ran out (its row still naming it); the second at its deadline, held
    expect(shortReturnedAt).toBeGreaterThan(ending.untilMs);
    expect(afterShort.settlingUntil).toBe(ending.untilMs);
    expect(Date.now()).toBeGreaterThan(deadline);
    expect(afterLong.settlingUntil).toBe(held.untilMs);
    await long.release(held);
  });
});
