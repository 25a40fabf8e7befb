import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { consumeKeyBudget } from '../../lambdas/contexts/tenants/rate-limit';
import { rateLimitHeaders, windowOf } from '../../lambdas/contexts/tenants/rate-limit-window';
import { handler as listCalls } from '../../lambdas/handlers/api/list-calls';
import { handler as getContact } from '../../lambdas/handlers/api/get-contact';
import { handler as createContact } from '../../lambdas/handlers/api/create-contact';
import { aPrincipal, apiEvent, bodyOf, jsonHeaders, lambdaContext } from '../support/api-event';
import { metrics } from '../../lambdas/shared/aws';

const ddb = mockClient(DynamoDBDocumentClient);
beforeEach(() => ddb.reset());

const overLimit = () =>
  new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });

describe('the fixed one-minute window', () => {
  it('resets at the next whole minute, counting whole seconds up', () => {
    const start = Date.parse('2026-11-21T10:00:00.000Z');

    expect(windowOf(start)).toEqual({ start, resetSeconds: 60 });
    expect(windowOf(start + 59_001)).toEqual({ start, resetSeconds: 1 });
    expect(windowOf(start + 30_500)).toEqual({ start, resetSeconds: 30 });
    expect(windowOf(start + 60_000).start).toBe(start + 60_000);
  });

  it('counts in a row per tenant, key and window, refusing to count past the limit', async () => {
    const now = Date.parse('2026-11-21T10:00:42.000Z');
    ddb.on(UpdateCommand).resolves({ Attributes: { count: 7 } });

    const state = await consumeKeyBudget('t1', 'k1', 120, now);

    expect(state).toEqual({ allowed: true, limit: 120, remaining: 113, resetSeconds: 18 });
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, {
      Key: { pk: 'T#t1#RATE#k1', sk: '2026-11-21T10:00:00.000Z' },
      ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
      ExpressionAttributeValues: {
        ':one': 1,
        ':limit': 120,
        ':expires': Date.parse('2026-11-21T10:01:00Z') / 1000 + 120,
      },
    });
  });

  it('refuses when the count is already at the limit, and a limit of 0 turns it off without a write', async () => {
    ddb.on(UpdateCommand).rejects(overLimit());

    const refused = await consumeKeyBudget('t1', 'k1', 120, Date.parse('2026-11-21T10:00:15.000Z'));
    const off = await consumeKeyBudget('t1', 'k1', 0);

    expect(refused).toEqual({ allowed: false, limit: 120, remaining: 0, resetSeconds: 45 });
    expect(off.allowed).toBe(true);
    expect(ddb).toHaveReceivedCommandTimes(UpdateCommand, 1);
  });

  it('writes the spec headers and the IETF draft fields from one state', () => {
    expect(rateLimitHeaders({ allowed: true, limit: 120, remaining: 3, resetSeconds: 17 })).toEqual({
      'RateLimit-Limit': '120',
      'RateLimit-Remaining': '3',
      'RateLimit-Reset': '17',
      'RateLimit-Policy': '"default";q=120;w=60',
      RateLimit: '"default";r=3;t=17',
    });
  });
});

describe('rate limits in the middleware chain', () => {
  it('puts the headers on a success', async () => {
    ddb.on(UpdateCommand).resolves({ Attributes: { count: 20 } });
    ddb.on(QueryCommand).resolves({ Items: [] });

    const result = await listCalls(apiEvent({ query: {} }), lambdaContext);

    expect(result.statusCode).toBe(200);
    expect(result.headers).toMatchObject({ 'RateLimit-Limit': '120', 'RateLimit-Remaining': '100' });
  });

  it('puts the headers on a 400 and a 404 too', async () => {
    ddb.on(UpdateCommand).resolves({ Attributes: { count: 2 } });
    ddb.on(GetCommand).resolves({});

    const invalid = await listCalls(apiEvent({ query: { limit: '0' } }), lambdaContext);
    const missing = await getContact(
      apiEvent({ pathParameters: { id: '0199a000-0000-7000-8000-0000000000c1' } }),
      lambdaContext,
    );

    expect([invalid.statusCode, missing.statusCode]).toEqual([400, 404]);
    for (const result of [invalid, missing])
      expect(result.headers).toMatchObject({ 'RateLimit-Remaining': '118', 'RateLimit-Limit': '120' });
  });

  it('counts a request refused for its scope and puts the headers on the 403', async () => {
    ddb.on(UpdateCommand).resolves({ Attributes: { count: 5 } });

    const result = await getContact(
      apiEvent({
        pathParameters: { id: '0199a000-0000-7000-8000-0000000000c1' },
        principal: aPrincipal({ scopes: ['calls.view.team'] }),
      }),
      lambdaContext,
    );

    expect(result.statusCode).toBe(403);
    expect(result.headers).toMatchObject({ 'RateLimit-Remaining': '115' });
    expect(ddb).toHaveReceivedCommandTimes(UpdateCommand, 1);
    expect(ddb).not.toHaveReceivedCommand(GetCommand);
  });

  it('answers an over-limit read 429 with Retry-After, discarding the read that ran alongside', async () => {
    ddb.on(UpdateCommand).rejects(overLimit());
    ddb.on(QueryCommand).resolves({ Items: [] });

    const result = await listCalls(apiEvent({ query: {} }), lambdaContext);

    expect(result.statusCode).toBe(429);
    expect(bodyOf(result)).toEqual({
      error: expect.stringContaining('Rate limit exceeded'),
      code: 'rate_limited',
      requestId: 'req-1',
    });
    expect(Number(result.headers!['Retry-After'])).toBeGreaterThanOrEqual(1);
    expect(result.headers!['Retry-After']).toBe(result.headers!['RateLimit-Reset']);
    expect(result.headers).toMatchObject({ 'RateLimit-Remaining': '0' });
  });

  it('counts a refused request as a RateLimitedRequests metric, and an allowed one not', async () => {
    const addMetric = jest.spyOn(metrics, 'addMetric');
    ddb.on(QueryCommand).resolves({ Items: [] });
    ddb
      .on(UpdateCommand)
      .resolvesOnce({ Attributes: { count: 1 } })
      .rejects(overLimit());

    await listCalls(apiEvent({ query: {} }), lambdaContext);
    const afterAllowed = addMetric.mock.calls.length;
    await listCalls(apiEvent({ query: {} }), lambdaContext);

    expect(afterAllowed).toBe(0);
    expect(addMetric.mock.calls).toEqual([['RateLimitedRequests', 'Count', 1]]);
    addMetric.mockRestore();
  });

  it('refuses an over-limit write before it reaches the table', async () => {
    ddb.on(UpdateCommand).rejects(overLimit());

    const result = await createContact(
      apiEvent({
        method: 'POST',
        body: JSON.stringify({ displayName: 'A', phoneNumber: '+14155550100' }),
        headers: jsonHeaders,
        principal: aPrincipal(),
      }),
      lambdaContext,
    );

    expect(result.statusCode).toBe(429);
    expect(ddb).not.toHaveReceivedCommand(TransactWriteCommand);
  });
});
