import { GSIS, TABLE_KEYS, TTL_ATTRIBUTE } from '../../lambdas/shared/table/table-schema';
import { synth } from './support';

const tableOf = (stage: string) => {
  const { template } = synth({ stage });
  const tables = Object.values(template.findResources('AWS::DynamoDB::Table'));
  expect(tables).toHaveLength(1);
  return tables[0] as { Properties: Record<string, never>; DeletionPolicy: string; UpdateReplacePolicy: string };
};

describe('the single table', () => {
  it('has the key schema and both GSIs of table-schema.ts, all string keys', () => {
    const { Properties: table } = tableOf('dev');

    expect(table.KeySchema).toEqual([
      { AttributeName: TABLE_KEYS.partitionKey, KeyType: 'HASH' },
      { AttributeName: TABLE_KEYS.sortKey, KeyType: 'RANGE' },
    ]);
    const gsis = Object.values(GSIS);
    expect(table.GlobalSecondaryIndexes).toEqual(
      gsis.map((gsi) => ({
        IndexName: gsi.indexName,
        KeySchema: [
          { AttributeName: gsi.partitionKey, KeyType: 'HASH' },
          { AttributeName: gsi.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
    );
    const keyNames = [TABLE_KEYS.partitionKey, TABLE_KEYS.sortKey, ...gsis.flatMap((g) => [g.partitionKey, g.sortKey])];
    expect(table.AttributeDefinitions).toEqual(expect.arrayContaining(keyNames.map((name) => ({ AttributeName: name, AttributeType: 'S' }))));
    expect(table.AttributeDefinitions).toHaveLength(keyNames.length);
  });

  it('expires rows by the TTL attribute and streams new and old images', () => {
    const { Properties: table } = tableOf('dev');

    expect(table.TimeToLiveSpecification).toEqual({ AttributeName: TTL_ATTRIBUTE, Enabled: true });
    expect(table.StreamSpecification).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
  });

  it('is on-demand, recoverable to a point in time and encrypted with a KMS key', () => {
    const { Properties: table } = tableOf('dev');

    expect(table.BillingMode).toBe('PAY_PER_REQUEST');
    expect(table.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(table.SSESpecification).toEqual({ SSEEnabled: true });
  });

  it('is protected from deletion and retained outside dev', () => {
    const prod = tableOf('prod');

    expect(prod.Properties.DeletionProtectionEnabled).toBe(true);
    expect(prod.DeletionPolicy).toBe('Retain');
    expect(prod.UpdateReplacePolicy).toBe('Retain');
  });

  it('can be thrown away in dev', () => {
    const dev = tableOf('dev');

    expect(dev.Properties.DeletionProtectionEnabled).toBe(false);
    expect(dev.DeletionPolicy).toBe('Delete');
  });
});
