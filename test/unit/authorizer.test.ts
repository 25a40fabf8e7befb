import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { handler } from '../../lambdas/handlers/authorizer/handler';
import { encodeRoutePermissions, ROUTE_SCOPES_ENV } from '../../lambdas/handlers/authorizer/policy';
import { USAGE_PLAN_BUCKETS_ENV, USAGE_PLAN_KEY_PREFIX_ENV } from '../../lambdas/handlers/authorizer/usage-plan-keys';
import { ROUTES } from '../../lambdas/handlers/api/routes';
import { API_PREFIX } from '../../lambdas/handlers/http/route-spec';
import { generateApiKey } from '../../lambdas/contexts/tenants/api-keys';
import { policyAllows } from '../../local/authorizer';
import tokenEventFixture from '../fixtures/aws/token-authorizer-event.json';

const ddb = mockClient(DynamoDBDocumentClient);
beforeAll(() => {
  process.env[ROUTE_SCOPES_ENV] = encodeRoutePermissions(ROUTES, API_PREFIX);
  process.env[USAGE_PLAN_KEY_PREFIX_ENV] = 'cctusage0123456789ab';
  process.env[USAGE_PLAN_BUCKETS_ENV] = '100';
});
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

/** Every keyed route of the manifest as a request's method ARN on the prod stage, with values in its parameters. */
const everyKeyedRoute = ROUTES.filter((route) => route.auth !== null).map((route) => ({
  route,
  arn: `arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/${route.method}${API_PREFIX}${route.path.replace(/\{\w+\}/g, '%2B14155550100')}`,
}));

describe('the Lambda authorizer', () => {
  it('allows a valid key on every route its scopes permit and no other, with the tenant and scopes in the context', async () => {
    givenRows(storedKey(), storedTenant());

    const result = await handler({ type: 'TOKEN', authorizationToken: `Bearer ${key}`, methodArn });

    const allowed = everyKeyedRoute
      .filter(({ arn }) => policyAllows(result, arn))
      .map(({ route }) => route.operationId);
    expect(allowed.sort()).toEqual([
      'cancelMessage',
      'getContact',
      'getMe',
      'listContacts',
      'recordConsent',
      'rescheduleMessage',
      'sendMessage',
    ]);
    expect(result.policyDocument.Statement).toEqual([
      {
        Action: 'execute-api:Invoke',
        Effect: 'Allow',
        Resource: expect.arrayContaining([
          'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/GET/api/v1/contacts/*',
        ]),
      },
    ]);
    expect(result.context).toMatchObject({
      tenantId,
      keyId: storedKey().id,
      scopes: 'contacts.view sms.send',
      keyPrefix: prefix,
    });
    expect(result.context).toMatchObject({
      deniedCode: 'insufficient_scope',
      deniedError: expect.stringContaining('calls.view.team, contacts.manage, sms.view'),
    });
    expect(JSON.stringify(result)).not.toContain(key);
    // Strongly consistent, both: a decision made right after a flush must see the revocation or plan change that
    // preceded it.
    expect(ddb).toHaveReceivedCommandWith(GetCommand, {
      Key: { pk: `KEYHASH#${hash}`, sk: 'APIKEY' },
      ConsistentRead: true,
    });
    expect(ddb).toHaveReceivedCommandWith(GetCommand, {
      Key: { pk: `T#${tenantId}`, sk: 'TENANT' },
      ConsistentRead: true,
    });
  });

  it.each([
    ['a missing header', undefined],
    ['another scheme', `Basic ${key}`],
    ['a malformed key', 'Bearer not-a-key'],
  ])('refuses %s as Unauthorized without reading the table', async (_case, token) => {
    await expect(handler({ type: 'TOKEN', authorizationToken: token as string, methodArn })).rejects.toThrow(
      'Unauthorized',
    );
    expect(ddb.calls()).toHaveLength(0);
  });

  it.each([
    ['unknown', undefined],
    ['revoked', storedKey({ revokedAt: '2026-10-02T00:00:00.000Z' })],
    ['expired', storedKey({ expiresAt: '2026-10-02T00:00:00.000Z' })],
  ])('refuses an %s key as Unauthorized', async (_case, keyRow) => {
    givenRows(keyRow, storedTenant());

    await expect(handler({ type: 'TOKEN', authorizationToken: `Bearer ${key}`, methodArn })).rejects.toThrow(
      'Unauthorized',
    );
  });

  it('denies (403) every route to a key of an organization whose plan has no API access, saying why in the context', async () => {
    givenRows(storedKey(), storedTenant('starter'));

    const result = await handler({ type: 'TOKEN', authorizationToken: `Bearer ${key}`, methodArn });

    expect(everyKeyedRoute.filter(({ arn }) => policyAllows(result, arn))).toEqual([]);
    expect(result.policyDocument.Statement[0]).toMatchObject({
      Effect: 'Deny',
      Resource: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/*',
    });
    expect(result.context).toEqual({
      deniedCode: 'api_access_disabled',
      deniedError: "This organization's plan does not include API access",
    });
  });

  it('answers the TOKEN event of AWS documentation, on the stage and API that event names', async () => {
    givenRows(storedKey(), storedTenant());

    const result = await handler({ ...tokenEventFixture, type: 'TOKEN', authorizationToken: `Bearer ${key}` });

    expect(result.principalId).toBe(storedKey().id);
    expect((result.policyDocument.Statement[0] as { Resource: string[] }).Resource).toContain(
      'arn:aws:execute-api:us-west-2:123456789012:ymy8tbxw7b/*/GET/api/v1/me',
    );
  });

  it('fails (500 at the gateway) rather than guess when the route scopes are not configured', async () => {
    jest.resetModules();
    const saved = process.env[ROUTE_SCOPES_ENV];
    delete process.env[ROUTE_SCOPES_ENV];
    const fresh = (await import(
      '../../lambdas/handlers/authorizer/handler'
    )) as typeof import('../../lambdas/handlers/authorizer/handler');

    const outcome = fresh.handler({ type: 'TOKEN', authorizationToken: `Bearer ${key}`, methodArn }).finally(() => {
      process.env[ROUTE_SCOPES_ENV] = saved;
    });

    await expect(outcome).rejects.toThrow(`${ROUTE_SCOPES_ENV} is not set`);
  });
});
