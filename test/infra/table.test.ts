import { RemovalPolicy } from 'aws-cdk-lib';
import type { ServiceConfig } from '../../lib/config';
import { GSIS, projectionOf, TABLE_KEYS, TTL_ATTRIBUTE } from '../../lambdas/shared/table/table-schema';
import { synth } from './support';

/** What `-c removalPolicy=destroy` makes of the configuration (lib/config.ts). */
const THROWN_AWAY: Partial<ServiceConfig> = { removalPolicy: RemovalPolicy.DESTROY, deletionProtection: false };

const tableOf = (overrides: Partial<ServiceConfig> = {}) => {
  const { template } = synth(overrides);
  const tables = Object.values(template.findResources('AWS::DynamoDB::Table'));
  expect(tables).toHaveLength(1);
  return tables[0] as { Properties: Record<string, never>; DeletionPolicy: string; UpdateReplacePolicy: string };
};

describe('the single table', () => {
  it('has the key schema and every GSI of table-schema.ts, with its projection, all string keys', () => {
    const { Properties: table } = tableOf();

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
        Projection: projectionOf(gsi.projection),
      })),
    );
    const keyNames = [TABLE_KEYS.partitionKey, TABLE_KEYS.sortKey, ...gsis.flatMap((g) => [g.partitionKey, g.sortKey])];
    expect(table.AttributeDefinitions).toEqual(
      expect.arrayContaining(keyNames.map((name) => ({ AttributeName: name, AttributeType: 'S' }))),
    );
    expect(table.AttributeDefinitions).toHaveLength(keyNames.length);
  });

  it('gives gsi2 (the orderings written with every text and delivery) entries of the keys, id and organization alone, and the other indexes whole rows', () => {
    const { Properties: table } = tableOf();
    const projections = Object.fromEntries(
      (table.GlobalSecondaryIndexes as { IndexName: string; Projection: unknown }[]).map((g) => [
        g.IndexName,
        g.Projection,
      ]),
    );

    expect(projections).toEqual({
      gsi1: { ProjectionType: 'ALL' },
      gsi2: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['id', 'tenantId'] },
      gsi3: { ProjectionType: 'ALL' },
      directory: { ProjectionType: 'ALL' },
      changes: { ProjectionType: 'ALL' },
      externalIds: { ProjectionType: 'ALL' },
    });
  });

  it('expires rows by the TTL attribute and streams new and old images', () => {
    const { Properties: table } = tableOf();

    expect(table.TimeToLiveSpecification).toEqual({ AttributeName: TTL_ATTRIBUTE, Enabled: true });
    expect(table.StreamSpecification).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
  });

  it('is on-demand, recoverable to a point in time and encrypted with a KMS key', () => {
    const { Properties: table } = tableOf();

    expect(table.BillingMode).toBe('PAY_PER_REQUEST');
    expect(table.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(table.SSESpecification).toEqual({ SSEEnabled: true });
  });

  it('is protected from deletion and retained by default, in dev too, and its stack is termination-protected', () => {
    const table = tableOf();

    expect(table.Properties.DeletionProtectionEnabled).toBe(true);
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
    expect(synth().stack.terminationProtection).toBe(true);
  });

  it('can be thrown away only when asked to (-c removalPolicy=destroy), and its stack deleted', () => {
    const table = tableOf(THROWN_AWAY);

    expect(table.Properties.DeletionProtectionEnabled).toBe(false);
    expect(table.DeletionPolicy).toBe('Delete');
    expect(synth(THROWN_AWAY).stack.terminationProtection).toBe(false);
  });
});
