import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { updateMessageStatus } from '../../lambdas/contexts/texting/delivery-status';
import { storeMessage, toItem } from '../../lambdas/contexts/texting/messages';
import type { Message } from '../../lambdas/contexts/texting/schemas';

const ddb = mockClient(DynamoDBDocumentClient);
beforeEach(() => ddb.reset());

const tenantId = '0199a000-0000-7000-8000-000000000001';
const pk = `T#${tenantId}`;
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

const threadItemOf = (call: number) => ddb.commandCalls(TransactWriteCommand)[call].args[0].input.TransactItems![2].Update!;

describe('storing a message with its thread', () => {
  it('writes message, sid claim and thread (counters by ADD) in one transaction', async () => {
    ddb.on(TransactWriteCommand).resolves({});

    await expect(storeMessage(message)).resolves.toEqual({ stored: true });

    const [put, sid, thread] = ddb.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems!;
    expect(put.Put).toMatchObject({ Item: { pk, sk: `MSG#${message.id}`, type: 'message', isRead: false }, ConditionExpression: 'attribute_not_exists(pk)' });
    expect(sid.Put).toMatchObject({ Item: { pk, sk: `MSGSID#${message.messageSid}`, messageId: message.id }, ConditionExpression: 'attribute_not_exists(pk)' });
    expect(thread.Update!.UpdateExpression).toContain('ADD #messageCount :one, #unreadCount :unread');
    expect(thread.Update!.ExpressionAttributeValues).toMatchObject({ ':unread': 1, ':gsi2pk': `${pk}#THREADS`, ':gsi2sk': `${message.createdAt}#${message.id}` });
  });

  it('only counts a message older than the thread\'s last one', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled({ Code: 'None' }, { Code: 'None' }, { Code: 'ConditionalCheckFailed' }))
      .resolves({});

    await storeMessage(message);

    const retry = threadItemOf(1);
    expect(retry.UpdateExpression).not.toContain('#lastMessage');
    expect(retry.ConditionExpression).toBeUndefined();
    expect(retry.UpdateExpression).toContain('ADD #messageCount :one, #unreadCount :unread');
  });

  it('retries a transaction that lost a race with another one on the thread', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled({ Code: 'None' }, { Code: 'None' }, { Code: 'TransactionConflict' }))
      .resolves({});

    await expect(storeMessage(message)).resolves.toEqual({ stored: true });

    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 2);
    expect(threadItemOf(1).UpdateExpression).toContain('#lastMessage');
  });

  it('reports a carrier retry of a stored sid as a duplicate', async () => {
    const firstId = '0199a000-0000-7000-8000-0000000000e0';
    ddb.on(TransactWriteCommand).rejects(cancelled({ Code: 'None' }, { Code: 'ConditionalCheckFailed', Item: { messageId: firstId } }, { Code: 'None' }));

    await expect(storeMessage(message)).resolves.toEqual({ stored: false, duplicateOf: firstId });
  });
});

