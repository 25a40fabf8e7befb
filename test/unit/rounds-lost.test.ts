import { mockClient } from 'aws-sdk-client-mock';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { metrics } from '../../lambdas/shared/aws';
import { NamedTransaction } from '../../lambdas/shared/table/named-transaction';
import { LOST_RACE, optimisticRounds } from '../../lambdas/shared/table/optimistic-rounds';
import { atSite, currentSite } from '../../lambdas/shared/table/round-site';
import { resetRoundsLost, roundLost, roundsLostBySite } from '../../lambdas/shared/table/rounds-lost';

const ddb = mockClient(DynamoDBDocumentClient);

const conditionFailed = () =>
  new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: [{ Code: 'ConditionalCheckFailed' }],
  });

/** The EMF documents `singleMetric` published: the metric's dimensions and value, by spying on each instance made. */
function publishedRoundsLost(): { site: string; value: unknown }[] {
  const published: { site: string; value: unknown }[] = [];
  const single = metrics.singleMetric.bind(metrics);
  jest.spyOn(metrics, 'singleMetric').mockImplementation(() => {
    const instance = single();
    jest.spyOn(instance, 'publishStoredMetrics').mockImplementation(function (this: typeof instance) {
      const emf = this.serializeMetrics() as unknown as Record<string, unknown>;
      published.push({ site: emf.site as string, value: emf.RoundsLost });
      this.clearMetrics();
      this.clearDimensions();
      return this;
    });
    return instance;
  });
  return published;
}

beforeEach(() => {
  ddb.reset();
  resetRoundsLost();
  jest.restoreAllMocks();
});

describe('rounds lost, by site', () => {
  it('counts a refused conditional write at a named site once, under that site, and publishes RoundsLost with it', async () => {
    // Prepare
    const published = publishedRoundsLost();
    ddb.on(TransactWriteCommand).rejectsOnce(conditionFailed()).resolves({});
    const bound = { what: 'test write', rounds: 4, site: 'test.write' };
    // Act
    const written = await optimisticRounds(bound, async () => {
      const refusal = await new NamedTransaction<'row'>()
        .add('row', { Put: { TableName: 't', Item: { pk: 'P', sk: 'S' }, ConditionExpression: 'c' } })
        .write();
      return refusal?.failed('row') ? LOST_RACE : 'written';
    });
    // Assess
    expect(written).toBe('written');
    expect(ddb.commandCalls(TransactWriteCommand)).toHaveLength(2);
    expect(roundsLostBySite()).toEqual({ 'test.write': 1 });
    expect(published).toEqual([{ site: 'test.write', value: 1 }]);
  });

  it('counts nothing for rounds that win, and each site apart', async () => {
    // Act
    await optimisticRounds({ what: 'a', rounds: 2, site: 'a.first' }, async () => 'won');
    roundLost('b.second');
    roundLost('b.second');
    // Assess
    expect(roundsLostBySite()).toEqual({ 'b.second': 2 });
  });

  it('carries the site through the round, as a path within another site, for the engine to read', async () => {
    // Act
    const seen = await atSite('spend.charge', () =>
      optimisticRounds({ what: 'store', rounds: 1, site: 'texting.store' }, async () => currentSite()),
    );
    // Assess
    expect(seen).toBe('spend.charge>texting.store');
    expect(currentSite()).toBeUndefined();
  });
});
