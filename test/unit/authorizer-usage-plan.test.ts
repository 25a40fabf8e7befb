import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { handler } from '../../lambdas/handlers/authorizer/handler';
import { generateApiKey } from '../../lambdas/contexts/tenants/api-keys';
import { ROUTE_SCOPES_ENV } from '../../lambdas/handlers/authorizer/policy';
import {
  usagePlanBucketOf,
  usagePlanKeyFor,
  usagePlanKeyPrefixOf,
  usagePlanKeyValues,
  USAGE_PLAN_BUCKETS_ENV,
  USAGE_PLAN_KEY_PREFIX_ENV,
} from '../../lambdas/handlers/authorizer/usage-plan-keys';
import { uuidv7 } from '../../lambdas/shared/ids';

const ddb = mockClient(DynamoDBDocumentClient);
const BUCKETS = { prefix: usagePlanKeyPrefixOf('CctService-prod'), count: 100 };
beforeAll(() => {
  process.env[ROUTE_SCOPES_ENV] = 'GET /api/v1/calls calls.view.team';
  process.env[USAGE_PLAN_KEY_PREFIX_ENV] = BUCKETS.prefix;
  process.env[USAGE_PLAN_BUCKETS_ENV] = String(BUCKETS.count);
});
beforeEach(() => ddb.reset());

const methodArn = 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/GET/api/v1/calls';
const tenantId = '0199a000-0000-7000-8000-000000000001';
const keyId = '0199a000-0000-7000-8000-0000000000aa';
const { key, hash, prefix } = generateApiKey();

/** A key row of the organization on `plan`. */
function givenKey(plan: string) {
  ddb.on(GetCommand, { Key: { pk: `KEYHASH#${hash}`, sk: 'APIKEY' } }).resolves({
    Item: {
      id: keyId,
      tenantId,
      name: 'k',
      prefix,
      scopes: ['calls.view.team'],
      expiresAt: null,
      createdAt: '2026-10-01T00:00:00.000Z',
      revokedAt: null,
    },
  });
  ddb
    .on(GetCommand, { Key: { pk: `T#${tenantId}`, sk: 'TENANT' } })
    .resolves({ Item: { id: tenantId, name: 'Acme', slug: 'acme', plan } });
}

describe('the usage-plan key the authorizer names', () => {
  it("is the bucket of the key's id, one of the usage-plan keys the stack creates", async () => {
    givenKey('pro');

    const result = await handler({ type: 'TOKEN', authorizationToken: `Bearer ${key}`, methodArn });

    expect(result.usageIdentifierKey).toBe(usagePlanKeyFor(keyId, BUCKETS));
    expect(usagePlanKeyValues(BUCKETS)).toContain(result.usageIdentifierKey);
  });

  it('spreads any number of keys over the fixed buckets, evenly, each key in one bucket for life', () => {
    const ids = Array.from({ length: 20_000 }, () => uuidv7());

    const perBucket = new Map<number, number>();
    for (const id of ids)
      perBucket.set(
        usagePlanBucketOf(id, BUCKETS.count),
        (perBucket.get(usagePlanBucketOf(id, BUCKETS.count)) ?? 0) + 1,
      );

    expect(perBucket.size).toBe(BUCKETS.count);
    // 200 a bucket on average; a hash of time-ordered ids must not pile them up.
    expect(Math.min(...perBucket.values())).toBeGreaterThan(120);
    expect(Math.max(...perBucket.values())).toBeLessThan(280);
    expect(usagePlanKeyFor(ids[0], BUCKETS)).toBe(usagePlanKeyFor(ids[0], BUCKETS));
  });

  it('has values API Gateway accepts (20 to 128 alphanumerics), unique to the stack, revealing nothing of a key', () => {
    const values = usagePlanKeyValues(BUCKETS);

    expect(new Set(values).size).toBe(100);
    for (const value of values) expect(value).toMatch(/^[a-z0-9]{20,128}$/);
    expect(usagePlanKeyPrefixOf('CctService-prod')).not.toBe(usagePlanKeyPrefixOf('CctService-prod2'));
    expect(values.join()).not.toContain(key.slice(4, 12));
    expect(values.join()).not.toContain(hash.slice(0, 12));
  });

  it('is not given with a denial', async () => {
    givenKey('starter');

    const result = await handler({ type: 'TOKEN', authorizationToken: `Bearer ${key}`, methodArn });

    expect(result.policyDocument.Statement[0]).toMatchObject({ Effect: 'Deny' });
    expect(result.usageIdentifierKey).toBeUndefined();
  });

  it('fails (500 at the gateway) rather than let a request through unmetered when the buckets are not configured', async () => {
    jest.resetModules();
    const saved = process.env[USAGE_PLAN_BUCKETS_ENV];
    delete process.env[USAGE_PLAN_BUCKETS_ENV];
    const fresh = (await import(
      '../../lambdas/handlers/authorizer/handler'
    )) as typeof import('../../lambdas/handlers/authorizer/handler');

    const outcome = fresh.handler({ type: 'TOKEN', authorizationToken: `Bearer ${key}`, methodArn }).finally(() => {
      process.env[USAGE_PLAN_BUCKETS_ENV] = saved;
    });

    await expect(outcome).rejects.toThrow(USAGE_PLAN_BUCKETS_ENV);
  });
});
