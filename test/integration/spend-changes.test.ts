import { randomBytes } from 'node:crypto';
import { createTestTable } from '../support/table';
import { engineItemMeter } from '../support/engine-meters';
import { TABLE_NAME } from '../../lambdas/shared/aws';
import type { Carrier } from '../../lambdas/contexts/texting/carrier-port';
import { updateMessageStatus } from '../../lambdas/contexts/texting/delivery-status';
import { SpendingLimitReachedError } from '../../lambdas/contexts/texting/errors';
import { sendMessage } from '../../lambdas/contexts/texting/sending';
import { readShards, settleSpend, spendOf } from '../../lambdas/contexts/texting/spend';
import { createTenant, updateTenant, type TenantUpdate } from '../../lambdas/contexts/tenants/tenants';

/**
 * The spending limit while the operator changes it and texts are in flight, on the
 * limits-faithful engine (the model-based test in spend-model.test.ts walks random sequences;
 * these are the cases an operator meets).
 */
jest.setTimeout(120_000);
beforeAll(createTestTable);

const carrier: Carrier = {
  name: 'loopback',
  send: async () => ({ messageSid: `SM${randomBytes(16).toString('hex')}` }),
};
let organizations = 0;
let recipients = 0;
const recipient = () => `+1415777${String((recipients += 1)).padStart(4, '0')}`;
const send = async (tenantId: string) =>
  (await sendMessage(tenantId, { to: recipient(), body: 'one segment' }, carrier)).message;

/** An organization as `tenant create` makes it: its row, then its shards settled. */
async function organization(spendingLimitCents: number | null): Promise<string> {
  const { id } = await createTenant({
    name: 'Spend Changes',
    smsNumber: `+1628779${String((organizations += 1)).padStart(4, '0')}`,
    spendingLimitCents,
  });
  await settleSpend(id);
  return id;
}

/** `tenant update`: the row, then (for a new limit) the shards settled by that one writer. */
async function operatorUpdate(tenantId: string, change: TenantUpdate): Promise<void> {
  await updateTenant(tenantId, change);
  if (change.spendingLimitCents !== undefined) await settleSpend(tenantId);
}

const headroomOf = async (tenantId: string) =>
  (await readShards(tenantId)).reduce((sum, s) => sum + (s?.headroomCents ?? 0), 0);
/** The organization row, which holds the settlement lease: its writes are claims of the lease and their releases. */
const leaseMeter = (tenantId: string) => engineItemMeter(`${TABLE_NAME} S:T#${tenantId} S:TENANT`);

it('refuses every send (402) once the limit is lowered below the spend, until refunds bring spend plus the text within it', async () => {
  // Prepare: limit 3, three 1-cent texts accepted; a fourth is refused
  const tenantId = await organization(3);
  const texts = [await send(tenantId), await send(tenantId), await send(tenantId)];
  await expect(send(tenantId)).rejects.toBeInstanceOf(SpendingLimitReachedError);

  // Act: the limit lowered to 1 cent, then the carrier reports the texts failed one by one
  await operatorUpdate(tenantId, { spendingLimitCents: 1 });
  const answers: string[] = [];
  for (const text of texts) {
    await updateMessageStatus(tenantId, { messageId: text.id }, 'failed', { failureReason: 'carrier_failed' });
    answers.push(
      await send(tenantId).then(
        () => '201',
        (err: Error) => (err instanceof SpendingLimitReachedError ? '402' : err.name),
      ),
    );
    // Assess, after each step: spend + headroom is the limit, even while the spend is above it
    expect((await spendOf(tenantId)) + (await headroomOf(tenantId))).toBe(1);
  }

  // Assess: spend 2 (402), spend 1 (402: 1 + 1 > 1), spend 0 (201, spend 1)
  expect(answers).toEqual(['402', '402', '201']);
  expect(await spendOf(tenantId)).toBe(1);
});

it('answers 201 to every one of 32 concurrent sends right after a limit change, three times, with no 5xx', async () => {
  // Prepare
  const tenantId = await organization(10_000);
  for (const limit of [5_000, 9_000, 7_000]) {
    // Act: the operator's change, then at once 32 sends
    await operatorUpdate(tenantId, { spendingLimitCents: limit });
    const answers = await Promise.allSettled(Array.from({ length: 32 }, () => send(tenantId)));
    // Assess
    expect(answers.filter((a) => a.status === 'rejected').map((a) => (a as PromiseRejectedResult).reason)).toEqual([]);
  }
  expect(await spendOf(tenantId)).toBe(96);
  expect((await spendOf(tenantId)) + (await headroomOf(tenantId))).toBe(7_000);
});

it('lets one send settle a limit change the shards have not seen while the others wait for it: 32 sends, all 201', async () => {
  // Prepare: the organization row changed but nobody settled the shards (an operator command cut short)
  const tenantId = await organization(10_000);
  await updateTenant(tenantId, { spendingLimitCents: 4_000 });
  const before = await leaseMeter(tenantId);

  // Act
  const answers = await Promise.allSettled(Array.from({ length: 32 }, () => send(tenantId)));

  // Assess: every send charged; the shards follow the new limit; and the race happened: sends
  // found the shards behind and more than one tried to take the settlement (a take and a release
  // would be two writes of the lease row)
  expect(answers.filter((a) => a.status === 'rejected').map((a) => (a as PromiseRejectedResult).reason)).toEqual([]);
  expect((await spendOf(tenantId)) + (await headroomOf(tenantId))).toBe(4_000);
  expect((await leaseMeter(tenantId)).writes - before.writes).toBeGreaterThan(2);
});

it('flips billing between past_due and active without writing a shard: the sends after each flip read it from the organization row', async () => {
  // Prepare
  const tenantId = await organization(1_000);
  const shardsBefore = await readShards(tenantId);

  // Act
  await operatorUpdate(tenantId, { billingStatus: 'past_due' });
  const blocked = await Promise.allSettled(Array.from({ length: 8 }, () => send(tenantId)));
  await operatorUpdate(tenantId, { billingStatus: 'active' });
  const open = await Promise.allSettled(Array.from({ length: 32 }, () => send(tenantId)));

  // Assess
  expect(
    blocked.every((a) => a.status === 'rejected' && (a.reason as { code?: string }).code === 'billing_blocked'),
  ).toBe(true);
  expect(open.every((a) => a.status === 'fulfilled')).toBe(true);
  expect((await readShards(tenantId)).map((s) => s!.limitVersion)).toEqual(shardsBefore.map((s) => s!.limitVersion));
});

it('gathers the last headroom where a text can use it, and spreads it over every shard again when the limit is raised', async () => {
  // Prepare: a limit of 40 spread over 32 shards (1 or 2 cents each); a 2-segment text (2 cents) at a time
  const tenantId = await organization(40);
  const twoSegments = () => sendMessage(tenantId, { to: recipient(), body: 'x'.repeat(161) }, carrier);

  // Act: spend it down to 2 cents left, then raise the limit
  for (let i = 0; i < 19; i += 1) await twoSegments();
  const nearLimit = (await readShards(tenantId)).filter((s) => s!.headroomCents > 0).length;
  await operatorUpdate(tenantId, { spendingLimitCents: 1_038 });

  // Assess: near the limit the headroom sits on few shards; raised, on all 32 again
  expect(await spendOf(tenantId)).toBe(38);
  expect(nearLimit).toBeLessThanOrEqual(2);
  expect((await readShards(tenantId)).every((s) => s!.headroomCents >= 31)).toBe(true);
});
