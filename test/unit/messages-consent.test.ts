import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { consentChangeUpdate, consentsOf, notOptedOutCheck, recordConsentChange } from '../../lambdas/contexts/consent/ledger';
import { consentChangeOf, consentKeywordOf } from '../../lambdas/contexts/texting/consent-keywords';

const ddb = mockClient(DynamoDBDocumentClient);
beforeEach(() => ddb.reset());

const tenantId = '0199a000-0000-7000-8000-000000000001';
const ledgerKey = (number: string) => ({ pk: `T#${tenantId}`, sk: `CONSENT#${number}` });

describe('consent keywords', () => {
  it.each(['STOP', 'stopall', 'Unsubscribe', 'CANCEL', 'end', 'QUIT', 'revoke', 'OptOut', '  stop\n'])('"%s" opts out', (body) => {
    expect(consentKeywordOf(body)).toEqual({ keyword: body.trim().toUpperCase(), status: 'opted_out' });
  });

  it.each(['START', 'unstop', 'Yes', ' yes '])('"%s" opts in', (body) => {
    expect(consentKeywordOf(body)).toEqual({ keyword: body.trim().toUpperCase(), status: 'opted_in' });
  });

  it.each(['stop please', 'STOP!', 'S T O P', '', 'yes please', 'STARTED', 'HELP', 'INFO'])('"%s" is not a keyword (the whole body must be one)', (body) => {
    expect(consentKeywordOf(body)).toBeNull();
  });

  it("lets Twilio's OptOutType decide when it is sent (Advanced Opt-Out's custom keywords)", () => {
    expect(consentKeywordOf('ARRET', 'STOP')).toEqual({ keyword: 'ARRET', status: 'opted_out' });
    expect(consentKeywordOf('COMMENCER', 'start')).toEqual({ keyword: 'COMMENCER', status: 'opted_in' });
    expect(consentKeywordOf('STOP', 'HELP')).toBeNull();
  });

  it('becomes a ledger change at the carrier time, noted with the keyword', () => {
    const at = new Date('2026-10-01T10:00:00.000Z');
    expect(consentChangeOf({ keyword: 'STOP', status: 'opted_out' }, at)).toEqual({ status: 'opted_out', source: 'sms_keyword', at, note: 'Replied STOP' });
  });
});

describe('the consent ledger', () => {
  const change = { status: 'opted_out' as const, source: 'sms_keyword', at: new Date('2026-10-01T10:00:00.000Z'), note: 'Replied STOP' };

  it('records a change on the number, in the organization partition, guarded so the later change wins', async () => {
    // Prepare
    ddb.on(UpdateCommand).resolves({});
    // Act
    const recorded = await recordConsentChange(tenantId, '+14155550100', change);
    // Assess
    expect(recorded).toBe(true);
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, {
      Key: ledgerKey('+14155550100'),
      ConditionExpression: 'attribute_not_exists(#at) OR #at <= :at',
      ExpressionAttributeValues: expect.objectContaining({ ':status': 'opted_out', ':source': 'sms_keyword', ':at': '2026-10-01T10:00:00.000Z', ':number': '+14155550100' }),
    });
  });

  it('reports no change when a later change is on record', async () => {
    ddb.on(UpdateCommand).rejects(new ConditionalCheckFailedException({ message: 'failed', $metadata: {} }));

    await expect(recordConsentChange(tenantId, '+14155550100', change)).resolves.toBe(false);
  });

  it("gives the inbound transaction the same guarded update, and the send transaction a check that the number has not opted out", () => {
    expect(consentChangeUpdate(tenantId, '+14155550100', change).Update).toMatchObject({ Key: ledgerKey('+14155550100'), ConditionExpression: 'attribute_not_exists(#at) OR #at <= :at' });
    expect(notOptedOutCheck(tenantId, '+14155550100').ConditionCheck).toEqual({
      TableName: process.env.TABLE_NAME,
      Key: ledgerKey('+14155550100'),
      ConditionExpression: 'attribute_not_exists(#status) OR #status <> :optedOut',
      ExpressionAttributeNames: { '#status': 'consentStatus' },
      ExpressionAttributeValues: { ':optedOut': 'opted_out' },
    });
  });

  it('reads a page of numbers in one BatchGetItem, retries unprocessed keys, and calls numbers without a row unknown', async () => {
    // Prepare: the first answer leaves one key unprocessed
    const table = process.env.TABLE_NAME!;
    ddb
      .on(BatchGetCommand)
      .resolvesOnce({
        Responses: { [table]: [{ ...ledgerKey('+14155550100'), number: '+14155550100', consentStatus: 'opted_out', consentSource: 'sms_keyword', consentAt: 'x', consentNote: 'Replied STOP' }] },
        UnprocessedKeys: { [table]: { Keys: [ledgerKey('+14155550101')] } },
      })
      .resolvesOnce({ Responses: { [table]: [{ ...ledgerKey('+14155550101'), number: '+14155550101', consentStatus: 'opted_in' }] } });
    // Act
    const consents = await consentsOf(tenantId, ['+14155550100', '+14155550101', '+14155550102', '+14155550100']);
    // Assess
    expect(ddb).toHaveReceivedCommandTimes(BatchGetCommand, 2);
    expect(ddb.commandCalls(BatchGetCommand)[0].args[0].input.RequestItems![table].Keys).toHaveLength(3); // duplicates read once
    expect(Object.fromEntries([...consents].map(([n, c]) => [n, c.status]))).toEqual({ '+14155550100': 'opted_out', '+14155550101': 'opted_in', '+14155550102': 'unknown' });
  });
});
