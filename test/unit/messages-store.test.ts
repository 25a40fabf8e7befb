import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { recordMessageSid, updateMessageStatus } from '../../lambdas/contexts/texting/delivery-status';
import { storeMessage, toItem } from '../../lambdas/contexts/texting/messages';
import type { Message } from '../../lambdas/contexts/texting/schemas';
import type { Refusal } from '../../lambdas/shared/table/named-transaction';

const ddb = mockClient(DynamoDBDocumentClient);
beforeEach(() => ddb.reset());

const tenantId = '0199a000-0000-7000-8000-000000000001';
const pk = `T#${tenantId}`;
/** Each message, sid lookup row and thread is a partition of its own inside the organization's key space. */
const messageKey = (id: string) => ({ pk: `${pk}#MSG#${id}`, sk: 'MESSAGE' });
const sidKey = (sid: string) => ({ pk: `${pk}#MSGSID#${sid}`, sk: 'MSGSID' });
const threadKey = (number: string) => ({ pk: `${pk}#THREAD#${number}`, sk: 'THREAD' });
const message: Message = {
  id: '0199a000-0000-7000-8000-0000000000e1',
  tenantId,
  direction: 'inbound',
  fromNumber: '+14155550101',
  toNumber: '+14155550000',
  counterpartNumber: '+14155550101',
  body: 'Hi',
  status: 'received',
  messageSid: 'SM0123456789abcdef0123456789abcdef',
  agentId: null,
  isRead: false,
  createdAt: '2026-10-01T10:00:00.000Z',
};

/** A cancelled transaction with one reason per item, as DynamoDB reports it. */
const cancelled = (...reasons: { Code: string; Item?: Record<string, unknown> }[]) =>
  new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: reasons.map((r) => ({ Code: r.Code, ...(r.Item && { Item: marshall(r.Item) }) })),
  });

const threadItemOf = (call: number) =>
  ddb.commandCalls(TransactWriteCommand)[call].args[0].input.TransactItems![2].Update!;
const threadRow = (lastMessageId: string) => ({
  ...threadKey(message.counterpartNumber),
  type: 'thread',
  counterpartNumber: message.counterpartNumber,
  lastMessageId,
  messageCount: 3,
  unreadCount: 1,
});

describe('storing a message with its thread', () => {
  it('writes message, sid claim and thread (counters by ADD), each in a partition of its own, in one transaction', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({});
    ddb.on(TransactWriteCommand).resolves({});
    // Act
    const result = await storeMessage(message);
    // Assess
    expect(result).toEqual({ stored: true });
    const [put, sid, thread] = ddb.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems!;
    expect(put.Put).toMatchObject({
      Item: { ...messageKey(message.id), type: 'message', isRead: false },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    expect(sid.Put).toMatchObject({
      Item: { ...sidKey(message.messageSid), messageId: message.id },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    expect(thread.Update!.Key).toEqual(threadKey(message.counterpartNumber));
    expect(thread.Update!.UpdateExpression).toContain('ADD #messageCount :one, #unreadCount :unread');
    expect(thread.Update!.ExpressionAttributeValues).toMatchObject({
      ':unread': 1,
      ':gsi2pk': `${pk}#THREADS`,
      ':gsi2sk': `${message.createdAt}#${message.id}`,
    });
  });

  it("only counts a message older than the thread's last one, guarded on the thread it read", async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: threadRow('0199a000-0000-7000-8000-0000000000ff') });
    ddb.on(TransactWriteCommand).resolves({});
    // Act
    await storeMessage(message);
    // Assess
    const thread = threadItemOf(0);
    expect(thread.UpdateExpression).not.toContain('#lastMessage');
    expect(thread.ConditionExpression).toBe('attribute_exists(pk)');
    expect(thread.UpdateExpression).toContain('ADD #messageCount :one, #unreadCount :unread');
  });

  it('reads the thread again, strongly consistent, when a newer message became its last between the read and the write', async () => {
    // Prepare
    ddb
      .on(GetCommand)
      .resolvesOnce({ Item: threadRow('0199a000-0000-7000-8000-000000000001') })
      .resolves({ Item: threadRow('0199a000-0000-7000-8000-0000000000ff') });
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled({ Code: 'None' }, { Code: 'None' }, { Code: 'ConditionalCheckFailed' }))
      .resolves({});
    // Act
    const result = await storeMessage(message);
    // Assess
    expect(result).toEqual({ stored: true });
    expect(threadItemOf(0).UpdateExpression).toContain('#lastMessage');
    expect(threadItemOf(1).UpdateExpression).not.toContain('#lastMessage');
    expect(ddb.commandCalls(GetCommand)[1].args[0].input).toMatchObject({
      Key: threadKey(message.counterpartNumber),
      ConsistentRead: true,
    });
  });

  it('reports a carrier retry of a stored sid as a duplicate', async () => {
    // Prepare
    const firstId = '0199a000-0000-7000-8000-0000000000e0';
    ddb.on(GetCommand).resolves({});
    ddb
      .on(TransactWriteCommand)
      .rejects(
        cancelled({ Code: 'None' }, { Code: 'ConditionalCheckFailed', Item: { messageId: firstId } }, { Code: 'None' }),
      );
    // Act
    const result = await storeMessage(message);
    // Assess
    expect(result).toEqual({ stored: false, duplicateOf: firstId });
  });
});

