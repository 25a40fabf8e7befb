import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { handler } from '../../lambdas/handlers/authorizer/handler';
import { generateApiKey, usagePlanKeyValueOf } from '../../lambdas/contexts/tenants/api-keys';
import { ROUTE_SCOPES_ENV } from '../../lambdas/handlers/authorizer/policy';

const ddb = mockClient(DynamoDBDocumentClient);
beforeAll(() => {
  process.env[ROUTE_SCOPES_ENV] = 'GET /api/v1/calls calls.view.team';
});
beforeEach(() => ddb.reset());

const methodArn = 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/GET/api/v1/calls';
const tenantId = '0199a000-0000-7000-8000-000000000001';
const keyId = '0199a000-0000-7000-8000-0000000000aa';
const { key, hash, prefix } = generateApiKey();

function givenKey(plan: string) {
  ddb.on(GetCommand, { Key: { pk: `KEYHASH#${hash}`, sk: 'APIKEY' } }).resolves({
    Item: { id: keyId, tenantId, name: 'k', prefix, scopes: ['calls.view.team'], expiresAt: null, createdAt: '2026-10-01T00:00:00.000Z', revokedAt: null },
  });
  ddb.on(GetCommand, { Key: { pk: `T#${tenantId}`, sk: 'TENANT' } }).resolves({ Item: { id: tenantId, name: 'Acme', slug: 'acme', plan } });
}

describe('the usage-plan key the authorizer names', () => {
  it('is derived from the key id (usage-<id>), so API Gateway meters the key in the usage plan', async () => {
    givenKey('pro');

    const result = await handler({ type: 'TOKEN', authorizationToken: `Bearer ${key}`, methodArn });

    expect(result.usageIdentifierKey).toBe(`usage-${keyId}`);
    expect(result.usageIdentifierKey).toBe(usagePlanKeyValueOf(keyId));
  });

  it('is long enough for API Gateway (at least 20 characters) and reveals nothing of the key', () => {
    const value = usagePlanKeyValueOf(keyId);

    expect(value.length).toBeGreaterThanOrEqual(20);
    expect(value).not.toContain(key.slice(4, 12));
    expect(value).not.toContain(hash);
  });

  it('is not given with a denial', async () => {
    givenKey('starter');

    const result = await handler({ type: 'TOKEN', authorizationToken: `Bearer ${key}`, methodArn });

    expect(result.policyDocument.Statement[0]).toMatchObject({ Effect: 'Deny' });
    expect(result.usageIdentifierKey).toBeUndefined();
  });
});
