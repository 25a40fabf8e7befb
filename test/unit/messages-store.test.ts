import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { storeMessage, updateMessageStatus } from '../../lambdas/contexts/texting/messages';
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

describe('delivery status', () => {
  const outbound = { ...message, direction: 'outbound', status: 'sent', pk, sk: `MSG#${message.id}` };

  it('changes message and thread together, guarded on the statuses it may follow', async () => {
    ddb.on(GetCommand).resolves({ Item: outbound });
    ddb.on(TransactWriteCommand).resolves({});

    const result = await updateMessageStatus(tenantId, { messageId: message.id }, 'delivered');

    expect(result).toMatchObject({ changed: true, message: { status: 'delivered' } });
    const [messageUpdate, threadUpdate] = ddb.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems!;
    expect(messageUpdate.Update).toMatchObject({
      ConditionExpression: '#status IN (:from0, :from1)',
      ExpressionAttributeValues: { ':status': 'delivered', ':from0': 'queued', ':from1': 'sent' },
    });
    expect(threadUpdate.Update).toMatchObject({ Key: { pk, sk: 'THREAD#+14155550101' }, ConditionExpression: '#lastMessageId = :id' });
  });

  it('changes only the message when it is no longer the thread\'s newest', async () => {
    ddb.on(GetCommand).resolves({ Item: outbound });
    ddb.on(TransactWriteCommand).rejects(cancelled({ Code: 'None' }, { Code: 'ConditionalCheckFailed' }));
    ddb.on(UpdateCommand).resolves({});

    const result = await updateMessageStatus(tenantId, { messageId: message.id }, 'failed');

    expect(result.changed).toBe(true);
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, { Key: { pk, sk: `MSG#${message.id}` }, ExpressionAttributeValues: expect.objectContaining({ ':status': 'failed' }) });
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