describe('storing a message with writes that must agree with it', () => {
  const queued: Message = { ...message, direction: 'outbound', status: 'queued', messageSid: '', isRead: true };
  const check = {
    ConditionCheck: {
      TableName: process.env.TABLE_NAME,
      Key: { pk, sk: 'CONSENT#+14155550101' },
      ConditionExpression: 'attribute_not_exists(consentStatus)',
    },
  };
  const charge = {
    Update: {
      TableName: process.env.TABLE_NAME,
      Key: { pk: `${pk}#SPEND#7`, sk: 'SPEND' },
      UpdateExpression: 'ADD spendCents :cost',
      ExpressionAttributeValues: { ':cost': 1 },
    },
  };

  it('puts them first in the same transaction, then the message with its charge and unsettled keys, then the thread', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({});
    ddb.on(TransactWriteCommand).resolves({});
    // Act
    const result = await storeMessage(queued, {
      charge: { segments: 1, costCents: 1, spendShard: 7 },
      alongside: { check, charge },
    });
    // Assess
    expect(result).toEqual({ stored: true });
    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 1);
    const items = ddb.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems!;
    expect(items.slice(0, 2)).toEqual([check, charge]);
    expect(items[2].Put!.Item).toMatchObject({
      ...messageKey(queued.id),
      segments: 1,
      costCents: 1,
      spendShard: 7,
      gsi2pk: expect.stringMatching(/^UNSETTLED#([0-9]|[12][0-9]|3[01])$/),
    });
    expect(items[3].Update!.Key).toEqual(threadKey('+14155550101'));
    expect(items).toHaveLength(4); // no sid yet: no sid claim
  });

  it('writes nothing and hands back the refusal, read by the names given, when one fails its condition', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({});
    ddb
      .on(TransactWriteCommand)
      .rejects(
        cancelled(
          { Code: 'None' },
          { Code: 'ConditionalCheckFailed', Item: { spendCents: 100 } },
          { Code: 'None' },
          { Code: 'None' },
        ),
      );
    // Act
    const result = await storeMessage(queued, { alongside: { check, charge } });
    // Assess: the caller decides (the send reads which check refused); not retried here
    expect(result).toMatchObject({ stored: false });
    const { refused } = result as { refused: Refusal<'check' | 'charge'> };
    expect(refused.failed('charge')).toEqual({ item: { spendCents: 100 } });
    expect(refused.failed('check')).toBeUndefined();
    expect(refused.failedNames).toEqual(['charge']);
    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 1);
  });
});

