import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { upsertCallByProviderSid, type CallLegChange } from '../../lambdas/contexts/calls/calls';
import { batchGetAnswerOf } from '../support/batch-get-answer';

const ddb = mockClient(DynamoDBDocumentClient);
beforeEach(() => ddb.reset());

const tenantId = '0199a000-0000-7000-8000-000000000001';
const existingCallId = '0199a000-0000-7000-8000-0000000000c1';
const SID = 'CA00000000000000000000000000000001';
const mapKey = { pk: `T#${tenantId}`, sk: `CALLSID#${SID}` };

/** An internal call: no external number, so no contact transaction to mock. */
const change = (over: Partial<CallLegChange> = {}): CallLegChange => ({
  at: new Date('2026-11-21T10:00:00Z'),
  classification: {
    rank: 2,
    direction: 'outbound',
    isInternal: true,
    fromNumber: 'client:a',
    toNumber: 'client:b',
    outcomeLeg: 'child',
  },
  progress: 'ringing',
  externalNumbers: [],
  ...over,
});

const cancelled = (...reasons: { Code: string; Item?: Record<string, unknown> }[]) =>
  new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: reasons.map((r) => ({ Code: r.Code, ...(r.Item && { Item: marshall(r.Item) }) })),
  });

describe('upserting a call by provider sid', () => {
  it('writes the sid row, the owner row and the call in one conditional transaction', async () => {
    // Prepare
    ddb.on(BatchGetCommand).resolves({ Responses: {} });
    ddb.on(TransactWriteCommand).resolves({});
    // Act
    const result = await upsertCallByProviderSid(tenantId, SID, change());
    // Assess
    const [sidRow, owner, call] = ddb.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems!;
    expect(sidRow.Put).toMatchObject({
      Item: { ...mapKey, callId: result.callId },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    expect(owner.Put).toMatchObject({ Item: { pk: `CALLSID_OWNER#${SID}`, sk: 'OWNER', tenantId } });
    expect(call.Put).toMatchObject({
      Item: { id: result.callId, type: 'call', status: 'ringing', statusRank: 1, classRank: 2 },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    expect(call.Put!.Item).not.toHaveProperty('answeredAt');
    expect(result.created).toBe(true);
    expect(ddb).not.toHaveReceivedCommand(UpdateCommand);
    // With no external number, the sid row is still read by the one batched read every callback makes.
    expect(ddb).toHaveReceivedCommandTimes(BatchGetCommand, 1);
    expect(Object.values(ddb.commandCalls(BatchGetCommand)[0].args[0].input.RequestItems!)[0]).toEqual({
      Keys: [mapKey],
      ConsistentRead: true,
    });
    expect(ddb).not.toHaveReceivedCommand(GetCommand);
  });

  it('joins the call another first callback created, as its sid row reports', async () => {
    // Prepare: the sid row is not there yet; the call row the other callback made is (read before writing to it)
    ddb.on(BatchGetCommand).resolves({ Responses: {} });
    ddb
      .on(GetCommand, { Key: { pk: `T#${tenantId}`, sk: `CALL#${existingCallId}` } })
      .resolves({ Item: { pk: `T#${tenantId}`, sk: `CALL#${existingCallId}`, classRank: 0, statusRank: 0 } });
    ddb
      .on(TransactWriteCommand)
      .rejects(
        cancelled(
          { Code: 'ConditionalCheckFailed', Item: { callId: existingCallId } },
          { Code: 'None' },
          { Code: 'None' },
        ),
      );
    ddb.on(UpdateCommand).resolves({});
    // Act
    const result = await upsertCallByProviderSid(tenantId, SID, change());
    // Assess
    expect(result).toEqual({ callId: existingCallId, created: false });
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, {
      Key: { pk: `T#${tenantId}`, sk: `CALL#${existingCallId}` },
      ConditionExpression: '#statusRank < :rank',
      ExpressionAttributeValues: { ':set_status': 'ringing', ':set_statusRank': 1, ':rank': 1, ':add_sequence': 1 },
    });
  });

  it("lets contention that outlasted the client's retries surface, so the callback answers 503 and Twilio retries it", async () => {
    // Prepare
    ddb.on(BatchGetCommand).resolves({ Responses: {} });
    ddb
      .on(TransactWriteCommand)
      .rejects(cancelled({ Code: 'TransactionConflict' }, { Code: 'None' }, { Code: 'None' }));
    // Act
    const upsert = upsertCallByProviderSid(tenantId, SID, change());
    // Assess
    await expect(upsert).rejects.toMatchObject({ name: 'TransactionCanceledException' });
    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 1);
    expect(ddb).not.toHaveReceivedCommand(UpdateCommand);
  });

  it("creates the caller's contact from its claim, reading the claim first", async () => {
    // Prepare
    ddb.on(GetCommand).resolves({});
    ddb.on(BatchGetCommand).resolves({ Responses: {} });
    ddb.on(TransactWriteCommand).resolves({});
    const inbound = change({
      classification: {
        rank: 3,
        direction: 'inbound',
        isInternal: false,
        fromNumber: '+14155550199',
        toNumber: '+14155550000',
        outcomeLeg: 'parent',
      },
      externalNumbers: ['+14155550199'],
    });
    // Act
    const result = await upsertCallByProviderSid(tenantId, SID, inbound);
    // Assess
    const [claim, call] = ddb.commandCalls(TransactWriteCommand).map((c) => c.args[0].input.TransactItems!);
    // The claim and the call's sid row in one strongly consistent read (bench/README section 11); the only GetItem
    // left is the new contact's copy of the number's consent ledger row.
    expect(ddb).toHaveReceivedCommandTimes(BatchGetCommand, 1);
    expect(Object.values(ddb.commandCalls(BatchGetCommand)[0].args[0].input.RequestItems!)[0]).toEqual({
      Keys: [mapKey, { pk: `T#${tenantId}#NUMBER#+14155550199`, sk: 'NUMBER' }],
      ConsistentRead: true,
    });
    expect(ddb.commandCalls(GetCommand).map((c) => c.args[0].input.Key!.sk)).toEqual(['CONSENT']);
    expect(claim[0].Put!.Item).toMatchObject({ pk: `T#${tenantId}#NUMBER#+14155550199`, sk: 'NUMBER' });
    expect(call[2].Put!.Item).toMatchObject({ id: result.callId, contactId: claim[1].Put!.Item!.id });
  });

  it('reuses the contact that already holds the number: one read, no transaction for it', async () => {
    // Prepare
    const holder = '0199a000-0000-7000-8000-0000000000d1';
    ddb.on(GetCommand).resolves({});
    ddb
      .on(BatchGetCommand)
      .callsFake(batchGetAnswerOf({ pk: `T#${tenantId}#NUMBER#+14155550199`, sk: 'NUMBER', contactId: holder }));
    ddb.on(TransactWriteCommand).resolves({});
    const inbound = change({
      classification: {
        rank: 3,
        direction: 'inbound',
        isInternal: false,
        fromNumber: '+14155550199',
        toNumber: '+14155550000',
        outcomeLeg: 'parent',
      },
      externalNumbers: ['+14155550199'],
    });
    // Act
    await upsertCallByProviderSid(tenantId, SID, inbound);
    // Assess
    const transactions = ddb.commandCalls(TransactWriteCommand).map((c) => c.args[0].input.TransactItems!);
    expect(transactions).toHaveLength(1);
    expect(transactions[0][2].Put!.Item).toMatchObject({ contactId: holder });
    expect(ddb).toHaveReceivedCommandTimes(BatchGetCommand, 1);
    expect(ddb).not.toHaveReceivedCommand(GetCommand);
  });

  it('refuses a provider call another organization already owns', async () => {
    // Prepare
    ddb.on(BatchGetCommand).resolves({ Responses: {} });
    ddb
      .on(TransactWriteCommand)
      .rejects(cancelled({ Code: 'None' }, { Code: 'ConditionalCheckFailed' }, { Code: 'None' }));
    // Act + Assess
    await expect(upsertCallByProviderSid(tenantId, SID, change())).rejects.toThrow('belongs to another organization');
  });

  it('treats a failed condition as "already known": a repeated end changes nothing and throws nothing', async () => {
    // Prepare: the call row as read still allows the end, and a concurrent callback ends it before this write
    ddb.on(BatchGetCommand).callsFake(batchGetAnswerOf({ ...mapKey, callId: existingCallId }));
    ddb
      .on(GetCommand, { Key: { pk: `T#${tenantId}`, sk: `CALL#${existingCallId}` } })
      .resolves({ Item: { pk: `T#${tenantId}`, sk: `CALL#${existingCallId}`, classRank: 9, statusRank: 1 } });
    ddb
      .on(UpdateCommand)
      .rejects(Object.assign(new Error('The conditional request failed'), { name: 'ConditionalCheckFailedException' }));
    const end = { status: 'busy', durationSec: 0, endedAt: new Date('2026-11-21T10:00:09Z') };
    // Act
    const result = await upsertCallByProviderSid(tenantId, SID, change({ progress: undefined, end }));
    // Assess
    expect(result.created).toBe(false);
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, {
      ConditionExpression: '#statusRank < :terminal',
      ExpressionAttributeValues: {
        ':set_status': 'busy',
        ':set_statusRank': 3,
        ':terminal': 3,
        ':set_endedAt': '2026-11-21T10:00:09.000Z',
        ':set_durationSec': 0,
        ':set_changedAt': expect.any(Number),
        ':add_sequence': 1,
      },
    });
  });
});
