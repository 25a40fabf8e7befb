import { randomBytes } from 'node:crypto';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { moneyLedgerOf, unsettledMessageIds } from '../support/ledger';
import { createTestTable } from '../support/table';
import { dynamo, logger, TABLE_NAME } from '../../lambdas/shared/aws';
import { GSIS } from '../../lambdas/shared/table/table-schema';
import { CarrierError, type Carrier } from '../../lambdas/contexts/texting/carrier-port';
import { createTenant } from '../../lambdas/contexts/tenants/tenants';
import { UNSETTLED_SHARDS, unsettledPk } from '../../lambdas/contexts/texting/messages';
import { sendMessage } from '../../lambdas/contexts/texting/sending';
import { settleUnknownOutcomes } from '../../lambdas/contexts/texting/settlement';

const GRACE_MS = 4 * 60_000;
const sentAt = new Date('2026-10-01T09:00:00.000Z');
const afterGrace = new Date(sentAt.getTime() + GRACE_MS + 60_000);
const BODY = 'Secret body of an unknown outcome';

const unknownOutcome: Carrier = {
  name: 'twilio',
  send: async () => {
    throw new CarrierError('Twilio answered 500', { kind: 'unknown', httpStatus: 500 });
  },
};
const accepting: Carrier = {
  name: 'loopback',
  send: async () => ({ messageSid: `SM${randomBytes(16).toString('hex')}` }),
};

/**
 * One row in each worklist shard, older than every text, that no sweep can settle: its message
 * row does not exist (what a half-restored table or a hand edit leaves), so settling it throws.
 */
async function putPoisonRows(): Promise<void> {
  const rows = Array.from({ length: UNSETTLED_SHARDS }, (_, shard) => ({
    pk: `T#poison-org#MSG#poison-${shard}`,
    sk: 'POISON',
    tenantId: 'poison-org',
    id: `poison-${shard}`,
    [GSIS.gsi2.partitionKey]: unsettledPk(shard),
    [GSIS.gsi2.sortKey]: `2000-01-01T00:00:00.000Z#poison-org#poison-${shard}`,
  }));
  for (let i = 0; i < rows.length; i += 25) {
    const batch = rows.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    await dynamo.send(new BatchWriteCommand({ RequestItems: { [TABLE_NAME]: batch } }));
  }
}

async function sendAll(tenantId: string, count: number, carrier: Carrier, now?: Date) {
  const sends = Array.from({ length: count }, (_, i) => i);
  const answers: unknown[] = [];
  for (let i = 0; i < sends.length; i += 8) {
    const batch = sends.slice(i, i + 8).map((n) =>
      sendMessage(tenantId, { to: `+1415555${String(2000 + n).padStart(4, '0')}`, body: BODY }, carrier, { now }).then(
        (answer) => answer.message,
        (err: unknown) => err,
      ),
    );
    answers.push(...(await Promise.all(batch)));
  }
  return answers;
}

// Sends and sweeps on DynamoDB Local, which a loaded machine slows a great deal.
jest.setTimeout(120_000);
beforeAll(createTestTable);

describe('the settlement sweep under an outage backlog', () => {
  it('settles every text behind a row it cannot settle, logs and counts that row, and the next run does not die on it', async () => {
    // Prepare: a poison row at the head of every shard, then 16 texts whose carrier answered 500
    const tenantId = (await createTenant({ name: 'Outage Org', smsNumber: '+16285559001' })).id;
    await putPoisonRows();
    await sendAll(tenantId, 16, unknownOutcome, sentAt);
    const errors = jest.spyOn(logger, 'error');
    // Act: the sweep runs past the grace period while new sends go on
    const [first, sendsMeanwhile] = await Promise.all([
      settleUnknownOutcomes({ now: afterGrace, graceMs: GRACE_MS, shardReaders: 4, textsPerShard: 2 }),
      sendAll(tenantId, 4, accepting),
    ]);
    const second = await settleUnknownOutcomes({ now: afterGrace, graceMs: GRACE_MS });
    // Assess
    expect(first).toEqual({ examined: 16 + UNSETTLED_SHARDS, failed: 16, skipped: UNSETTLED_SHARDS });
    expect(second).toEqual({ examined: UNSETTLED_SHARDS, failed: 0, skipped: UNSETTLED_SHARDS });
    expect(sendsMeanwhile).toEqual(Array.from({ length: 4 }, () => expect.objectContaining({ status: 'queued' })));
    expect(await unsettledMessageIds(tenantId)).toEqual([]);
    expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 4, owedCents: 4 });
    expect(errors).toHaveBeenCalledWith(
      expect.stringContaining('Could not settle'),
      expect.objectContaining({ tenantId: 'poison-org', messageId: 'poison-0' }),
    );
    expect(JSON.stringify(errors.mock.calls)).not.toContain(BODY);
    errors.mockRestore();
  });

  it('stops starting texts once its budget is spent, leaving the rest to the next run', async () => {
    // Prepare
    const tenantId = (await createTenant({ name: 'Budget Org', smsNumber: '+16285559002' })).id;
    await sendAll(tenantId, 6, unknownOutcome, sentAt);
    // Act
    const spent = await settleUnknownOutcomes({ now: afterGrace, graceMs: GRACE_MS, budgetMs: 0 });
    const next = await settleUnknownOutcomes({ now: afterGrace, graceMs: GRACE_MS });
    // Assess
    expect(spent).toEqual({ examined: 0, failed: 0, skipped: 0 });
    expect(next.failed).toBe(6);
    expect(await unsettledMessageIds(tenantId)).toEqual([]);
  });
});
