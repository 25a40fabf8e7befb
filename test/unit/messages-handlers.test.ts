import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { handler as listThreads } from '../../lambdas/handlers/api/list-threads';
import { handler as listMessages } from '../../lambdas/handlers/api/list-messages';
import { handler as sendMessage } from '../../lambdas/handlers/api/send-message';
import { CarrierError } from '../../lambdas/contexts/texting/carrier-port';
import { requestHashOf } from '../../lambdas/contexts/texting/send-keys';
import { SEND_TIME_NEEDED_MS } from '../../lambdas/contexts/texting/sending';
import { metrics } from '../../lambdas/shared/aws';
import { aPrincipal, apiEvent, bodyOf, jsonHeaders, lambdaContext } from '../support/api-event';

// The handler builds its carrier at load; this one is a jest.fn the tests drive.
jest.mock('../../lambdas/contexts/carrier/create-carrier', () => {
  const send = jest.fn();
  return { createCarrier: () => ({ name: 'twilio', send }), mockSend: send };
});
const carrierSend = (jest.requireMock('../../lambdas/contexts/carrier/create-carrier') as { mockSend: jest.Mock })
  .mockSend;
import { batchGetAnswer, type BatchGetInput, type RowKey } from '../support/batch-get-answer';

const ddb = mockClient(DynamoDBDocumentClient);
const principal = aPrincipal();
const tenantId = principal.tenant.id;
const pk = `T#${tenantId}`;
const tenantRow = { pk, sk: 'TENANT' };
const SID = 'SM0123456789abcdef0123456789abcdef';
const messageKey = (id: string) => ({ pk: `${pk}#MSG#${id}`, sk: 'MESSAGE' });
const shardKey = (shard: number) => ({ pk: `${pk}#SPEND#${shard}`, sk: 'SPEND' });

beforeEach(() => {
  ddb.reset();
  carrierSend.mockReset();
  // The per-key limiter counts every authenticated request; first request of the window by default.
  ddb.on(UpdateCommand).resolves({ Attributes: { count: 1 } });
});

/** Table calls other than the limiter's counter update. */
const dataCalls = () =>
  ddb
    .calls()
    .filter((call) => !String((call.args[0].input as { Key?: { pk?: string } }).Key?.pk ?? '').includes('#RATE#'));

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
  smsRateCents: 1,
  // Its spend lives on 32 shards (texting/spend.ts), settled at the limit version the row holds.
  limitVersion: 0,
  ...fields,
});

/** The organization's spend shards as a BatchGetItem of them answers. */
const shards = (headroomOf: (shard: number) => number, fields: Record<string, unknown> = {}) =>
  Array.from({ length: 32 }, (_, shard) => ({
    ...shardKey(shard),
    shard,
    spendCents: 0,
    headroomCents: headroomOf(shard),
    owing: false,
    limitVersion: 0,
    ...fields,
  }));

const send = (body: unknown, headers: Record<string, string> = {}) =>
  sendMessage(
    apiEvent({ method: 'POST', body: JSON.stringify(body), headers: { ...jsonHeaders, ...headers } }),
    lambdaContext,
  );

