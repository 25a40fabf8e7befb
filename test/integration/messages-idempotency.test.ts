import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { createTestTable } from '../support/table';
import { aPrincipal, apiEvent, bodyOf, jsonHeaders, lambdaContext } from '../support/api-event';
import { handler as createContactHandler } from '../../lambdas/handlers/api/create-contact';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { stopLoopbackCarriers } from '../../lambdas/contexts/carrier/loopback';
import { listContacts } from '../../lambdas/contexts/contacts/contacts';
import { IdempotencyConflictError } from '../../lambdas/shared/errors';
import { withIdempotency } from '../../lambdas/handlers/http/idempotency';
import type { Carrier, OutboundText } from '../../lambdas/contexts/texting/carrier-port';
import { sendMessage } from '../../lambdas/contexts/texting/sending';
import { listMessages } from '../../lambdas/contexts/texting/messages';
import { createTenant, getTenant } from '../../lambdas/contexts/tenants/tenants';

type Handler = (event: ReturnType<typeof apiEvent>, context: Context) => Promise<APIGatewayProxyResult>;

const FAILING_NUMBER = '+14155550999';
let sendMessageHandler: Handler;
let tenantId: string;
let otherTenantId: string;

beforeAll(async () => {
  await createTestTable();
  // The handler builds its carrier when it loads: configure it first, then load it.
  process.env.CARRIER = 'loopback';
  process.env.LOOPBACK_STATUS_DELAY_MS = '0';
  process.env.LOOPBACK_FAIL_TO = FAILING_NUMBER;
  ({ handler: sendMessageHandler } = await import('../../lambdas/handlers/api/send-message'));
  tenantId = (await createTenant({ name: 'Idempotent Org', smsNumber: '+14155550000' })).id;
  otherTenantId = (await createTenant({ name: 'Other Org', smsNumber: '+14155550001' })).id;
});

afterAll(stopLoopbackCarriers);

const post = (handler: Handler, body: unknown, key?: string, tenant = tenantId) =>
  handler(
    apiEvent({
      method: 'POST',
      body: JSON.stringify(body),
      headers: { ...jsonHeaders, ...(key && { 'Idempotency-Key': key }) },
      principal: aPrincipal({ tenantId: tenant }),
    }),
    lambdaContext,
  );

describe('Idempotency-Key on POST /messages', () => {
  it('answers a retry with the same key and body with the same message, sending and billing once', async () => {
    // Prepare
    const request = { to: '+14155550601', body: 'Exactly once' };
    // Act
    const first = await post(sendMessageHandler, request, 'send-key-1');
    const retry = await post(sendMessageHandler, { body: 'Exactly once', to: '+14155550601' }, 'send-key-1');
    // Assess
    expect(first.statusCode).toBe(201);
    expect(retry.statusCode).toBe(201);
    // The same message, as it now stands: the loopback carrier may have moved it on meanwhile.
    expect(bodyOf(retry).message).toEqual({ ...bodyOf(first).message, status: expect.stringMatching(/^(queued|sent|delivered)$/) });
    expect(retry.headers).toMatchObject({ 'Idempotent-Replayed': 'true' });
    expect(first.headers?.['Idempotent-Replayed']).toBeUndefined();
    expect((await listMessages(tenantId, '+14155550601', { limit: 10 })).items).toHaveLength(1);
    expect((await getTenant(tenantId))!.spendCents).toBe(1);
    const { Items: records = [] } = await dynamo.send(
      new QueryCommand({
        TableName: TABLE_NAME,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :key)',
        ExpressionAttributeValues: { ':pk': `T#${tenantId}`, ':key': 'SENDKEY#' },
      }),
    );
    expect(records).toEqual([expect.objectContaining({ type: 'sendKey', messageId: bodyOf(first).message.id })]);
    expect(records[0].ttl).toBeGreaterThan(Date.now() / 1000 + 23 * 3600);
    expect(JSON.stringify(records[0])).not.toContain('send-key-1'); // only a hash of the key is stored
  });

  it('answers 422 idempotency_mismatch for the same key with another body, doing nothing', async () => {
    await post(sendMessageHandler, { to: '+14155550602', body: 'Original' }, 'send-key-2');

    const reused = await post(sendMessageHandler, { to: '+14155550602', body: 'Changed' }, 'send-key-2');

    expect(reused.statusCode).toBe(422);
    expect(bodyOf(reused).code).toBe('idempotency_mismatch');
    expect((await listMessages(tenantId, '+14155550602', { limit: 10 })).items.map((m) => m.body)).toEqual(['Original']);
  });

  it('keeps keys per organization: the same key in another organization is a new request', async () => {
    const mine = await post(sendMessageHandler, { to: '+14155550603', body: 'Shared key' }, 'send-key-3');

    const theirs = await post(sendMessageHandler, { to: '+14155550603', body: 'Shared key' }, 'send-key-3', otherTenantId);

    expect([mine.statusCode, theirs.statusCode]).toEqual([201, 201]);
    expect(bodyOf(theirs).message.id).not.toBe(bodyOf(mine).message.id);
    expect(bodyOf(theirs).message.tenantId).toBe(otherTenantId);
  });

  it('keeps a refused send: a retry replays the refusal and never reaches the carrier again', async () => {
    const first = await post(sendMessageHandler, { to: FAILING_NUMBER, body: 'Will fail' }, 'send-key-4');
    const retry = await post(sendMessageHandler, { to: FAILING_NUMBER, body: 'Will fail' }, 'send-key-4');

    expect([first.statusCode, retry.statusCode]).toEqual([422, 422]);
    expect(bodyOf(retry)).toMatchObject({ code: 'carrier_rejected', messageId: bodyOf(first).messageId });
    expect(retry.headers?.['Idempotent-Replayed']).toBe('true');
    expect((await listMessages(tenantId, FAILING_NUMBER, { limit: 10 })).items.map((m) => m.status)).toEqual(['failed']);
  });
});