describe('the unsettled worklist', () => {
  const queued: Message = { ...message, direction: 'outbound', status: 'queued', messageSid: '', isRead: true };

  it('holds an outbound text from its queued row until the carrier answers, sorted by time under a shard', () => {
    const item = toItem(queued, { segments: 1, costCents: 1 });

    expect(item.gsi2pk).toMatch(/^UNSETTLED#[0-7]$/);
    expect(item.gsi2sk).toBe(`${queued.createdAt}#${tenantId}#${queued.id}`);
    expect(toItem({ ...queued, messageSid: 'SM1' })).not.toHaveProperty('gsi2pk');
    expect(toItem(message)).not.toHaveProperty('gsi2pk'); // inbound
  });
});

describe('delivery status', () => {
  const outbound = { ...message, direction: 'outbound', status: 'sent', pk, sk: `MSG#${message.id}`, costCents: 3, gsi2pk: 'UNSETTLED#1' };

  it('changes message and thread together, guarded on the statuses it may follow', async () => {
    ddb.on(GetCommand).resolves({ Item: outbound });
    ddb.on(TransactWriteCommand).resolves({});

    const result = await updateMessageStatus(tenantId, { messageId: message.id }, 'delivered');

    expect(result).toMatchObject({ changed: true, message: { status: 'delivered' } });
    const items = ddb.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems!;
    expect(items).toHaveLength(2); // delivered: no refund
    const [messageUpdate, threadUpdate] = items;
    expect(messageUpdate.Update).toMatchObject({
      ConditionExpression: '#status IN (:from0, :from1)',
      ExpressionAttributeValues: { ':status': 'delivered', ':from0': 'queued', ':from1': 'sent' },
    });
    // A known outcome leaves the unsettled worklist.
    expect(messageUpdate.Update!.UpdateExpression).toContain('REMOVE #gsi2pk, #gsi2sk');
    expect(threadUpdate.Update).toMatchObject({ Key: { pk, sk: 'THREAD#+14155550101' }, ConditionExpression: '#lastMessageId = :id' });
  });

  it('refunds a failed outbound text in the same transaction, with the reason kept on the row', async () => {
    ddb.on(GetCommand).resolves({ Item: outbound });
    ddb.on(TransactWriteCommand).resolves({});

    await updateMessageStatus(tenantId, { messageId: message.id }, 'failed', { failureReason: 'carrier_failed', carrierCode: 30003 });

    const [messageUpdate, refund] = ddb.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems!;
    expect(messageUpdate.Update!.ExpressionAttributeValues).toMatchObject({ ':status': 'failed', ':reason': 'carrier_failed', ':code': 30003 });
    expect(refund.Update).toMatchObject({ Key: { pk, sk: 'TENANT' }, UpdateExpression: 'ADD #spend :refund', ExpressionAttributeValues: { ':refund': -3 } });
  });

  it('changes only the message (and the refund) when it is no longer the thread\'s newest', async () => {
    ddb.on(GetCommand).resolves({ Item: outbound });
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled({ Code: 'None' }, { Code: 'None' }, { Code: 'ConditionalCheckFailed' }))
      .resolves({});

    const result = await updateMessageStatus(tenantId, { messageId: message.id }, 'failed');

    expect(result.changed).toBe(true);
    const retry = ddb.commandCalls(TransactWriteCommand)[1].args[0].input.TransactItems!;
    expect(retry.map((item) => item.Update!.Key)).toEqual([{ pk, sk: `MSG#${message.id}` }, { pk, sk: 'TENANT' }]);
  });

  it('records the sid a callback names when the send never recorded it, in the same transaction as the status', async () => {
    ddb.on(GetCommand).resolves({ Item: { ...outbound, status: 'queued', messageSid: '' } });
    ddb.on(TransactWriteCommand).resolves({});

    const result = await updateMessageStatus(tenantId, { messageId: message.id, messageSid: 'SMfromcallback' }, 'sent');

    expect(result).toMatchObject({ changed: true, message: { status: 'sent', messageSid: 'SMfromcallback' } });
    const [messageUpdate, sidRow] = ddb.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems!;
    expect(messageUpdate.Update!.ExpressionAttributeValues).toMatchObject({ ':sid': 'SMfromcallback' });
    expect(sidRow.Put).toMatchObject({ Item: { pk, sk: 'MSGSID#SMfromcallback', messageId: message.id }, ConditionExpression: 'attribute_not_exists(pk) OR messageId = :id' });
  });

  it('never goes backwards: a late "sent" after "delivered" writes nothing', async () => {
    ddb.on(GetCommand).resolves({ Item: { ...outbound, status: 'delivered' } });

    const result = await updateMessageStatus(tenantId, { messageId: message.id }, 'sent');

    expect(result).toMatchObject({ changed: false, message: { status: 'delivered' } });
    expect(ddb).not.toHaveReceivedCommand(TransactWriteCommand);
  });

  it('finds the message by carrier sid through the lookup row, and 404s an unknown sid', async () => {
    ddb
      .on(GetCommand)
      .resolves({})
      .on(GetCommand, { Key: { pk, sk: 'MSGSID#SMknown' } })
      .resolves({ Item: { messageId: message.id } })
      .on(GetCommand, { Key: { pk, sk: `MSG#${message.id}` } })
      .resolves({ Item: { ...outbound, status: 'queued' } });
    ddb.on(TransactWriteCommand).resolves({});

    await expect(updateMessageStatus(tenantId, { messageSid: 'SMknown' }, 'sent')).resolves.toMatchObject({ changed: true });
    await expect(updateMessageStatus(tenantId, { messageSid: 'SMunknown' }, 'sent')).rejects.toMatchObject({ status: 404 });
  });
});
