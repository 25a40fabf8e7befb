import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { handler, wholeApiArn } from '../../lambdas/handlers/authorizer/handler';
import { generateApiKey } from '../../lambdas/contexts/tenants/api-keys';

const ddb = mockClient(DynamoDBDocumentClient);
beforeEach(() => ddb.reset());

const methodArn = 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/GET/api/v1/contacts';
const tenantId = '0199a000-0000-7000-8000-000000000001';
const { key, hash, prefix } = generateApiKey();

function storedKey(overrides: Record<string, unknown> = {}) {
  return {
    pk: `KEYHASH#${hash}`,
    sk: 'APIKEY',
    id: '0199a000-0000-7000-8000-0000000000aa',
    tenantId,
    name: 'CI key',
    prefix,
    scopes: ['contacts.view', 'sms.send', 'not.a.scope'],
    expiresAt: null,
    createdAt: '2026-10-01T00:00:00.000Z',
    revokedAt: null,
    ...overrides,
  };
}

function storedTenant(plan = 'pro') {
  return { pk: `T#${tenantId}`, sk: 'TENANT', id: tenantId, name: 'Acme', slug: 'acme', plan, billingStatus: 'active' };
}

function givenRows(keyRow: Record<string, unknown> | undefined, tenantRow: Record<string, unknown> | undefined) {
  ddb.on(GetCommand, { Key: { pk: `KEYHASH#${hash}`, sk: 'APIKEY' } }).resolves({ Item: keyRow });
  ddb.on(GetCommand, { Key: { pk: `T#${tenantId}`, sk: 'TENANT' } }).resolves({ Item: tenantRow });
}

describe('the Lambda authorizer', () => {
  it('allows a valid key for the whole API, with the tenant and the scopes it holds in the context', async () => {
    givenRows(storedKey(), storedTenant());

    const result = await handler({ type: 'TOKEN', authorizationToken: `Bearer ${key}`, methodArn });

    expect(result.policyDocument.Statement).toEqual([
      { Action: 'execute-api:Invoke', Effect: 'Allow', Resource: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/*' },
    ]);
    expect(result.context).toMatchObject({ tenantId, keyId: storedKey().id, scopes: 'contacts.view sms.send', keyPrefix: prefix });
    expect(JSON.stringify(result)).not.toContain(key);
    expect(ddb).toHaveReceivedCommandWith(GetCommand, { Key: { pk: `KEYHASH#${hash}`, sk: 'APIKEY' } });
  });

  it.each([
    ['a missing header', undefined],
    ['another scheme', `Basic ${key}`],
    ['a malformed key', 'Bearer not-a-key'],
  ])('refuses %s as Unauthorized without reading the table', async (_case, token) => {
    await expect(handler({ type: 'TOKEN', authorizationToken: token as string, methodArn })).rejects.toThrow('Unauthorized');
    expect(ddb.calls()).toHaveLength(0);
  });

  it.each([
    ['unknown', undefined],
    ['revoked', storedKey({ revokedAt: '2026-10-02T00:00:00.000Z' })],
    ['expired', storedKey({ expiresAt: '2026-10-02T00:00:00.000Z' })],
  ])('refuses an %s key as Unauthorized', async (_case, keyRow) => {
    givenRows(keyRow, storedTenant());

    await expect(handler({ type: 'TOKEN', authorizationToken: `Bearer ${key}`, methodArn })).rejects.toThrow('Unauthorized');
  });

  it('denies (403) a key of an organization whose plan has no API access', async () => {
    givenRows(storedKey(), storedTenant('starter'));

    const result = await handler({ type: 'TOKEN', authorizationToken: `Bearer ${key}`, methodArn });

    expect(result.policyDocument.Statement[0]).toMatchObject({ Effect: 'Deny' });
    expect(result.context).toBeUndefined();
  });

  it('widens the method ARN to every method of the stage, because the decision is cached per key', () => {
    expect(wholeApiArn(methodArn)).toBe('arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/*');
  });
});
