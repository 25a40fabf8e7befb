import { createTestTable } from '../support/table';
import { transactWrite } from '../../lambdas/shared/table/dynamo';
import { BillingBlockedError } from '../../lambdas/contexts/texting/errors';
import { chargeWithin, readShards, settleSpend, spendFor, spendOf } from '../../lambdas/contexts/texting/spend';
import { planSettlement } from '../../lambdas/contexts/texting/spend-plan';
import { createTenant, updateTenant } from '../../lambdas/contexts/tenants/tenants';

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
