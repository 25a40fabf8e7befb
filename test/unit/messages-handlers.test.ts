import 'aws-sdk-client-mock-jest';
import { createHash } from 'node:crypto';
import { mockClient } from 'aws-sdk-client-mock';
import { ConditionalCheckFailedException, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { handler as listThreads } from '../../lambdas/handlers/api/list-threads';
import { handler as listMessages } from '../../lambdas/handlers/api/list-messages';
import { handler as sendMessage } from '../../lambdas/handlers/api/send-message';
import { CarrierError } from '../../lambdas/contexts/texting/carrier-port';
import { metrics } from '../../lambdas/shared/aws';
import { aPrincipal, apiEvent, bodyOf, jsonHeaders, lambdaContext } from '../support/api-event';

// The handler builds its carrier at load; this one is a jest.fn the tests drive.
jest.mock('../../lambdas/contexts/carrier/create-carrier', () => {
  const send = jest.fn();
  return { createCarrier: () => ({ name: 'twilio', send }), mockSend: send };
});
const carrierSend = (jest.requireMock('../../lambdas/contexts/carrier/create-carrier') as { mockSend: jest.Mock }).mockSend;

const ddb = mockClient(DynamoDBDocumentClient);
const principal = aPrincipal();
const tenantId = principal.tenant.id;
const pk = `T#${tenantId}`;
const tenantRow = { pk, sk: 'TENANT' };
const SID = 'SM0123456789abcdef0123456789abcdef';

beforeEach(() => {
  ddb.reset();
  carrierSend.mockReset();
  // The per-key limiter counts every authenticated request; first request of the window by default.
  ddb.on(UpdateCommand).resolves({ Attributes: { count: 1 } });
});

/** Table calls other than the limiter's counter update. */
const dataCalls = () => ddb.calls().filter((call) => !String((call.args[0].input as { Key?: { pk?: string } }).Key?.pk ?? '').includes('#RATE#'));

const organization = (fields: Record<string, unknown> = {}) => ({
  ...tenantRow,
  id: tenantId,
  name: 'Acme',
  slug: 'acme',
  plan: 'pro',
  smsNumber: '+14155550000',
  numbers: ['+14155550000'],
  billingStatus: 'active',
  spendingLimitCents: 100,
  spendCents: 10,
  ...fields,
});

const send = (body: unknown, headers: Record<string, string> = {}) =>
  sendMessage(apiEvent({ method: 'POST', body: JSON.stringify(body), headers: { ...jsonHeaders, ...headers } }), lambdaContext);

describe('GET /messages', () => {
  it('lists threads from gsi2 newest activity first, with hasUnread from the unread counter', async () => {
    ddb.on(QueryCommand).resolves({
      Items: [
        { counterpartNumber: '+14155550101', lastMessage: 'Hi', lastDirection: 'inbound', lastStatus: 'received', lastAt: '2026-10-01T10:00:00.000Z', messageCount: 3, unreadCount: 2 },
        { counterpartNumber: '+14155550102', lastMessage: 'Ok', lastDirection: 'outbound', lastStatus: 'sent', lastAt: '2026-10-01T09:00:00.000Z', messageCount: 1, unreadCount: 0 },
      ],
    });

    const result = await listThreads(apiEvent(), lambdaContext);

    expect(result.statusCode).toBe(200);
    expect(bodyOf(result).threads.map((t: { hasUnread: boolean; messageCount: number }) => [t.hasUnread, t.messageCount])).toEqual([
      [true, 3],
      [false, 1],
    ]);
    expect(ddb).toHaveReceivedCommandWith(QueryCommand, {
      IndexName: 'gsi2',
      ExpressionAttributeValues: { ':pk': `${pk}#THREADS` },
      ScanIndexForward: false,
    });
    // Reading never marks anything read: no write besides the rate-limit count.
    expect(dataCalls().filter((c) => !(c.args[0] instanceof QueryCommand))).toHaveLength(0);
  });

  it('needs the sms.view scope', async () => {
    const result = await listThreads(apiEvent({ principal: aPrincipal({ scopes: ['sms.send'] }) }), lambdaContext);

    expect([result.statusCode, bodyOf(result).requiredScope]).toEqual([403, 'sms.view']);
  });
});

describe('GET /messages/{counterpart}', () => {
  it('answers 400 naming counterpart when it is not E.164, without a read', async () => {
    const result = await listMessages(apiEvent({ pathParameters: { counterpart: '4155550101' } }), lambdaContext);

    expect(result.statusCode).toBe(400);
    expect(bodyOf(result)).toEqual({ error: expect.stringMatching(/^counterpart: /), code: 'validation_failed' });
    expect(dataCalls()).toHaveLength(0);
  });

  it('queries the conversation newest first, one row more than the page, from the cursor', async () => {
    ddb.on(QueryCommand).resolves({ Items: [] });
    const cursor = '0199a000-0000-7000-8000-0000000000d1';

    const result = await listMessages(
      apiEvent({ pathParameters: { counterpart: '+14155550101' }, query: { limit: '2', cursor } }),
      lambdaContext,
    );

    expect([result.statusCode, bodyOf(result)]).toEqual([200, { messages: [], nextCursor: null }]);
    expect(ddb).toHaveReceivedCommandWith(QueryCommand, {
      IndexName: 'gsi1',
      ExpressionAttributeValues: { ':pk': `${pk}#CONVERSATION#+14155550101` },
      ScanIndexForward: false,
      Limit: 3,
      ExclusiveStartKey: { pk, sk: `MSG#${cursor}`, gsi1pk: `${pk}#CONVERSATION#+14155550101`, gsi1sk: `MSG#${cursor}` },
    });
  });
});

describe('POST /messages', () => {
  const chargeOk = () => ddb.on(UpdateCommand, { Key: tenantRow }).resolves({});
  const withOrganization = (fields: Record<string, unknown> = {}) => {
    ddb.on(GetCommand, { Key: tenantRow }).resolves({ Item: organization(fields) });
    ddb.on(GetCommand, { Key: { pk, sk: 'NUMBER#+14155550101' } }).resolves({});
  };

  it('charges, writes message and thread in one transaction, sends, stores the sid and answers 201', async () => {
    withOrganization();
    chargeOk();
    ddb.on(TransactWriteCommand).resolves({});
    carrierSend.mockResolvedValue({ messageSid: SID });

    const result = await send({ to: '+14155550101', body: 'Hello' });

    expect(result.statusCode).toBe(201);
    const { message } = bodyOf(result);
    expect(message).toMatchObject({
      tenantId,
      direction: 'outbound',
      fromNumber: '+14155550000',
      toNumber: '+14155550101',
      counterpartNumber: '+14155550101',
      body: 'Hello',
      status: 'queued',
      messageSid: SID,
      agentId: null,
      isRead: true,
    });
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, {
      Key: tenantRow,
      UpdateExpression: 'ADD #spend :cost',
      ExpressionAttributeValues: expect.objectContaining({ ':cost': 1, ':limit': 100, ':maxSpendBefore': 99 }),
    });
    const [store, sid] = ddb.commandCalls(TransactWriteCommand).map((c) => c.args[0].input.TransactItems!);
    expect(store[0].Put!.Item).toMatchObject({ pk, sk: `MSG#${message.id}`, gsi1pk: `${pk}#CONVERSATION#+14155550101`, segments: 1, costCents: 1 });
    expect(store[1].Update).toMatchObject({ Key: { pk, sk: 'THREAD#+14155550101' }, ConditionExpression: 'attribute_not_exists(#lastMessageId) OR #lastMessageId < :id' });
    expect(sid[1].Put!.Item).toMatchObject({ pk, sk: `MSGSID#${SID}`, messageId: message.id });
    expect(carrierSend).toHaveBeenCalledWith({ tenantId, messageId: message.id, from: '+14155550000', to: '+14155550101', body: 'Hello' });
  });

  it('counts the text and its billed segments as metrics, only once the carrier took it', async () => {
    withOrganization();
    chargeOk();
    ddb.on(TransactWriteCommand).resolves({});
    carrierSend.mockResolvedValueOnce({ messageSid: SID }).mockRejectedValueOnce(new CarrierError('Twilio refused the message: HTTP 503', { httpStatus: 503, retryable: true }));
    const addMetric = jest.spyOn(metrics, 'addMetric');

    await send({ to: '+14155550101', body: 'x'.repeat(161) });
    const sentCalls = addMetric.mock.calls.length;
    await send({ to: '+14155550101', body: 'Hello' });

    expect(addMetric.mock.calls.slice(0, sentCalls)).toEqual([
      ['TextsSent', 'Count', 1],
      ['TextSegmentsBilled', 'Count', 2],
    ]);
    expect(addMetric.mock.calls.slice(sentCalls).map(([name]) => name)).not.toContain('TextsSent');
    addMetric.mockRestore();
  });

  it('refuses unknown fields with 400 naming them, before any read', async () => {
    const result = await send({ to: '+14155550101', body: 'Hello', from: '+14155550000' });

    expect([result.statusCode, bodyOf(result).error]).toEqual([400, 'body.from: unknown field']);
    expect(dataCalls()).toHaveLength(0);
  });

  it('answers 409 no_sms_number without charging', async () => {
    withOrganization({ smsNumber: null });

    const result = await send({ to: '+14155550101', body: 'Hello' });

    expect([result.statusCode, bodyOf(result).code]).toEqual([409, 'no_sms_number']);
    expect(ddb).not.toHaveReceivedCommandWith(UpdateCommand, { Key: tenantRow });
  });

  it('answers 409 recipient_opted_out without charging', async () => {
    withOrganization();
    const contactId = '0199a000-0000-7000-8000-0000000000c1';
    ddb.on(GetCommand, { Key: { pk, sk: 'NUMBER#+14155550101' } }).resolves({ Item: { contactId } });
    ddb.on(GetCommand, { Key: { pk, sk: `CONTACT#${contactId}` } }).resolves({ Item: { id: contactId, consentStatus: 'opted_out' } });

    const result = await send({ to: '+14155550101', body: 'Hello' });

    expect([result.statusCode, bodyOf(result).code]).toEqual([409, 'recipient_opted_out']);
    expect(ddb).not.toHaveReceivedCommandWith(UpdateCommand, { Key: tenantRow });
  });

  it('answers 402 spending_limit_reached when the conditional charge fails, writing no message', async () => {
    withOrganization({ spendingLimitCents: 10 });
    ddb.on(UpdateCommand, { Key: tenantRow }).rejects(
      new ConditionalCheckFailedException({
        message: 'The conditional request failed',
        $metadata: {},
        Item: marshall({ billingStatus: 'active', spendingLimitCents: 10, spendCents: 10 }),
      }),
    );

    const result = await send({ to: '+14155550101', body: 'Hello' });

    expect([result.statusCode, bodyOf(result).code]).toEqual([402, 'spending_limit_reached']);
    expect(ddb).not.toHaveReceivedCommand(TransactWriteCommand);
    expect(carrierSend).not.toHaveBeenCalled();
  });

  it('answers 502 carrier_unavailable, refunds the charge and marks the message failed when the carrier refuses', async () => {
    // Marking it failed reads the message back (defined first: the more specific reads below take precedence).
    ddb.on(GetCommand).callsFake(({ Key }) =>
      Key.sk.startsWith('MSG#') ? { Item: { ...Key, id: Key.sk.slice(4), tenantId, counterpartNumber: '+14155550101', status: 'queued' } } : {},
    );
    withOrganization();
    chargeOk();
    ddb.on(TransactWriteCommand).resolves({});
    carrierSend.mockRejectedValue(new CarrierError('Twilio refused the message: HTTP 503', { httpStatus: 503, retryable: true }));

    const result = await send({ to: '+14155550101', body: 'Hello' });

    expect([result.statusCode, bodyOf(result).code]).toEqual([502, 'carrier_unavailable']);
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, { Key: tenantRow, UpdateExpression: 'ADD #spend :refund', ExpressionAttributeValues: { ':refund': -1 } });
    const [, failed] = ddb.commandCalls(TransactWriteCommand).map((c) => c.args[0].input.TransactItems!);
    expect(failed[0].Update).toMatchObject({ ExpressionAttributeValues: expect.objectContaining({ ':status': 'failed' }) });
  });

  it('answers 400 naming Idempotency-Key when the header is malformed', async () => {
    const result = await send({ to: '+14155550101', body: 'Hello' }, { 'Idempotency-Key': 'has spaces in it' });

    expect([result.statusCode, bodyOf(result).error]).toEqual([400, expect.stringMatching(/^Idempotency-Key: /)]);
    expect(dataCalls()).toHaveLength(0);
  });

  describe('with an Idempotency-Key', () => {
    const request = { to: '+14155550101', body: 'Hello' };
    /** The payload hash Powertools stores: base64 md5 of the body as JSON with sorted keys. */
    const hashOf = (sorted: Record<string, string>) => createHash('md5').update(JSON.stringify(sorted)).digest('base64');
    const requestHash = hashOf({ body: 'Hello', to: '+14155550101' });
    const existing = (fields: Record<string, unknown>) =>
      ddb.on(PutItemCommand).rejects(
        new ConditionalCheckFailedException({
          message: 'The conditional request failed',
          $metadata: {},
          Item: marshall({ pk: `${pk}#IDEMPOTENCY`, sk: 'sendMessage#x', ttl: Math.round(Date.now() / 1000) + 3600, ...fields }),
        }),
      );

    it('claims the key in the tenant partition before doing anything', async () => {
      withOrganization();
      chargeOk();
      ddb.on(TransactWriteCommand).resolves({});
      carrierSend.mockResolvedValue({ messageSid: SID });

      const result = await send(request, { 'Idempotency-Key': 'key-1' });

      expect(result.statusCode).toBe(201);
      const [claim] = ddb.commandCalls(PutItemCommand).map((c) => c.args[0].input);
      expect(claim.Item).toMatchObject({ pk: { S: `${pk}#IDEMPOTENCY` }, sk: { S: expect.stringMatching(/^sendMessage#/) }, status: { S: 'INPROGRESS' } });
      expect(claim.Item!.ttl.N).toBeDefined();
    });

    it('replays a completed response without touching the organization', async () => {
      existing({ status: 'COMPLETED', validation: requestHash, data: { statusCode: 201, body: { message: { id: 'first' } } } });

      const result = await send(request, { 'Idempotency-Key': 'key-1' });

      expect([result.statusCode, bodyOf(result)]).toEqual([201, { message: { id: 'first' } }]);
      expect(result.headers).toMatchObject({ 'Idempotent-Replayed': 'true' });
      expect(ddb).not.toHaveReceivedCommandWith(GetCommand, { Key: tenantRow });
      expect(carrierSend).not.toHaveBeenCalled();
    });

    it('answers 422 idempotency_mismatch for another body and 409 idempotency_conflict while the first runs', async () => {
      existing({ status: 'COMPLETED', validation: hashOf({ body: 'Other', to: '+14155550101' }), data: {} });
      const mismatch = await send(request, { 'Idempotency-Key': 'key-1' });
      existing({ status: 'INPROGRESS', validation: requestHash, in_progress_expiration: Date.now() + 60_000 });
      const running = await send(request, { 'Idempotency-Key': 'key-1' });

      expect([mismatch.statusCode, bodyOf(mismatch).code]).toEqual([422, 'idempotency_mismatch']);
      expect([running.statusCode, bodyOf(running).code]).toEqual([409, 'idempotency_conflict']);
      expect(carrierSend).not.toHaveBeenCalled();
    });
  });
});