describe('GET /messages', () => {
  /** A thread's entry in gsi2 (its keys alone) and its row, for a thread whose newest message is `lastMessageId`. */
  const threadOf = (n: number, lastMessageId: string, fields: Record<string, unknown> = {}) => {
    const key = { pk: `${pk}#THREAD#+1415555010${n}`, sk: 'THREAD' };
    const entry = { ...key, gsi2pk: `${pk}#THREADS`, gsi2sk: `2026-10-01T10:00:00.000Z#${lastMessageId}` };
    const row = {
      ...entry,
      counterpartNumber: `+1415555010${n}`,
      lastMessage: 'Hi',
      lastDirection: 'inbound',
      lastStatus: 'received',
      lastAt: '2026-10-01T10:00:00.000Z',
      messageCount: 1,
      unreadCount: 0,
      lastMessageId,
      ...fields,
    };
    return { key, entry, row };
  };

  it("lists threads from gsi2 newest activity first, reading the page's threads by key, with hasUnread from the unread counter", async () => {
    // Prepare: the index holds keys; the batch read answers in its own order.
    const newer = threadOf(1, '019a5f10-2000-7000-8000-000000000001', { messageCount: 3, unreadCount: 2 });
    const older = threadOf(2, '019a5f10-1000-7000-8000-000000000002', {
      lastDirection: 'outbound',
      lastStatus: 'sent',
    });
    ddb.on(QueryCommand).resolves({ Items: [newer.entry, older.entry] });
    ddb.on(BatchGetCommand).resolves({ Responses: { [process.env.TABLE_NAME!]: [older.row, newer.row] } });
    // Act
    const result = await listThreads(apiEvent(), lambdaContext);
    // Assess
    expect(result.statusCode).toBe(200);
    expect(
      bodyOf(result).threads.map((t: { counterpartNumber: string; hasUnread: boolean; messageCount: number }) => [
        t.counterpartNumber,
        t.hasUnread,
        t.messageCount,
      ]),
    ).toEqual([
      ['+14155550101', true, 3],
      ['+14155550102', false, 1],
    ]);
    expect(ddb).toHaveReceivedCommandWith(QueryCommand, {
      IndexName: 'gsi2',
      ExpressionAttributeValues: { ':pk': `${pk}#THREADS` },
      ScanIndexForward: false,
    });
    expect(ddb).toHaveReceivedCommandWith(BatchGetCommand, {
      RequestItems: { [process.env.TABLE_NAME!]: { Keys: [newer.key, older.key] } },
    });
    // Reading never marks anything read: no write besides the rate-limit count.
    expect(
      dataCalls().filter((c) => !(c.args[0] instanceof QueryCommand) && !(c.args[0] instanceof BatchGetCommand)),
    ).toHaveLength(0);
  });

  it('reads one thread more than the page below the cursor and answers the last thread as nextCursor', async () => {
    // Prepare: the cursor is the newest message id of the previous page's last thread.
    const cursor = '019a5f10-3a00-7000-8000-000000000001';
    const threads = [
      threadOf(1, '019a5f10-2000-7000-8000-000000000001'),
      threadOf(2, '019a5f10-1000-7000-8000-000000000002'),
      threadOf(3, '019a5f10-0000-7000-8000-000000000003'),
    ];
    ddb.on(QueryCommand).resolves({ Items: threads.map((t) => t.entry) });
    ddb
      .on(BatchGetCommand)
      .resolves({ Responses: { [process.env.TABLE_NAME!]: threads.slice(0, 2).map((t) => t.row) } });
    // Act
    const result = await listThreads(apiEvent({ query: { limit: '2', cursor } }), lambdaContext);
    // Assess
    expect(result.statusCode).toBe(200);
    expect(bodyOf(result)).toEqual({
      threads: [
        expect.objectContaining({ counterpartNumber: '+14155550101' }),
        expect.objectContaining({ counterpartNumber: '+14155550102' }),
      ],
      nextCursor: '019a5f10-1000-7000-8000-000000000002',
    });
    expect(bodyOf(result).threads[0]).not.toHaveProperty('lastMessageId');
    expect(ddb).toHaveReceivedCommandWith(QueryCommand, {
      IndexName: 'gsi2',
      KeyConditionExpression: '#pk = :pk AND #sk < :before',
      ExpressionAttributeValues: {
        ':pk': `${pk}#THREADS`,
        ':before': `${new Date(0x019a5f103a00).toISOString()}#${cursor}`,
      },
      Limit: 3,
    });
    // Only the page's threads are read, not the one read ahead.
    expect(ddb).toHaveReceivedCommandWith(BatchGetCommand, {
      RequestItems: { [process.env.TABLE_NAME!]: { Keys: threads.slice(0, 2).map((t) => t.key) } },
    });
  });

  it('answers the first 50 threads without paging parameters, and 400 naming limit for a non-integer', async () => {
    // Prepare
    ddb.on(QueryCommand).resolves({ Items: [] });
    // Act
    const first = await listThreads(apiEvent(), lambdaContext);
    const refused = await listThreads(apiEvent({ query: { limit: 'ten' } }), lambdaContext);
    // Assess
    expect(bodyOf(first)).toEqual({ threads: [], nextCursor: null });
    expect(ddb).toHaveReceivedCommandWith(QueryCommand, { Limit: 51 });
    expect([refused.statusCode, bodyOf(refused).error]).toEqual([400, expect.stringMatching(/^limit: /)]);
  });

  it('needs the sms.view scope', async () => {
    // Act
    const result = await listThreads(apiEvent({ principal: aPrincipal({ scopes: ['sms.send'] }) }), lambdaContext);
    // Assess
    expect([result.statusCode, bodyOf(result).requiredScope]).toEqual([403, 'sms.view']);
  });
});

describe('GET /messages/{counterpart}', () => {
  it('answers 400 naming counterpart when it is not E.164, without a read', async () => {
    // Act
    const result = await listMessages(apiEvent({ pathParameters: { counterpart: '4155550101' } }), lambdaContext);
    // Assess
    expect(result.statusCode).toBe(400);
    expect(bodyOf(result)).toEqual({
      error: expect.stringMatching(/^counterpart: /),
      code: 'validation_failed',
      requestId: 'req-1',
    });
    expect(dataCalls()).toHaveLength(0);
  });

  it('queries the conversation newest first, one row more than the page, from the cursor', async () => {
    // Prepare
    ddb.on(QueryCommand).resolves({ Items: [] });
    const cursor = '0199a000-0000-7000-8000-0000000000d1';
    // Act
    const result = await listMessages(
      apiEvent({ pathParameters: { counterpart: '+14155550101' }, query: { limit: '2', cursor } }),
      lambdaContext,
    );
    // Assess
    expect([result.statusCode, bodyOf(result)]).toEqual([200, { messages: [], nextCursor: null }]);
    expect(ddb).toHaveReceivedCommandWith(QueryCommand, {
      IndexName: 'gsi1',
      ExpressionAttributeValues: { ':pk': `${pk}#CONVERSATION#+14155550101` },
      ScanIndexForward: false,
      Limit: 3,
      ExclusiveStartKey: { ...messageKey(cursor), gsi1pk: `${pk}#CONVERSATION#+14155550101`, gsi1sk: `MSG#${cursor}` },
    });
  });
});

