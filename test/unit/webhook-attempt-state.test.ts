import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { BatchGetCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TABLE_NAME } from '../../lambdas/shared/aws';
import { tenantKey, toItem as tenantItem, type Tenant } from '../../lambdas/contexts/tenants/tenants';
import { readAttemptState, readAttemptStates } from '../../lambdas/contexts/webhooks/internal/attempt-state';
import { endpointKey, toItem as endpointItem, type WebhookEndpoint } from '../../lambdas/contexts/webhooks/endpoints';
import { DEFAULT_QUIET_HOURS } from '../../lambdas/contexts/tenants/quiet-hours-policy';

const ddb = mockClient(DynamoDBDocumentClient);
beforeEach(() => ddb.reset());

const tenantId = '0199a000-0000-7000-8000-000000000001';
const endpointId = '0199a000-0000-7000-8000-0000000000e1';
const at = new Date('2026-11-21T12:00:00.000Z');

const endpoint: WebhookEndpoint = {
  id: endpointId,
  tenantId,
  url: 'https://hooks.example.com/in',
  events: ['sms.received'],
  secret: 'whsec_test',
  createdAt: at.toISOString(),
  disabledAt: null,
  disabledReason: null,
  failingSince: null,
  previousSecret: null,
  previousSecretExpiresAt: null,
};
const tenant = {
  id: tenantId,
  name: 'Acme',
  slug: 'acme',
  quietHours: DEFAULT_QUIET_HOURS,
  plan: 'pro',
  smsNumber: null,
  numbers: [],
  billingStatus: 'active',
  spendingLimitCents: null,
  smsRateCents: 1,
  spendCents: 0,
  approvedHosts: ['hooks.example.com'],
  createdAt: at.toISOString(),
  updatedAt: at.toISOString(),
} as Tenant;

describe('readAttemptState', () => {
  it('reads endpoint and organization in one strongly consistent BatchGetItem, all keys inside the organization', async () => {
    // Prepare
    ddb.on(BatchGetCommand).resolves({ Responses: { [TABLE_NAME]: [tenantItem(tenant), endpointItem(endpoint)] } });

    // Act
    const state = await readAttemptState(tenantId, endpointId);

    // Assess
    expect(ddb).toHaveReceivedCommandTimes(BatchGetCommand, 1);
    expect(ddb).toHaveReceivedCommandWith(BatchGetCommand, {
      RequestItems: {
        [TABLE_NAME]: { Keys: [endpointKey(tenantId, endpointId), tenantKey(tenantId)], ConsistentRead: true },
      },
    });
    for (const key of ddb.commandCalls(BatchGetCommand)[0].args[0].input.RequestItems![TABLE_NAME].Keys!) {
      expect(String(key.pk).startsWith(`T#${tenantId}`)).toBe(true);
    }
    expect(state.endpoint).toEqual(endpoint);
    expect(state.tenant?.approvedHosts).toEqual(['hooks.example.com']);
  });

  it('reads a batch of attempts in one BatchGetItem, each endpoint and organization once however many attempts share it', async () => {
    // Prepare
    const otherEndpoint = { ...endpoint, id: '0199a000-0000-7000-8000-0000000000e2' };
    ddb.on(BatchGetCommand).resolves({
      Responses: { [TABLE_NAME]: [endpointItem(otherEndpoint), tenantItem(tenant), endpointItem(endpoint)] },
    });

    // Act
    const states = await readAttemptStates([
      { tenantId, endpointId },
      { tenantId, endpointId: otherEndpoint.id },
      { tenantId, endpointId },
    ]);

    // Assess
    expect(ddb).toHaveReceivedCommandTimes(BatchGetCommand, 1);
    expect(ddb.commandCalls(BatchGetCommand)[0].args[0].input.RequestItems![TABLE_NAME].Keys).toEqual([
      endpointKey(tenantId, endpointId),
      tenantKey(tenantId),
      endpointKey(tenantId, otherEndpoint.id),
    ]);
    expect(states.map((s) => [s.endpoint?.id, s.tenant?.id])).toEqual([
      [endpointId, tenantId],
      [otherEndpoint.id, tenantId],
      [endpointId, tenantId],
    ]);
  });

  it('reports rows that do not exist as undefined (a deleted endpoint)', async () => {
    ddb.on(BatchGetCommand).resolves({ Responses: { [TABLE_NAME]: [tenantItem(tenant)] } });

    const state = await readAttemptState(tenantId, endpointId);

    expect(state).toEqual({ endpoint: undefined, tenant: expect.objectContaining({ id: tenantId }) });
  });

  it('asks again for the keys DynamoDB left unprocessed, and only for those', async () => {
    const unprocessed = [endpointKey(tenantId, endpointId)];
    ddb
      .on(BatchGetCommand)
      .resolvesOnce({
        Responses: { [TABLE_NAME]: [tenantItem(tenant)] },
        UnprocessedKeys: { [TABLE_NAME]: { Keys: unprocessed } },
      })
      .resolvesOnce({ Responses: { [TABLE_NAME]: [endpointItem(endpoint)] } });

    const state = await readAttemptState(tenantId, endpointId);

    expect(ddb).toHaveReceivedCommandTimes(BatchGetCommand, 2);
    expect(ddb.commandCalls(BatchGetCommand)[1].args[0].input).toEqual({
      RequestItems: { [TABLE_NAME]: { Keys: unprocessed, ConsistentRead: true } },
    });
    expect(state.endpoint).toEqual(endpoint);
    expect(state.tenant?.id).toEqual(tenantId);
  });

  it('fails (so the queue retries the message) when keys stay unprocessed', async () => {
    ddb.on(BatchGetCommand).resolves({
      Responses: { [TABLE_NAME]: [] },
      UnprocessedKeys: { [TABLE_NAME]: { Keys: [tenantKey(tenantId)] } },
    });

    await expect(readAttemptState(tenantId, endpointId)).rejects.toThrow(
      'batchGetItems: 1 keys unprocessed after 4 rounds',
    );
    expect(ddb).toHaveReceivedCommandTimes(BatchGetCommand, 4);
  });
});
