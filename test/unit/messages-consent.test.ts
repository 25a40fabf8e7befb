import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { applyConsentKeyword, consentKeywordOf, consentOfNumber } from '../../lambdas/contexts/texting/consent';

const ddb = mockClient(DynamoDBDocumentClient);
beforeEach(() => ddb.reset());

const tenantId = '0199a000-0000-7000-8000-000000000001';
const contactId = '0199a000-0000-7000-8000-0000000000c1';

describe('consent keywords', () => {
  it.each(['STOP', 'stopall', 'Unsubscribe', 'CANCEL', 'end', 'QUIT', '  stop\n'])('"%s" opts out', (body) => {
    expect(consentKeywordOf(body)).toEqual({ keyword: body.trim().toUpperCase(), status: 'opted_out' });
  });

  it.each(['START', 'unstop', 'Yes', ' yes '])('"%s" opts in', (body) => {
    expect(consentKeywordOf(body)).toEqual({ keyword: body.trim().toUpperCase(), status: 'opted_in' });
  });

  it.each(['stop please', 'STOP!', 'S T O P', '', 'yes please', 'STARTED'])('"%s" is not a keyword (the whole body must be one)', (body) => {
    expect(consentKeywordOf(body)).toBeNull();
  });
});

describe('recording consent', () => {
  it('sets all four consent fields, guarded so an older keyword never overrides a newer one', async () => {
    ddb.on(UpdateCommand).resolves({});
    const at = new Date('2026-10-01T10:00:00.000Z');

    const changed = await applyConsentKeyword(tenantId, contactId, { keyword: 'STOP', status: 'opted_out' }, at);

    expect(changed).toBe(true);
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, {
      Key: { pk: `T#${tenantId}`, sk: `CONTACT#${contactId}` },
      ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(#at) OR attribute_type(#at, :nullType) OR #at <= :at)',
      ExpressionAttributeValues: expect.objectContaining({
        ':status': 'opted_out',
        ':source': 'sms_keyword',
        ':at': '2026-10-01T10:00:00.000Z',
        ':note': 'Replied STOP',
      }),
    });
  });

  it('reports no change when a newer consent is on record or the contact is gone', async () => {
    ddb.on(UpdateCommand).rejects(new ConditionalCheckFailedException({ message: 'failed', $metadata: {} }));

    await expect(applyConsentKeyword(tenantId, contactId, { keyword: 'START', status: 'opted_in' }, new Date())).resolves.toBe(false);
  });

  it("reads a number's consent through its claim and contact; unknown without a contact", async () => {
    ddb
      .on(GetCommand, { Key: { pk: `T#${tenantId}`, sk: 'NUMBER#+14155550100' } })
      .resolves({ Item: { contactId } })
      .on(GetCommand, { Key: { pk: `T#${tenantId}`, sk: `CONTACT#${contactId}` } })
      .resolves({ Item: { id: contactId, consentStatus: 'opted_out' } })
      .on(GetCommand, { Key: { pk: `T#${tenantId}`, sk: 'NUMBER#+14155550199' } })
      .resolves({});

    expect(await consentOfNumber(tenantId, '+14155550100')).toBe('opted_out');
    expect(await consentOfNumber(tenantId, '+14155550199')).toBe('unknown');
  });
});