describe('POST /messages', () => {
  const request = { to: '+14155550101', body: 'Hello' };
  /** The stored row of the message a test's send wrote (read back by the sid and failure writes). */
  const storedRow = (fields: Record<string, unknown> = {}) => ({
    tenantId,
    direction: 'outbound',
    fromNumber: '+14155550000',
    toNumber: '+14155550101',
    counterpartNumber: '+14155550101',
    body: 'Hello',
    status: 'queued',
    messageSid: '',
    isRead: true,
    costCents: 1,
    spendShard: 3,
    createdAt: '2026-10-01T10:00:00.000Z',
    ...fields,
  });
  const messageIdOf = (key: { pk: string }) => key.pk.slice(`${pk}#MSG#`.length);
  /**
   * The table as the send's reads see it, whether by GetItem or by BatchGetItem (its first read is one batch of the
   * Idempotency-Key, the organization and the thread): `rowAt` answers a key, `shardRows` a read of the spend shards.
   */
  const serveRows = (rowAt: (key: RowKey) => Record<string, unknown> | undefined, shardRows: unknown[] = []) => {
    ddb.on(GetCommand).callsFake(({ Key }: { Key: RowKey }) => ({ Item: rowAt(Key) }));
    const rowsOf = batchGetAnswer(rowAt);
    ddb.on(BatchGetCommand).callsFake((input: BatchGetInput) => {
      const [table, { Keys }] = Object.entries(input.RequestItems)[0];
      return Keys.some((key) => key.sk === 'SPEND') ? { Responses: { [table]: shardRows } } : rowsOf(input);
    });
  };
  /** The reads of the spend shards (a send that charges at once reads none). */
  const shardReads = () =>
    ddb
      .commandCalls(BatchGetCommand)
      .filter((c) => Object.values(c.args[0].input.RequestItems!)[0].Keys!.some((key) => key.sk === 'SPEND'));
  /** The organization row, the send's own message row, and `keyRow` for the Idempotency-Key when given. */
  const organizationRows =
    (fields: Record<string, unknown> = {}, keyRow?: Record<string, unknown>) =>
    (Key: RowKey) =>
      Key.sk === 'TENANT'
        ? organization(fields)
        : Key.sk === 'MESSAGE'
          ? { ...Key, id: messageIdOf(Key), ...storedRow() }
          : Key.sk.startsWith('SENDKEY#') && keyRow
            ? keyRow
            : undefined;
  const withOrganization = (fields: Record<string, unknown> = {}, keyRow?: Record<string, unknown>) => {
    serveRows(organizationRows(fields, keyRow));
    ddb.on(TransactWriteCommand).resolves({});
  };
  /** The same, with the spend shards' rows. */
  const withShards = (shardRows: unknown[], fields: Record<string, unknown> = {}) =>
    serveRows(organizationRows(fields), shardRows);
  const transactions = () => ddb.commandCalls(TransactWriteCommand).map((c) => c.args[0].input.TransactItems!);
  const storedMessageId = () => (transactions()[0][2].Put!.Item as { id: string }).id;
  const cancelled = (...reasons: { Code: string; Item?: Record<string, unknown> }[]) =>
    new TransactionCanceledException({
      message: 'Transaction cancelled',
      $metadata: {},
      CancellationReasons: reasons.map((r) => ({ Code: r.Code, ...(r.Item && { Item: marshall(r.Item) }) })),
    });
  const refused = (providerCode: number, fields: Partial<CarrierError['details']> = {}) =>
    new CarrierError(`Twilio refused the message: HTTP 400, error ${providerCode}`, {
      kind: 'refused',
      httpStatus: 400,
      providerCode,
      ...fields,
    });

  it('checks consent, charges, stores message and thread in one transaction, sends, stores the sid and answers 201', async () => {
    // Prepare
    withOrganization();
    carrierSend.mockResolvedValue({ messageSid: SID });
    // Act
    const result = await send(request);
    // Assess
    expect(result.statusCode).toBe(201);
    expect(result.headers?.['Idempotent-Replayed']).toBeUndefined();
    const { message } = bodyOf(result);
    expect(message).toMatchObject({
      tenantId,
      direction: 'outbound',
      toNumber: '+14155550101',
      status: 'queued',
      messageSid: SID,
      agentId: null,
      isRead: true,
    });
    const [store] = transactions();
    expect(store.map((item) => Object.keys(item)[0])).toEqual(['ConditionCheck', 'Update', 'Put', 'Update']);
    expect(store[0].ConditionCheck).toMatchObject({
      Key: { pk: `${pk}#CONSENT#+14155550101`, sk: 'CONSENT' },
      ConditionExpression: 'attribute_not_exists(#status) OR #status <> :optedOut',
    });
    // The charge lands on one of the organization's spend shards, never on its row.
    const charged = store[1].Update!;
    expect(charged.Key!.pk).toMatch(new RegExp(`^${pk}#SPEND#([0-9]|[12][0-9]|3[01])$`));
    expect(charged).toMatchObject({
      UpdateExpression: 'ADD #spendCents :add_spendCents, #headroomCents :add_headroomCents',
      ExpressionAttributeValues: expect.objectContaining({ ':add_spendCents': 1, ':cost': 1, ':version': 0 }),
    });
    expect(store[2].Put!.Item).toMatchObject({
      ...messageKey(message.id),
      gsi1pk: `${pk}#CONVERSATION#+14155550101`,
      gsi2pk: expect.stringMatching(/^UNSETTLED#/),
      segments: 1,
      costCents: 1,
      spendShard: Number(charged.Key!.pk.split('#').pop()),
    });
    expect(store[3].Update).toMatchObject({ Key: { pk: `${pk}#THREAD#+14155550101`, sk: 'THREAD' } });
    // The carrier's answer settles the text: its sid is recorded and it leaves the unsettled worklist.
    expect(ddb).toHaveReceivedCommandWith(PutCommand, {
      Item: expect.objectContaining({ pk: `${pk}#MSGSID#${SID}`, sk: 'MSGSID', messageId: message.id }),
    });
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, {
      Key: messageKey(message.id),
      UpdateExpression: 'SET #messageSid = :set_messageSid REMOVE #gsi2pk, #gsi2sk ADD #sequence :add_sequence',
    });
    // Nothing of the send touches the organization's row but its strongly consistent read, one batch with the thread.
    expect(ddb).toHaveReceivedCommandTimes(BatchGetCommand, 1);
    expect(ddb.commandCalls(BatchGetCommand)[0].args[0].input.RequestItems![process.env.TABLE_NAME!]).toEqual({
      Keys: [tenantRow, { pk: `${pk}#THREAD#+14155550101`, sk: 'THREAD' }],
      ConsistentRead: true,
    });
    // No GetItem at all: not the thread's (in the batch), not the stored row's again to record the sid.
    expect(ddb).not.toHaveReceivedCommand(GetCommand);
    expect(JSON.stringify(transactions())).not.toContain('"sk":"TENANT"');
    expect(carrierSend).toHaveBeenCalledTimes(1);
    expect(carrierSend).toHaveBeenCalledWith({
      tenantId,
      messageId: message.id,
      from: '+14155550000',
      to: '+14155550101',
      body: 'Hello',
    });
  });

  it('counts the text and its billed segments as metrics once the carrier may have it, not when it refused', async () => {
    // Prepare
    withOrganization();
    carrierSend.mockResolvedValueOnce({ messageSid: SID }).mockRejectedValueOnce(refused(21211));
    const addMetric = jest.spyOn(metrics, 'addMetric');
    // Act
    await send({ to: '+14155550101', body: 'x'.repeat(161) });
    const sentCalls = addMetric.mock.calls.length;
    await send(request);
    // Assess
    expect(addMetric.mock.calls.slice(0, sentCalls)).toEqual([
      ['TextsSent', 'Count', 1],
      ['TextSegmentsBilled', 'Count', 2],
    ]);
    expect(addMetric.mock.calls.slice(sentCalls).map(([name]) => name)).not.toContain('TextsSent');
    addMetric.mockRestore();
  });

  it('refuses unknown fields with 400 naming them, before any read', async () => {
    // Act
    const result = await send({ ...request, from: '+14155550000' });
    // Assess
    expect([result.statusCode, bodyOf(result).error]).toEqual([400, 'body.from: unknown field']);
    expect(dataCalls()).toHaveLength(0);
  });

  it.each([
    ['near its deadline', SEND_TIME_NEEDED_MS - 1, 503],
    ['with just the time a send needs', SEND_TIME_NEEDED_MS, 201],
  ])(
    'answers a send whose function is %s: 503 with Retry-After before any charge, or as usual',
    async (_, left, status) => {
      // Prepare: the Lambda context has `left` ms of the function's time
      withOrganization();
      carrierSend.mockResolvedValue({ messageSid: SID });
      const context = { ...lambdaContext, getRemainingTimeInMillis: () => left } as typeof lambdaContext;
      // Act
      const result = await sendMessage(
        apiEvent({ method: 'POST', body: JSON.stringify(request), headers: jsonHeaders }),
        context,
      );
      // Assess
      expect(result.statusCode).toBe(status);
      if (status === 503) {
        expect(bodyOf(result).code).toBe('temporarily_unavailable');
        expect(result.headers?.['Retry-After']).toBe('1');
        expect(ddb).not.toHaveReceivedCommand(TransactWriteCommand);
        expect(carrierSend).not.toHaveBeenCalled();
      } else expect(carrierSend).toHaveBeenCalledTimes(1);
    },
  );

  it('answers 409 no_sms_number without a transaction', async () => {
    // Prepare
    withOrganization({ smsNumber: null });
    // Act
    const result = await send(request);
    // Assess
    expect([result.statusCode, bodyOf(result).code]).toEqual([409, 'no_sms_number']);
    expect(ddb).not.toHaveReceivedCommand(TransactWriteCommand);
  });

  it("answers 409 recipient_opted_out when the transaction's consent check fails: nothing charged or sent", async () => {
    // Prepare
    withOrganization();
    ddb
      .on(TransactWriteCommand)
      .rejects(cancelled({ Code: 'ConditionalCheckFailed' }, { Code: 'None' }, { Code: 'None' }, { Code: 'None' }));
    // Act
    const result = await send(request);
    // Assess
    expect([result.statusCode, bodyOf(result).code]).toEqual([409, 'recipient_opted_out']);
    expect(bodyOf(result)).not.toHaveProperty('messageId'); // no message was stored
    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 1);
    expect(carrierSend).not.toHaveBeenCalled();
  });

  /** The charge's shard refused it, with the row DynamoDB returned. */
  const chargeRefused = (shardRow: Record<string, unknown>) =>
    cancelled(
      { Code: 'None' },
      { Code: 'ConditionalCheckFailed', Item: { owing: false, limitVersion: 0, ...shardRow } },
      { Code: 'None' },
      { Code: 'None' },
    );
  /** The settlement lease on the organization row: taken and given back (UpdateItem of the row). */
  const leaseCalls = () =>
    ddb
      .commandCalls(UpdateCommand)
      .filter((c) => c.args[0].input.Key!.sk === 'TENANT')
      .map((c) => (c.args[0].input.UpdateExpression!.startsWith('REMOVE') ? 'release' : 'claim'));

  it('answers 402 billing_blocked from the organization row it reads: no transaction, no shard read', async () => {
    // Prepare
    withOrganization({ billingStatus: 'past_due' });
    // Act
    const result = await send(request);
    // Assess
    expect([result.statusCode, bodyOf(result).code]).toEqual([402, 'billing_blocked']);
    expect(ddb).not.toHaveReceivedCommand(TransactWriteCommand);
    expect(shardReads()).toHaveLength(0);
    expect(carrierSend).not.toHaveBeenCalled();
  });

  it('answers 402 spending_limit_reached only when the whole organization has less headroom than the text costs', async () => {
    // Prepare: this shard has none, and all 32 together have none either
    withOrganization({ spendingLimitCents: 10 });
    ddb.on(TransactWriteCommand).rejects(chargeRefused({ shard: 4, headroomCents: 0 }));
    withShards(
      shards(() => 0, { spendCents: 0 }),
      { spendingLimitCents: 10 },
    );
    // Act
    const result = await send(request);
    // Assess
    expect([result.statusCode, bodyOf(result).code]).toEqual([402, 'spending_limit_reached']);
    expect(shardReads()[0].args[0].input.RequestItems![process.env.TABLE_NAME!]).toMatchObject({
      ConsistentRead: true,
    });
    expect(ddb).not.toHaveReceivedCommand(PutCommand); // no settlement: nothing to settle
    expect(carrierSend).not.toHaveBeenCalled();
  });

  it('charges a shard that can pay when the one it picked has too little', async () => {
    // Prepare
    withOrganization();
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(chargeRefused({ shard: 4, headroomCents: 0 }))
      .resolves({});
    withShards(shards((shard) => (shard === 9 ? 5 : 0)));
    carrierSend.mockResolvedValue({ messageSid: SID });
    // Act
    const result = await send(request);
    // Assess
    expect(result.statusCode).toBe(201);
    expect(transactions()[1][1].Update!.Key).toEqual(shardKey(9));
    expect(transactions()[1][2].Put!.Item).toMatchObject({
      spendShard: 9,
      id: (transactions()[0][2].Put!.Item as { id: string }).id,
    });
    expect(carrierSend).toHaveBeenCalledTimes(1);
  });

  it('settles the shards under a lease when they are behind a limit the operator changed, then charges under it', async () => {
    // Prepare: the organization row is at limit version 1 (a new limit of 500); the shards still hold version 0, 1 cent
    // spent each
    withOrganization({ limitVersion: 1, spendingLimitCents: 500 });
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(chargeRefused({ shard: 4, headroomCents: 3 }))
      .resolves({});
    withShards(
      shards(() => 3, { spendCents: 1 }),
      { limitVersion: 1, spendingLimitCents: 500 },
    );
    carrierSend.mockResolvedValue({ messageSid: SID });
    // Act
    const result = await send(request);
    // Assess: 500 - 32 spent, split again over the 32 shards at version 1, each guarded on the shard as read
    expect(result.statusCode).toBe(201);
    const [first, settle, second] = transactions();
    expect(first[1].Update!.ExpressionAttributeValues).toMatchObject({ ':version': 1 });
    // each shard guarded on the shard as read and fenced on the lease's claim (no later holder wrote it)
    expect(settle).toHaveLength(32);
    expect(settle[0].Update).toMatchObject({
      ConditionExpression:
        '#spendCents = :spend AND #headroomCents = :wasHeadroom AND #limitVersion = :wasVersion AND #owing = :wasOwing' +
        ' AND (attribute_not_exists(#fence) OR #fence <= :fence)',
      ExpressionAttributeValues: expect.objectContaining({
        ':set_limitVersion': 1,
        ':set_owing': false,
        ':spend': 1,
        ':wasHeadroom': 3,
        ':wasVersion': 0,
      }),
    });
    expect(
      settle.reduce((sum, item) => sum + (item.Update!.ExpressionAttributeValues![':set_headroomCents'] as number), 0),
    ).toBe(500 - 32);
    expect(second[1].Update!.ExpressionAttributeValues).toMatchObject({ ':version': 1 });
    expect(leaseCalls()).toEqual(['claim', 'release']);
    expect(
      ddb.commandCalls(UpdateCommand).find((c) => c.args[0].input.Key!.sk === 'TENANT')!.args[0].input,
    ).toMatchObject({
      ConditionExpression:
        'attribute_exists(pk) AND (attribute_not_exists(#spendSettlingUntil) OR #spendSettlingUntil < :now)',
    });
    expect(carrierSend).toHaveBeenCalledTimes(1);
  });

  it('makes the spend shards on the first send of an organization that has none, with its limit split over them', async () => {
    // Prepare: no shard exists (the charge's shard answers no row)
    withOrganization();
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled({ Code: 'None' }, { Code: 'ConditionalCheckFailed' }, { Code: 'None' }, { Code: 'None' }))
      .resolves({});
    withShards([]);
    carrierSend.mockResolvedValue({ messageSid: SID });
    // Act
    const result = await send(request);
    // Assess
    expect(result.statusCode).toBe(201);
    const create = transactions()[1];
    expect(create).toHaveLength(32);
    const shards = create;
    expect(shards.every((item) => item.Put?.ConditionExpression === 'attribute_not_exists(pk)')).toBe(true);
    expect(shards.reduce((sum, item) => sum + (item.Put!.Item!.headroomCents as number), 0)).toBe(100);
  });

  it('waits while another writer settles the shards (the lease on the row it read) before it charges, and settles nothing itself', async () => {
    // Prepare: the first two reads of the organization row (the send's batch, then its wait's) show a settlement under
    // way
    withOrganization();
    let reads = 0;
    const rows = organizationRows();
    serveRows((key) =>
      key.sk === 'TENANT'
        ? organization(
            (reads += 1) <= 2 ? { spendSettlingUntil: Date.now() + 1_000, spendSettlingHolder: 'other' } : {},
          )
        : rows(key),
    );
    carrierSend.mockResolvedValue({ messageSid: SID });
    // Act
    const result = await send(request);
    // Assess: charged once, after the row no longer showed the lease; no lease of its own, no shard read
    expect(result.statusCode).toBe(201);
    expect(reads).toBe(3);
    expect(transactions()).toHaveLength(1);
    expect(leaseCalls()).toEqual([]);
    expect(shardReads()).toHaveLength(0);
  });

  it.each([
    ['a timeout', new CarrierError('Twilio did not answer in time', { kind: 'unknown' })],
    ['a 5xx', new CarrierError('Twilio did not take the message: HTTP 503', { kind: 'unknown', httpStatus: 503 })],
    ['an error that is no CarrierError', new TypeError('a bug in the carrier client')],
  ])(
    'answers 201 with the message still queued and charged when the carrier outcome is unknown: %s',
    async (_name, error) => {
      // Prepare
      withOrganization();
      carrierSend.mockRejectedValue(error);
      // Act
      const result = await send(request);
      // Assess
      expect(result.statusCode).toBe(201);
      expect(bodyOf(result).message).toMatchObject({ status: 'queued', messageSid: '' });
      expect(transactions()).toHaveLength(1); // the send's own: no refund, no failure, still unsettled
      expect(transactions()[0][2].Put!.Item).toHaveProperty('gsi2pk');
    },
  );

  it('answers 201 with the sid when the carrier took the text but the sid could not be recorded: never invites a second send', async () => {
    // Prepare
    withOrganization();
    ddb
      .on(PutCommand)
      .rejects(Object.assign(new Error('Throughput exceeds the current capacity'), { name: 'ThrottlingException' }));
    carrierSend.mockResolvedValue({ messageSid: SID });
    // Act
    const result = await send(request);
    // Assess
    expect([result.statusCode, bodyOf(result).message.messageSid]).toEqual([201, SID]);
    expect(transactions()).toHaveLength(1); // the send; the sid write failed; no refund, no failure
  });

  it('answers 422 carrier_rejected naming the message when the carrier refuses it, failing and refunding it in one transaction', async () => {
    // Prepare
    withOrganization();
    carrierSend.mockRejectedValue(refused(21211));
    // Act
    const result = await send(request);
    // Assess
    expect([result.statusCode, bodyOf(result)]).toEqual([
      422,
      expect.objectContaining({ code: 'carrier_rejected', messageId: storedMessageId(), carrierCode: 21211 }),
    ]);
    const failed = transactions()[1];
    expect(failed[0].Update).toMatchObject({
      Key: messageKey(storedMessageId()),
      ExpressionAttributeValues: expect.objectContaining({
        ':set_status': 'failed',
        ':set_failureReason': 'carrier_rejected',
        ':set_carrierCode': 21211,
      }),
    });
    expect(failed[1].Update).toMatchObject({
      Key: shardKey(3),
      ExpressionAttributeValues: { ':add_headroomCents': 1, ':add_spendCents': -1 },
    });
    expect(JSON.stringify(transactions())).not.toContain('CONSENT#+14155550101","sk":"CONSENT"},"UpdateExpression');
  });

  it('answers 409 recipient_opted_out naming the message when the carrier says the recipient opted out, and records it in the ledger', async () => {
    // Prepare
    withOrganization();
    carrierSend.mockRejectedValue(refused(21610, { recipientOptedOut: true }));
    // Act
    const result = await send(request);
    // Assess
    expect([result.statusCode, bodyOf(result)]).toEqual([
      409,
      expect.objectContaining({ code: 'recipient_opted_out', messageId: storedMessageId() }),
    ]);
    // The ledger learns the opt-out (with the copy of whoever holds the number), so the next send is refused before any
    // charge.
    const ledger = transactions().find((items) => items[0].Update?.Key?.pk === `${pk}#CONSENT#+14155550101`)!;
    expect(ledger[0].Update).toMatchObject({
      ConditionExpression: 'attribute_not_exists(#at) OR #at <= :at',
      ExpressionAttributeValues: expect.objectContaining({
        ':set_consentStatus': 'opted_out',
        ':set_consentSource': 'carrier_opt_out',
        ':set_consentNote': 'Carrier refused a send (error 21610)',
      }),
    });
    const failed = transactions()[transactions().length - 1];
    expect(failed[0].Update!.ExpressionAttributeValues).toMatchObject({
      ':set_status': 'failed',
      ':set_failureReason': 'recipient_opted_out',
      ':set_carrierCode': 21610,
    });
    expect(failed[1].Update).toMatchObject({
      Key: shardKey(3),
      ExpressionAttributeValues: { ':add_headroomCents': 1, ':add_spendCents': -1 },
    });
  });

  it('answers 502 carrier_unavailable only when the carrier certainly never took the text, failing and refunding it', async () => {
    // Prepare
    withOrganization();
    carrierSend.mockRejectedValue(new CarrierError('Twilio could not be reached (ECONNREFUSED)', { kind: 'not_sent' }));
    // Act
    const result = await send(request);
    // Assess
    expect([result.statusCode, bodyOf(result).code]).toEqual([502, 'carrier_unavailable']);
    const failed = transactions()[1];
    expect(failed[0].Update!.ExpressionAttributeValues).toMatchObject({
      ':set_status': 'failed',
      ':set_failureReason': 'carrier_unavailable',
    });
    expect(failed[1].Update).toMatchObject({
      Key: shardKey(3),
      ExpressionAttributeValues: { ':add_headroomCents': 1, ':add_spendCents': -1 },
    });
  });

  it('answers 201 queued, not 502, when a text the carrier did not take could not be failed: without a refund, a retry is not safe', async () => {
    // Prepare
    withOrganization();
    ddb.on(TransactWriteCommand).resolvesOnce({}).rejects(new Error('ProvisionedThroughputExceeded'));
    carrierSend.mockRejectedValue(new CarrierError('Twilio could not be reached (ECONNREFUSED)', { kind: 'not_sent' }));
    // Act
    const result = await send(request);
    // Assess: still charged and unsettled, so the sweep fails and refunds it later
    expect([result.statusCode, bodyOf(result).message.status]).toEqual([201, 'queued']);
  });

  it('answers 400 naming Idempotency-Key when the header is malformed', async () => {
    // Act
    const result = await send(request, { 'Idempotency-Key': 'has spaces in it' });
    // Assess
    expect([result.statusCode, bodyOf(result).error]).toEqual([400, expect.stringMatching(/^Idempotency-Key: /)]);
    expect(dataCalls()).toHaveLength(0);
  });

  describe('with an Idempotency-Key', () => {
    const keyRow = (fields: Record<string, unknown> = {}) => ({
      messageId: '0199a000-0000-7000-8000-0000000000e1',
      requestHash: requestHashOf(request),
      ttl: Math.floor(Date.now() / 1000) + 3600,
      ...fields,
    });
    const withEarlierSend = (key: Record<string, unknown>, message: Record<string, unknown>) =>
      serveRows((Key) =>
        Key.sk.startsWith('SENDKEY#')
          ? key
          : Key.sk === 'MESSAGE'
            ? { ...Key, id: messageIdOf(Key), ...storedRow(message) }
            : undefined,
      );

    it('claims the key, hashed, in the same transaction as the charge and the message', async () => {
      // Prepare
      withOrganization();
      carrierSend.mockResolvedValue({ messageSid: SID });
      // Act
      const result = await send(request, { 'Idempotency-Key': 'key-1' });
      // Assess
      expect(result.statusCode).toBe(201);
      const store = transactions()[0];
      expect(store.map((item) => Object.keys(item)[0])).toEqual(['ConditionCheck', 'Update', 'Put', 'Put', 'Update']);
      const claim = store.find((item) => String(item.Put?.Item?.sk).startsWith('SENDKEY#'))!.Put!;
      expect(claim).toMatchObject({
        Item: { pk, type: 'sendKey', messageId: bodyOf(result).message.id, requestHash: requestHashOf(request) },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      expect(JSON.stringify(claim.Item)).not.toContain('key-1'); // only its hash is stored
      // The key's row was read with the organization and the thread, in one batch.
      expect(ddb).toHaveReceivedCommandTimes(BatchGetCommand, 1);
      expect(
        ddb.commandCalls(BatchGetCommand)[0].args[0].input.RequestItems![process.env.TABLE_NAME!].Keys,
      ).toContainEqual({ pk, sk: claim.Item!.sk });
    });

    it('replays the message as it now stands, without a transaction or the carrier', async () => {
      // Prepare
      withEarlierSend(keyRow(), { status: 'delivered', messageSid: SID });
      // Act
      const result = await send(request, { 'Idempotency-Key': 'key-1' });
      // Assess
      expect([result.statusCode, bodyOf(result).message]).toEqual([
        201,
        expect.objectContaining({ id: keyRow().messageId, status: 'delivered' }),
      ]);
      expect(result.headers).toMatchObject({ 'Idempotent-Replayed': 'true' });
      expect(ddb).not.toHaveReceivedCommand(TransactWriteCommand);
      expect(carrierSend).not.toHaveBeenCalled();
    });

    it.each([
      [
        'carrier_rejected',
        { failureReason: 'carrier_rejected', carrierCode: 21211 },
        422,
        { messageId: '0199a000-0000-7000-8000-0000000000e1', carrierCode: 21211 },
      ],
      [
        'recipient_opted_out',
        { failureReason: 'recipient_opted_out', carrierCode: 21610 },
        409,
        { messageId: '0199a000-0000-7000-8000-0000000000e1' },
      ],
      ['carrier_unavailable', { failureReason: 'carrier_unavailable' }, 502, {}],
    ])(
      'replays a %s outcome as the same error, marked replayed, without the carrier',
      async (code, failure, status, details) => {
        // Prepare
        withEarlierSend(keyRow(), { status: 'failed', ...failure });
        // Act
        const result = await send(request, { 'Idempotency-Key': 'key-1' });
        // Assess
        expect([result.statusCode, bodyOf(result), result.headers?.['Idempotent-Replayed']]).toEqual([
          status,
          expect.objectContaining({ code, ...details }),
          'true',
        ]);
        expect(ddb).not.toHaveReceivedCommand(TransactWriteCommand);
        expect(carrierSend).not.toHaveBeenCalled();
      },
    );

    it('answers 422 idempotency_mismatch for another body under the same key', async () => {
      // Prepare
      withEarlierSend(keyRow(), { status: 'delivered', messageSid: SID });
      // Act
      const result = await send({ ...request, body: 'Other' }, { 'Idempotency-Key': 'key-1' });
      // Assess
      expect([result.statusCode, bodyOf(result).code]).toEqual([422, 'idempotency_mismatch']);
      expect(carrierSend).not.toHaveBeenCalled();
    });

    it('sends anew under a key whose row has expired but not yet been removed by TTL', async () => {
      // Prepare
      withOrganization({}, keyRow({ ttl: Math.floor(Date.now() / 1000) - 10 }));
      carrierSend.mockResolvedValue({ messageSid: SID });
      // Act
      const result = await send(request, { 'Idempotency-Key': 'key-1' });
      // Assess
      expect([result.statusCode, result.headers?.['Idempotent-Replayed']]).toEqual([201, undefined]);
      expect(bodyOf(result).message.id).not.toBe(keyRow().messageId);
      expect(carrierSend).toHaveBeenCalledTimes(1);
    });

    it("answers a retry that lost the race for the key with the winner's message", async () => {
      // Prepare
      withOrganization();
      ddb
        .on(TransactWriteCommand)
        .rejects(
          cancelled(
            { Code: 'None' },
            { Code: 'None' },
            { Code: 'ConditionalCheckFailed', Item: keyRow() },
            { Code: 'None' },
            { Code: 'None' },
          ),
        );
      // Act
      const result = await send(request, { 'Idempotency-Key': 'key-1' });
      // Assess
      expect([result.statusCode, bodyOf(result).message.id, result.headers?.['Idempotent-Replayed']]).toEqual([
        201,
        keyRow().messageId,
        'true',
      ]);
      expect(carrierSend).not.toHaveBeenCalled();
    });
  });
});