describe('the unsettled worklist', () => {
  const queued: Message = { ...message, direction: 'outbound', status: 'queued', messageSid: '', isRead: true };

  it('holds an outbound text from its queued row until the carrier answers, sorted by time under a shard', () => {
    // Act
    const item = toItem(queued, { segments: 1, costCents: 1, spendShard: 0 });
    // Assess
    expect(item.gsi2pk).toMatch(/^UNSETTLED#([0-9]|[12][0-9]|3[01])$/);
    expect(item.gsi2sk).toBe(`${queued.createdAt}#${tenantId}#${queued.id}`);
  });

  it.each([
    ['an outbound text that already has its sid', { messageSid: 'SM1' }],
    ['an outbound text past queued', { status: 'sent' as const }],
    ['an inbound text', { direction: 'inbound' as const, status: 'received' as const, messageSid: 'SM1' }],
  ])('leaves out %s', (_name, fields) => {
    // Act
    const item = toItem({ ...queued, ...fields });
    // Assess
    expect(item).not.toHaveProperty('gsi2pk');
    expect(item).not.toHaveProperty('gsi2sk');
  });
});

describe('delivery status', () => {
  const outbound = {
    ...message,
    direction: 'outbound',
    status: 'sent',
    ...messageKey(message.id),
    costCents: 3,
    spendShard: 5,
    gsi2pk: 'UNSETTLED#1',
    gsi2sk: 'x',
  };
  const itemsOf = (call: number) => ddb.commandCalls(TransactWriteCommand)[call].args[0].input.TransactItems!;
  const refundItem = (shard: number) => ({
    Update: {
      TableName: process.env.TABLE_NAME,
      Key: { pk: `${pk}#SPEND#${shard}`, sk: 'SPEND' },
      UpdateExpression: 'ADD #spendCents :add_spendCents, #headroomCents :add_headroomCents',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#spendCents': 'spendCents', '#headroomCents': 'headroomCents' },
      ExpressionAttributeValues: { ':add_headroomCents': 3, ':add_spendCents': -3 },
    },
  });

  it('changes message and thread together, guarded on the statuses it may follow, and takes the text off the unsettled worklist', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: outbound });
    ddb.on(TransactWriteCommand).resolves({});
    // Act
    const result = await updateMessageStatus(tenantId, { messageId: message.id }, 'delivered');
    // Assess
    expect(result).toMatchObject({ changed: true, message: { status: 'delivered' } });
    const [messageUpdate, threadUpdate] = itemsOf(0);
    expect(messageUpdate.Update).toEqual({
      TableName: process.env.TABLE_NAME,
      Key: messageKey(message.id),
      // A known outcome leaves the unsettled worklist; the change's time and the row's sequence number go with it (the
      // event's).
      // A carrier's callback is no API request: the row names none (message.delivered's request is null).
      UpdateExpression:
        'SET #status = :set_status, #changedAt = :set_changedAt REMOVE #gsi2pk, #gsi2sk, #changeRequestId, ' +
        '#changeIdempotencyKey ADD #sequence :add_sequence',
      ConditionExpression: '#status IN (:from0, :from1)',
      ExpressionAttributeNames: {
        '#status': 'status',
        '#changedAt': 'changedAt',
        '#gsi2pk': 'gsi2pk',
        '#gsi2sk': 'gsi2sk',
        '#changeRequestId': 'changeRequestId',
        '#changeIdempotencyKey': 'changeIdempotencyKey',
        '#sequence': 'sequence',
      },
      ExpressionAttributeValues: {
        ':set_status': 'delivered',
        ':set_changedAt': expect.any(Number),
        ':add_sequence': 1,
        ':from0': 'queued',
        ':from1': 'sent',
      },
    });
    expect(threadUpdate.Update).toMatchObject({
      Key: threadKey('+14155550101'),
      ConditionExpression: '#lastMessageId = :id',
    });
  });

  it.each(['sent', 'delivered'] as const)('never refunds a text that is %s', async (status) => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: { ...outbound, status: 'queued' } });
    ddb.on(TransactWriteCommand).resolves({});
    // Act
    await updateMessageStatus(tenantId, { messageId: message.id }, status);
    // Assess: the message and its thread, nothing on the organization row
    const items = itemsOf(0);
    expect(items.map((item) => item.Update!.Key)).toEqual([messageKey(message.id), threadKey('+14155550101')]);
  });

  it('refunds a failed outbound text in the same transaction, with the reason kept on the row', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: outbound });
    ddb.on(TransactWriteCommand).resolves({});
    // Act
    await updateMessageStatus(tenantId, { messageId: message.id }, 'failed', {
      failureReason: 'carrier_failed',
      carrierCode: 30003,
      carrierMessage: 'Unreachable destination handset',
      reportedAt: new Date('2026-11-21T10:00:05.123Z'),
    });
    // Assess: one transaction, so the refund happens exactly when the status changes; the carrier's report goes with it
    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 1);
    const [messageUpdate, refund, thread] = itemsOf(0);
    expect(messageUpdate.Update).toMatchObject({
      UpdateExpression:
        'SET #status = :set_status, #changedAt = :set_changedAt, #failureReason = :set_failureReason, #carrierCode = ' +
        ':set_carrierCode, #carrierMessage = :set_carrierMessage, #carrierReportedAt = :set_carrierReportedAt REMOVE ' +
        '#gsi2pk, #gsi2sk, #changeRequestId, #changeIdempotencyKey ADD #sequence :add_sequence',
      ConditionExpression: '#status IN (:from0, :from1)',
      ExpressionAttributeNames: expect.objectContaining({
        '#carrierMessage': 'carrierMessage',
        '#carrierReportedAt': 'carrierReportedAt',
        '#sequence': 'sequence',
      }),
      ExpressionAttributeValues: expect.objectContaining({
        ':set_status': 'failed',
        ':set_failureReason': 'carrier_failed',
        ':set_carrierCode': 30003,
        ':set_carrierMessage': 'Unreachable destination handset',
        ':set_carrierReportedAt': Date.parse('2026-11-21T10:00:05.123Z'),
        ':from0': 'queued',
        ':from1': 'sent',
      }),
    });
    expect(refund).toEqual(refundItem(5));
    expect(thread.Update!.Key).toEqual(threadKey('+14155550101'));
  });

  it('refunds nothing for a failed text that cost nothing', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: { ...outbound, costCents: 0 } });
    ddb.on(TransactWriteCommand).resolves({});
    // Act
    await updateMessageStatus(tenantId, { messageId: message.id }, 'failed');
    // Assess
    expect(itemsOf(0).map((item) => item.Update!.Key)).toEqual([messageKey(message.id), threadKey('+14155550101')]);
  });

  it('keeps carrier_failed as the reason of a failure given none, and the report time of a final status only', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: { ...outbound, status: 'queued' } });
    ddb.on(TransactWriteCommand).resolves({});
    const reportedAt = new Date('2026-11-21T10:00:05.123Z');
    // Act
    await updateMessageStatus(tenantId, { messageId: message.id }, 'failed', { reportedAt });
    await updateMessageStatus(tenantId, { messageId: message.id }, 'sent', { reportedAt });
    // Assess
    expect(itemsOf(0)[0].Update!.ExpressionAttributeValues).toMatchObject({
      ':set_failureReason': 'carrier_failed',
      ':set_carrierReportedAt': reportedAt.getTime(),
    });
    expect(itemsOf(1)[0].Update!.ExpressionAttributeNames).not.toHaveProperty('#carrierReportedAt');
    expect(itemsOf(1)[0].Update!.ExpressionAttributeNames).not.toHaveProperty('#failureReason');
  });

  it.each([
    ['an inbound text', { direction: 'inbound' }],
    ['a text charged to no shard', { spendShard: undefined }],
  ])('refunds nothing when %s fails', async (_, fields) => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: { ...outbound, ...fields } });
    ddb.on(TransactWriteCommand).resolves({});
    // Act
    await updateMessageStatus(tenantId, { messageId: message.id }, 'failed');
    // Assess
    expect(itemsOf(0).map((item) => item.Update!.Key)).toEqual([messageKey(message.id), threadKey('+14155550101')]);
  });

  it("records a callback's sid on a text whose status does not move, but not for the sweep, an inbound text or a text with one", async () => {
    // Prepare: an outbound text already delivered whose send answer never recorded its sid
    const delivered = { ...outbound, status: 'delivered', messageSid: '' };
    ddb.on(GetCommand).resolves({ Item: delivered });
    ddb.on(PutCommand).resolves({});
    ddb.on(UpdateCommand).resolves({});
    const late = { messageId: message.id, messageSid: 'SMlate' };
    // Act
    const recorded = await updateMessageStatus(tenantId, late, 'delivered');
    const putsOfTheCallback = ddb.commandCalls(PutCommand).length;
    const bySweep = await updateMessageStatus(tenantId, late, 'delivered', { onlyIfUnsettled: true });
    const byId = await updateMessageStatus(tenantId, { messageId: message.id }, 'delivered');
    ddb.on(GetCommand).resolves({ Item: { ...delivered, direction: 'inbound' } });
    const inbound = await updateMessageStatus(tenantId, late, 'delivered');
    ddb.on(GetCommand).resolves({ Item: { ...delivered, messageSid: 'SMfirst' } });
    const hasOne = await updateMessageStatus(tenantId, late, 'delivered');
    // Assess: the first writes the sid (its lookup row, then the row); the others nothing
    expect(recorded).toEqual({ changed: false, message: expect.objectContaining({ messageSid: 'SMlate' }) });
    expect(putsOfTheCallback).toBe(1);
    expect(bySweep.message.messageSid).toBe('SMlate');
    expect(byId.message.messageSid).toBe('');
    expect(inbound.message.messageSid).toBe('');
    expect(hasOne.message.messageSid).toBe('SMfirst');
    expect(ddb).toHaveReceivedCommandTimes(PutCommand, 1);
    expect(ddb).toHaveReceivedCommandTimes(UpdateCommand, 1);
    expect(ddb).not.toHaveReceivedCommand(TransactWriteCommand);
  });

  it('changes nothing, and so refunds nothing, for a text already failed', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: { ...outbound, status: 'failed' } });
    // Act
    const result = await updateMessageStatus(tenantId, { messageId: message.id }, 'failed');
    // Assess
    expect(result).toMatchObject({ changed: false, message: { status: 'failed' } });
    expect(ddb).not.toHaveReceivedCommand(TransactWriteCommand);
  });

  it("changes only the message (and the refund) when it is no longer the thread's newest", async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: outbound });
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled({ Code: 'None' }, { Code: 'None' }, { Code: 'ConditionalCheckFailed' }))
      .resolves({});
    // Act
    const result = await updateMessageStatus(tenantId, { messageId: message.id }, 'failed');
    // Assess
    expect(result.changed).toBe(true);
    expect(itemsOf(1).map((item) => item.Update!.Key)).toEqual([
      messageKey(message.id),
      { pk: `${pk}#SPEND#5`, sk: 'SPEND' },
    ]);
  });

  it("reads again when the status moved between its first write and the one without the thread's lastStatus", async () => {
    // Prepare: the thread moved on; then, without it, the message row had moved too (a callback failed it)
    ddb
      .on(GetCommand)
      .resolvesOnce({ Item: outbound })
      .resolves({ Item: { ...outbound, status: 'failed' } });
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled({ Code: 'None' }, { Code: 'None' }, { Code: 'ConditionalCheckFailed' }))
      .rejectsOnce(cancelled({ Code: 'ConditionalCheckFailed' }, { Code: 'None' }));
    // Act
    const result = await updateMessageStatus(tenantId, { messageId: message.id }, 'failed');
    // Assess
    expect(result).toMatchObject({ changed: false, message: { status: 'failed' } });
    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 2);
    expect(ddb).toHaveReceivedCommandTimes(GetCommand, 2);
  });

  it('throws, rather than read again, a refusal it cannot explain: a refund whose spend shard is gone', async () => {
    // Prepare: with the thread, and then without it, only the refund is refused
    ddb.on(GetCommand).resolves({ Item: outbound });
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled({ Code: 'None' }, { Code: 'ConditionalCheckFailed' }, { Code: 'None' }))
      .rejectsOnce(cancelled({ Code: 'None' }, { Code: 'None' }, { Code: 'ConditionalCheckFailed' }))
      .rejectsOnce(cancelled({ Code: 'None' }, { Code: 'ConditionalCheckFailed' }));
    // Act + Assess: at once for the first; after the write without the thread for the second
    await expect(updateMessageStatus(tenantId, { messageId: message.id }, 'failed')).rejects.toThrow(
      `updateMessageStatus: could not change message ${message.id} (None, ConditionalCheckFailed, None)`,
    );
    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 1);
    await expect(updateMessageStatus(tenantId, { messageId: message.id }, 'failed')).rejects.toThrow(
      `updateMessageStatus: could not change message ${message.id} (None, ConditionalCheckFailed)`,
    );
    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 3);
  });

  it('reads again and decides afresh when the status moved between its read and its write', async () => {
    // Prepare: a callback failed the text meanwhile
    ddb
      .on(GetCommand)
      .resolvesOnce({ Item: outbound })
      .resolves({ Item: { ...outbound, status: 'failed' } });
    ddb
      .on(TransactWriteCommand)
      .rejects(cancelled({ Code: 'ConditionalCheckFailed' }, { Code: 'None' }, { Code: 'None' }));
    // Act
    const result = await updateMessageStatus(tenantId, { messageId: message.id }, 'failed');
    // Assess: the refund went with the other writer's change, not with this one
    expect(result).toMatchObject({ changed: false, message: { status: 'failed' } });
    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 1);
  });

  it('lets the sweep fail only a text still unsettled', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: { ...outbound, status: 'queued', messageSid: '' } });
    ddb.on(TransactWriteCommand).resolves({});
    // Act
    await updateMessageStatus(tenantId, { messageId: message.id }, 'failed', {
      failureReason: 'carrier_outcome_unknown',
      onlyIfUnsettled: true,
    });
    // Assess: guarded on the worklist keys, so a callback that settled it first wins
    expect(itemsOf(0)[0].Update!.ConditionExpression).toBe('#status IN (:from0, :from1) AND attribute_exists(#gsi2pk)');
    expect(itemsOf(0)[1]).toEqual(refundItem(5));
  });

  it('leaves a settled text alone when the sweep comes late', async () => {
    // Prepare: the send recorded the sid, which took the text off the worklist
    const { gsi2pk: _pk, gsi2sk: _sk, ...settled } = { ...outbound, status: 'queued', messageSid: 'SM1' };
    ddb.on(GetCommand).resolves({ Item: settled });
    // Act
    const result = await updateMessageStatus(tenantId, { messageId: message.id }, 'failed', {
      failureReason: 'carrier_outcome_unknown',
      onlyIfUnsettled: true,
    });
    // Assess
    expect(result).toMatchObject({ changed: false, message: { status: 'queued' } });
    expect(ddb).not.toHaveReceivedCommand(TransactWriteCommand);
  });

  it('records the sid a callback names when the send never recorded it, in the same transaction as the status', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: { ...outbound, status: 'queued', messageSid: '' } });
    ddb.on(TransactWriteCommand).resolves({});
    // Act
    const result = await updateMessageStatus(tenantId, { messageId: message.id, messageSid: 'SMfromcallback' }, 'sent');
    // Assess
    expect(result).toMatchObject({ changed: true, message: { status: 'sent', messageSid: 'SMfromcallback' } });
    const [messageUpdate, sidRow] = itemsOf(0);
    expect(messageUpdate.Update!.UpdateExpression).toBe(
      'SET #status = :set_status, #changedAt = :set_changedAt, #messageSid = :set_messageSid REMOVE #gsi2pk, #gsi2sk, ' +
        '#changeRequestId, #changeIdempotencyKey ADD #sequence :add_sequence',
    );
    expect(messageUpdate.Update!.ExpressionAttributeValues).toMatchObject({ ':set_messageSid': 'SMfromcallback' });
    expect(sidRow.Put).toMatchObject({
      Item: { ...sidKey('SMfromcallback'), messageId: message.id },
      ConditionExpression: 'attribute_not_exists(pk) OR messageId = :id',
    });
  });

  it('never goes backwards: a late "sent" after "delivered" writes nothing', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: { ...outbound, status: 'delivered' } });
    // Act
    const result = await updateMessageStatus(tenantId, { messageId: message.id }, 'sent');
    // Assess
    expect(result).toMatchObject({ changed: false, message: { status: 'delivered' } });
    expect(ddb).not.toHaveReceivedCommand(TransactWriteCommand);
  });

  it('finds the message by carrier sid through the lookup row (one read at its key), and 404s an unknown sid', async () => {
    // Prepare
    ddb
      .on(GetCommand)
      .resolves({})
      .on(GetCommand, { Key: sidKey('SMknown') })
      .resolves({ Item: { messageId: message.id } })
      .on(GetCommand, { Key: messageKey(message.id) })
      .resolves({ Item: { ...outbound, status: 'queued' } });
    ddb.on(TransactWriteCommand).resolves({});
    // Act
    const known = updateMessageStatus(tenantId, { messageSid: 'SMknown' }, 'sent');
    const unknown = updateMessageStatus(tenantId, { messageSid: 'SMunknown' }, 'sent');
    // Assess
    await expect(known).resolves.toMatchObject({ changed: true });
    await expect(unknown).rejects.toMatchObject({ status: 404, message: 'Message not found' });
    const unknownReads = ddb
      .commandCalls(GetCommand)
      .map((call) => call.args[0].input.Key)
      .filter((key) => JSON.stringify(key).includes('SMunknown'));
    expect(unknownReads).toEqual([sidKey('SMunknown')]);
    expect(ddb.commandCalls(GetCommand).filter((call) => call.args[0].input.Key!.sk === 'MESSAGE')).toHaveLength(1);
  });
});

