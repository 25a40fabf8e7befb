import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { createTestTable } from '../support/table';
import { engineStats } from '../support/engine-meters';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { CONDITION, isConditionalCheckFailed } from '../../lambdas/shared/table/dynamo';
import { NamedTransaction } from '../../lambdas/shared/table/named-transaction';
import { atSite } from '../../lambdas/shared/table/round-site';

/**
 * The limits engine's meters say which condition failed (docs/local-engine.md, "Meters"): per site the service's
 * client names (lambdas/shared/table/round-site.ts, sent as a header locally), per operation, cancellation reason and
 * the shape of the item's key. Runs on the engine (jest.config.js ON_LIMITS_ENGINE): this file's own meters.
 */
beforeAll(createTestTable);

let serial = 0;
const contactRow = () => {
  serial += 1;
  return { pk: `T#0199aaaa-${serial}#CONTACT#0199bbbb-${serial}`, sk: 'CONTACT', name: 'x' };
};
const putNew = (Item: Record<string, unknown>) =>
  new PutCommand({ TableName: TABLE_NAME, Item, ConditionExpression: CONDITION.rowIsNew });

const refusalsAt = async (site: string) => (await engineStats()).refusals.bySite[site];

describe("the engine's meters of refused conditions", () => {
  it('count a failed conditional write under the site its request named, by operation, reason and key shape', async () => {
    // Prepare
    const row = contactRow();
    await dynamo.send(putNew(row));
    // Act
    const error = await atSite('test.put', () => dynamo.send(putNew(row))).catch((err: unknown) => err);
    // Assess
    expect(isConditionalCheckFailed(error)).toBe(true);
    expect(await refusalsAt('test.put')).toEqual({
      requests: 1,
      conditions: { 'PutItem ConditionalCheckFailed T#*#CONTACT#* CONTACT': 1 },
    });
  });

  it("count a cancelled transaction's failed item under its reason, not the items that passed", async () => {
    // Prepare
    const [taken, free] = [contactRow(), contactRow()];
    await dynamo.send(putNew(taken));
    // Act
    const refusal = await new NamedTransaction<'free' | 'taken'>('test.transaction')
      .add('free', { Put: { TableName: TABLE_NAME, Item: free, ConditionExpression: CONDITION.rowIsNew } })
      .add('taken', {
        Put: { TableName: TABLE_NAME, Item: { ...taken, sk: 'CONTACT' }, ConditionExpression: CONDITION.rowIsNew },
      })
      .write();
    // Assess
    expect(refusal?.failedNames).toEqual(['taken']);
    expect(await refusalsAt('test.transaction')).toEqual({
      requests: 1,
      conditions: { 'TransactWriteItems ConditionalCheckFailed T#*#CONTACT#* CONTACT': 1 },
    });
  });

  it('name a site within another as its path, and a request that named none as "-"', async () => {
    // Prepare
    const row = contactRow();
    await dynamo.send(putNew(row));
    const before = (await refusalsAt('-'))?.requests ?? 0;
    // Act
    await atSite('test.outer', () => atSite('test.inner', () => dynamo.send(putNew(row)))).catch(() => undefined);
    await dynamo.send(putNew(row)).catch(() => undefined);
    // Assess
    expect((await refusalsAt('test.outer>test.inner'))?.requests).toBe(1);
    expect((await refusalsAt('-'))?.requests).toBe(before + 1);
  });
});