describe('Idempotency-Key on POST /contacts', () => {
  it('replays a created contact instead of answering 409 for the retry', async () => {
    const request = { displayName: 'Retry Ray', phoneNumber: '+14155550611' };

    const first = await post(createContactHandler, request, 'contact-key-1');
    const retry = await post(createContactHandler, request, 'contact-key-1');
    const withoutKey = await post(createContactHandler, request);

    expect(first.statusCode).toBe(201);
    expect([retry.statusCode, bodyOf(retry)]).toEqual([201, bodyOf(first)]);
    expect(withoutKey.statusCode).toBe(409);
    const named = await listContacts(tenantId, { limit: 100, includeAutoCreated: true, search: 'Retry Ray' });
    expect(named.items).toHaveLength(1);
  });
});

/** A carrier that holds each send until released, counting the requests it got. */
function heldCarrier(): Carrier & { sent: OutboundText[]; release: () => void } {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const sent: OutboundText[] = [];
  return {
    name: 'twilio',
    sent,
    release: () => release(),
    send: async (text) => {
      sent.push(text);
      await held;
      return { messageSid: `SM${text.messageId.replace(/-/g, '')}` };
    },
  };
}

describe('a retry of a send while the first still runs', () => {
  it('answers with the in-flight message as it stands and never reaches the carrier; five at once send one text', async () => {
    // Prepare
    const carrier = heldCarrier();
    const request = { to: '+14155550631', body: 'Held' };
    const first = sendMessage(tenantId, request, carrier, { idempotencyKey: 'held-key' });
    while (carrier.sent.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    // Act
    const retries = await Promise.all(Array.from({ length: 5 }, () => sendMessage(tenantId, request, carrier, { idempotencyKey: 'held-key' })));
    carrier.release();
    const done = await first;
    // Assess
    expect(carrier.sent).toHaveLength(1);
    expect(retries.map((r) => [r.replayed, r.message.id, r.message.status])).toEqual(Array(5).fill([true, done.message.id, 'queued']));
    expect((await listMessages(tenantId, request.to, { limit: 10 })).items).toHaveLength(1);
  });

  it('lets only one of concurrent first sends with one key reach the carrier', async () => {
    const carrier = heldCarrier();
    carrier.release();
    const request = { to: '+14155550632', body: 'Raced' };
    const spendBefore = (await getTenant(tenantId))!.spendCents;

    const results = await Promise.all(Array.from({ length: 6 }, () => sendMessage(tenantId, request, carrier, { idempotencyKey: 'raced-key' })));

    expect(carrier.sent).toHaveLength(1);
    expect(new Set(results.map((r) => r.message.id)).size).toBe(1);
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    expect((await getTenant(tenantId))!.spendCents - spendBefore).toBe(1);
  });
});

describe('a retry of POST /contacts while the first request still runs', () => {
  it('is refused with 409 idempotency_conflict, and the key is replayable once the first finishes', async () => {
    let release!: () => void;
    const running = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const hasStarted = new Promise<void>((resolve) => (started = resolve));
    const scope = { tenantId, operation: 'createContact', headers: { 'idempotency-key': 'slow-key' }, request: { displayName: 'Slow', phoneNumber: '+14155550621' } };
    const first = withIdempotency(scope, async () => {
      started();
      await running;
      return { statusCode: 201, body: { done: true } };
    });
    await hasStarted;

    const concurrent = withIdempotency(scope, async () => ({ statusCode: 201, body: { done: 'twice' } }));

    await expect(concurrent).rejects.toBeInstanceOf(IdempotencyConflictError);
    release();
    await expect(first).resolves.toEqual({ statusCode: 201, body: { done: true } });
    await expect(withIdempotency(scope, async () => ({ statusCode: 201, body: { done: 'again' } }))).resolves.toMatchObject({
      statusCode: 201,
      body: { done: true },
    });
  });
});