describe("recording the carrier's sid", () => {
  const queuedRow = {
    ...message,
    direction: 'outbound',
    status: 'queued',
    messageSid: '',
    ...messageKey(message.id),
    gsi2pk: 'UNSETTLED#1',
    gsi2sk: 'x',
  };

  it('stores the lookup row, then the sid on the row, which settles the text: two plain writes, no transaction', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: queuedRow });
    ddb.on(PutCommand).resolves({});
    ddb.on(UpdateCommand).resolves({});
    // Act
    const recorded = await recordMessageSid(tenantId, message.id, 'SM1');
    // Assess
    expect(recorded).toBe(true);
    expect(ddb).not.toHaveReceivedCommand(TransactWriteCommand);
    expect(ddb).toHaveReceivedNthCommandWith(2, PutCommand, {
      TableName: process.env.TABLE_NAME,
      Item: { ...sidKey('SM1'), type: 'messageSid', messageId: message.id, counterpartNumber: '+14155550101' },
      // Only ever this message's: a second recording of the same sid is harmless.
      ConditionExpression: 'attribute_not_exists(pk) OR messageId = :id',
      ExpressionAttributeValues: { ':id': message.id },
    });
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, {
      TableName: process.env.TABLE_NAME,
      Key: messageKey(message.id),
      // The sid shows in the text's events: its write counts in the row's sequence number.
      UpdateExpression: 'SET #messageSid = :set_messageSid REMOVE #gsi2pk, #gsi2sk ADD #sequence :add_sequence',
      // The same sid again (a callback first, then the send's answer) is harmless.
      ConditionExpression:
        'attribute_exists(pk) AND (attribute_not_exists(#messageSid) OR #messageSid IN (:empty, :sid))',
      ExpressionAttributeNames: {
        '#messageSid': 'messageSid',
        '#gsi2pk': 'gsi2pk',
        '#gsi2sk': 'gsi2sk',
        '#sequence': 'sequence',
      },
      ExpressionAttributeValues: { ':set_messageSid': 'SM1', ':empty': '', ':sid': 'SM1', ':add_sequence': 1 },
    });
  });

  it('writes nothing for a sid already recorded on a settled row', async () => {
    // Prepare
    const { gsi2pk: _pk, gsi2sk: _sk, ...settled } = { ...queuedRow, messageSid: 'SM1' };
    ddb.on(GetCommand).resolves({ Item: settled });
    // Act
    const recorded = await recordMessageSid(tenantId, message.id, 'SM1');
    // Assess
    expect(recorded).toBe(true);
    expect(ddb).not.toHaveReceivedCommand(PutCommand);
    expect(ddb).not.toHaveReceivedCommand(UpdateCommand);
  });

  it('writes a sid already on a row again while the row is still on the unsettled worklist, which settles it', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: { ...queuedRow, messageSid: 'SM1' } });
    ddb.on(PutCommand).resolves({});
    ddb.on(UpdateCommand).resolves({});
    // Act
    const recorded = await recordMessageSid(tenantId, message.id, 'SM1');
    // Assess
    expect(recorded).toBe(true);
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, { Key: messageKey(message.id) });
  });

  it('records a late sid on a text already settled without one (the sweep failed it), so its callbacks find it', async () => {
    // Prepare
    const { gsi2pk: _pk, gsi2sk: _sk, ...swept } = { ...queuedRow, status: 'failed' };
    ddb.on(GetCommand).resolves({ Item: swept });
    ddb.on(PutCommand).resolves({});
    ddb.on(UpdateCommand).resolves({});
    // Act
    const recorded = await recordMessageSid(tenantId, message.id, 'SM1');
    // Assess
    expect(recorded).toBe(true);
    expect(ddb).toHaveReceivedCommandWith(PutCommand, { Item: expect.objectContaining(sidKey('SM1')) });
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, { Key: messageKey(message.id) });
  });

  it('lets a failure other than a lost condition through, rather than read again', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: queuedRow });
    ddb.on(PutCommand).resolves({});
    ddb.on(UpdateCommand).rejects(Object.assign(new Error('Internal server error'), { name: 'InternalServerError' }));
    // Act + Assess
    await expect(recordMessageSid(tenantId, message.id, 'SM1')).rejects.toThrow('Internal server error');
    expect(ddb).toHaveReceivedCommandTimes(GetCommand, 1);
  });

  it('reports false, changing nothing, when the row already holds another sid', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: { ...queuedRow, messageSid: 'SMother' } });
    // Act
    const recorded = await recordMessageSid(tenantId, message.id, 'SM1');
    // Assess
    expect(recorded).toBe(false);
    expect(ddb).not.toHaveReceivedCommand(UpdateCommand);
  });

  it('reads the row again when another sid won between its read and the write, and reports false', async () => {
    // Prepare
    ddb
      .on(GetCommand)
      .resolvesOnce({ Item: queuedRow })
      .resolves({ Item: { ...queuedRow, messageSid: 'SMother' } });
    ddb.on(PutCommand).resolves({});
    ddb
      .on(UpdateCommand)
      .rejects(Object.assign(new Error('The conditional request failed'), { name: 'ConditionalCheckFailedException' }));
    // Act
    const recorded = await recordMessageSid(tenantId, message.id, 'SM1');
    // Assess
    expect(recorded).toBe(false);
    expect(ddb).toHaveReceivedCommandTimes(GetCommand, 2);
    expect(ddb).toHaveReceivedCommandTimes(UpdateCommand, 1);
  });

  it('does not read back the row the send has just stored: the two writes at once (bench/README section 11)', async () => {
    // Prepare
    ddb.on(PutCommand).resolves({});
    ddb.on(UpdateCommand).resolves({});
    // Act
    const recorded = await recordMessageSid(tenantId, message.id, 'SM1', message);
    // Assess
    expect(recorded).toBe(true);
    expect(ddb).not.toHaveReceivedCommand(GetCommand);
    expect(ddb).toHaveReceivedCommandWith(PutCommand, {
      Item: { ...sidKey('SM1'), type: 'messageSid', messageId: message.id, counterpartNumber: '+14155550101' },
    });
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, {
      Key: messageKey(message.id),
      ConditionExpression:
        'attribute_exists(pk) AND (attribute_not_exists(#messageSid) OR #messageSid IN (:empty, :sid))',
    });
  });

  it('reads the row when the write without a read is refused, and decides as a callback would', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: { ...queuedRow, messageSid: 'SMother' } });
    ddb.on(PutCommand).resolves({});
    ddb
      .on(UpdateCommand)
      .rejects(Object.assign(new Error('The conditional request failed'), { name: 'ConditionalCheckFailedException' }));
    // Act
    const recorded = await recordMessageSid(tenantId, message.id, 'SM1', message);
    // Assess
    expect(recorded).toBe(false);
    expect(ddb).toHaveReceivedCommandTimes(GetCommand, 1);
    expect(ddb).toHaveReceivedCommandTimes(UpdateCommand, 1);
  });
});
