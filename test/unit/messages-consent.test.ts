import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import {
  consentAttributes,
  consentChangeUpdate,
  consentOf,
  consentOfChange,
  ledgerSnapshot,
  ledgerSnapshots,
  notOptedOutCheck,
} from '../../lambdas/contexts/consent/ledger';
import { batchGetItems } from '../../lambdas/shared/table/batch-get';
import { recordConsentChange } from '../../lambdas/contexts/contacts/consent-copies';
import { consentChangeOf, consentKeywordOf } from '../../lambdas/contexts/texting/consent-keywords';

const ddb = mockClient(DynamoDBDocumentClient);
beforeEach(() => ddb.reset());

const tenantId = '0199a000-0000-7000-8000-000000000001';
const table = process.env.TABLE_NAME!;
const ledgerKey = (number: string) => ({ pk: `T#${tenantId}#CONSENT#${number}`, sk: 'CONSENT' });
const cancelled = (...codes: string[]) =>
  new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: codes.map((Code) => ({ Code })),
  });

describe('consent keywords', () => {
  it.each(['STOP', 'stopall', 'Unsubscribe', 'CANCEL', 'end', 'QUIT', 'revoke', 'OptOut', '  stop\n'])(
    '"%s" opts out',
    (body) => {
      // Act & Assess
      expect(consentKeywordOf(body)).toEqual({ keyword: body.trim().toUpperCase(), status: 'opted_out' });
    },
  );

  it.each(['START', 'unstop', 'Yes', ' yes '])('"%s" opts in', (body) => {
    // Act & Assess
    expect(consentKeywordOf(body)).toEqual({ keyword: body.trim().toUpperCase(), status: 'opted_in' });
  });

  it.each(['stop please', 'STOP!', 'S T O P', '', 'yes please', 'STARTED', 'HELP', 'INFO'])(
    '"%s" is not a keyword (the whole body must be one; HELP changes nothing)',
    (body) => {
      // Act & Assess
      expect(consentKeywordOf(body)).toBeNull();
    },
  );

  it.each([
    ['a custom opt-out keyword', 'ARRET', 'STOP', 'opted_out'],
    ['a custom opt-in keyword, any case', 'COMMENCER', 'start', 'opted_in'],
    ['a body that says the opposite', 'STOP', 'START', 'opted_in'],
    ['a body that is no standard keyword', 'please stop', 'Stop', 'opted_out'],
  ])("lets Twilio's OptOutType decide over the body when sent: %s", (_name, body, optOutType, status) => {
    // Act
    const keyword = consentKeywordOf(body, optOutType);
    // Assess
    expect(keyword).toEqual({ keyword: body.trim().toUpperCase(), status });
  });

  it('changes nothing for OptOutType HELP, even on a STOP body, and reads the body when OptOutType is empty', () => {
    // Act & Assess
    expect(consentKeywordOf('STOP', 'HELP')).toBeNull();
    expect(consentKeywordOf('STOP', '')).toEqual({ keyword: 'STOP', status: 'opted_out' });
  });

  it('becomes a ledger change at the carrier time, noted with the keyword', () => {
    // Prepare
    const at = new Date('2026-10-01T10:00:00.000Z');
    // Act
    const change = consentChangeOf({ keyword: 'STOP', status: 'opted_out' }, at);
    // Assess
    expect(change).toEqual({ status: 'opted_out', source: 'sms_keyword', at, note: 'Replied STOP' });
  });
});

describe('the consent ledger', () => {
  const change = {
    status: 'opted_out' as const,
    source: 'sms_keyword',
    at: new Date('2026-10-01T10:00:00.000Z'),
    note: 'Replied STOP',
  };
  /** The ledger's update of one number: the same in a transaction and on its own. */
  const ledgerUpdate = (number: string) => ({
    TableName: table,
    Key: ledgerKey(number),
    // Each change also bumps the row's sequence and stamps its time: a consent.changed event.
    UpdateExpression:
      'SET #type = :set_type, #tenantId = :set_tenantId, #number = :set_number, #consentStatus = :set_consentStatus, ' +
      '#consentSource = :set_consentSource, ' +
      '#consentAt = :set_consentAt, #consentNote = :set_consentNote, #consentEvidence = :set_consentEvidence, ' +
      '#changedAt = :set_changedAt ' +
      // Nobody holds the number: the row names no contact (consent.changed's contactId is null); a keyword is no
      // API request, so the row names none either (consent.changed's request is null).
      'REMOVE #holderContactId, #holderExternalId, #holderVersion, #changeRequestId, #changeIdempotencyKey ' +
      'ADD #sequence :add_sequence',
    // The later change wins: a keyword the carrier retried late never overrides a newer one.
    ConditionExpression: 'attribute_not_exists(#at) OR #at <= :at',
    ExpressionAttributeNames: {
      '#type': 'type',
      '#tenantId': 'tenantId',
      '#number': 'number',
      '#consentStatus': 'consentStatus',
      '#consentSource': 'consentSource',
      '#consentAt': 'consentAt',
      '#consentNote': 'consentNote',
      '#consentEvidence': 'consentEvidence',
      '#changedAt': 'changedAt',
      '#holderContactId': 'holderContactId',
      '#holderExternalId': 'holderExternalId',
      '#holderVersion': 'holderVersion',
      '#changeRequestId': 'changeRequestId',
      '#changeIdempotencyKey': 'changeIdempotencyKey',
      '#sequence': 'sequence',
      '#at': 'consentAt',
    },
    ExpressionAttributeValues: {
      ':set_type': 'consent',
      ':set_tenantId': tenantId,
      ':set_number': number,
      ':set_consentStatus': 'opted_out',
      ':set_consentSource': 'sms_keyword',
      ':set_consentAt': '2026-10-01T10:00:00.000Z',
      ':set_consentNote': 'Replied STOP',
      // A keyword has no evidence: the one of an earlier change recorded through the API goes.
      ':set_consentEvidence': null,
      ':set_changedAt': expect.any(Number),
      ':add_sequence': 1,
      ':at': '2026-10-01T10:00:00.000Z',
    },
  });

  const holder = '0199a000-0000-7000-8000-0000000000c1';
  const claimKey = (number: string) => ({ pk: `T#${tenantId}#NUMBER#${number}`, sk: 'NUMBER' });

  it('records a change on the number with the copy on the contact that holds it, in one transaction guarded on the holder', async () => {
    // Prepare
    ddb
      .on(GetCommand, { Key: claimKey('+14155550100') })
      .resolves({ Item: { ...claimKey('+14155550100'), contactId: holder } })
      .on(GetCommand, { Key: { pk: `T#${tenantId}#CONTACT#${holder}`, sk: 'CONTACT' } })
      .resolves({ Item: { id: holder, externalId: 'crm-9', sequence: 4 } });
    ddb.on(TransactWriteCommand).resolves({});
    // Act
    const recorded = await recordConsentChange(tenantId, '+14155550100', change);
    // Assess
    expect(recorded).toBe(true);
    expect(ddb).toHaveReceivedCommandWith(GetCommand, { Key: claimKey('+14155550100'), ConsistentRead: true });
    const [ledger, history, copy, claim] = ddb.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems!;
    // The ledger names the holder, its external id and the version its copy gives it (consent.changed says them).
    expect(ledger.Update!.ExpressionAttributeValues).toMatchObject({
      ':set_holderContactId': holder,
      ':set_holderExternalId': 'crm-9',
      ':set_holderVersion': 5,
    });
    // The change's row of the number's history, in the ledger row's partition.
    expect(history.Put).toMatchObject({
      Item: {
        pk: ledgerKey('+14155550100').pk,
        sk: 'HISTORY#2026-10-01T10:00:00.000Z#opted_out#sms_keyword',
        status: 'opted_out',
        source: 'sms_keyword',
        evidence: null,
      },
    });
    expect(copy.Update).toMatchObject({
      Key: { pk: `T#${tenantId}#CONTACT#${holder}`, sk: 'CONTACT' },
      ConditionExpression: 'attribute_exists(pk) AND #holdsNumber = :heldNumber AND #versionAsRead = :versionAsRead',
      ExpressionAttributeValues: {
        ':set_consentStatus': 'opted_out',
        ':set_consentSource': 'sms_keyword',
        ':set_consentAt': '2026-10-01T10:00:00.000Z',
        ':set_consentNote': 'Replied STOP',
        ':heldNumber': '+14155550100',
        // The contact shows the change: its version moves from the one read, and it goes to the end of the feed.
        ':set_sequence': 5,
        ':versionAsRead': 4,
        ':set_changespk': `T#${tenantId}#CONTACT_CHANGES`,
        ':set_changessk': expect.any(String),
      },
    });
    expect(claim.ConditionCheck).toMatchObject({
      Key: claimKey('+14155550100'),
      ConditionExpression: 'contactId = :holder',
      ExpressionAttributeValues: { ':holder': holder },
    });
  });

  it('records a change on a number nobody holds with the check that still nobody does', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({});
    ddb.on(TransactWriteCommand).resolves({});
    // Act
    await recordConsentChange(tenantId, '+14155550100', change);
    // Assess
    const items = ddb.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems!;
    expect(items).toHaveLength(3);
    expect(items[2].ConditionCheck).toMatchObject({
      Key: claimKey('+14155550100'),
      ConditionExpression: 'attribute_not_exists(pk)',
    });
  });

  it('reports no change when a later change is on record', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({});
    ddb.on(TransactWriteCommand).rejects(cancelled('ConditionalCheckFailed', 'None'));
    // Act
    const recorded = await recordConsentChange(tenantId, '+14155550100', change);
    // Assess
    expect(recorded).toBe(false);
    expect(ddb).toHaveReceivedCommandTimes(TransactWriteCommand, 1);
  });

  it('writes the change again for the new holder when the number moved between the read and the write', async () => {
    // Prepare
    ddb
      .on(GetCommand)
      .resolves({ Item: { sequence: 1 } })
      .on(GetCommand, { Key: claimKey('+14155550100') })
      .resolvesOnce({ Item: { contactId: holder } })
      .resolves({ Item: { contactId: 'new-holder' } });
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled('None', 'None', 'ConditionalCheckFailed', 'ConditionalCheckFailed'))
      .resolves({});
    // Act
    const recorded = await recordConsentChange(tenantId, '+14155550100', change);
    // Assess
    expect(recorded).toBe(true);
    const copies = ddb
      .commandCalls(TransactWriteCommand)
      .map((call) => call.args[0].input.TransactItems![2].Update!.Key);
    expect(copies).toEqual([
      { pk: `T#${tenantId}#CONTACT#${holder}`, sk: 'CONTACT' },
      { pk: `T#${tenantId}#CONTACT#new-holder`, sk: 'CONTACT' },
    ]);
  });

  it('gives the inbound transaction the same guarded update', () => {
    // Act
    const item = consentChangeUpdate(tenantId, '+14155550100', change);
    // Assess
    expect(item).toEqual({ Update: ledgerUpdate('+14155550100') });
  });

  it('gives the send transaction a check that the number has not opted out (no row, unknown and opted_in pass)', () => {
    // Act
    const item = notOptedOutCheck(tenantId, '+14155550100');
    // Assess
    expect(item).toEqual({
      ConditionCheck: {
        TableName: table,
        Key: ledgerKey('+14155550100'),
        ConditionExpression: 'attribute_not_exists(#status) OR #status <> :optedOut',
        ExpressionAttributeNames: { '#status': 'consentStatus' },
        ExpressionAttributeValues: { ':optedOut': 'opted_out' },
      },
    });
  });

  it('reads one number consistently, and calls a number without a row unknown', async () => {
    // Prepare
    ddb
      .on(GetCommand)
      .resolves({})
      .on(GetCommand, { Key: ledgerKey('+14155550100') })
      .resolves({
        Item: {
          ...ledgerKey('+14155550100'),
          number: '+14155550100',
          consentStatus: 'opted_out',
          consentSource: 'carrier_opt_out',
          consentAt: '2026-10-01T10:00:00.000Z',
          consentNote: 'Carrier refused a send (error 21610)',
        },
      });
    // Act
    const known = await consentOf(tenantId, '+14155550100');
    const unknown = await consentOf(tenantId, '+14155550199');
    // Assess
    expect(known).toEqual({
      status: 'opted_out',
      source: 'carrier_opt_out',
      at: '2026-10-01T10:00:00.000Z',
      note: 'Carrier refused a send (error 21610)',
    });
    expect(unknown).toEqual({ status: 'unknown', source: null, at: null, note: null });
    expect(ddb).toHaveReceivedCommandWith(GetCommand, {
      TableName: table,
      Key: ledgerKey('+14155550100'),
      ConsistentRead: true,
    });
  });
});

describe("the ledger row's holder", () => {
  const change = { status: 'opted_out' as const, source: 'sms_keyword', at: new Date(0), note: 'Replied STOP' };
  const removed = (holder?: { contactId: string; externalId: string | null; version: number }) =>
    / REMOVE (.*?)(?: ADD | SET |$)/
      .exec(consentChangeUpdate(tenantId, '+14155550100', change, new Date(0), holder).Update!.UpdateExpression!)?.[1]
      ?.split(', ')
      .map((name) => name.trim())
      // The holder's attributes only (a change made by no API request also removes the request's: events.ts).
      .filter((name) => name.startsWith('#holder')) ?? [];

  it('drops an external id a previous holder left when the new holder has none, and every holder attribute with no holder', () => {
    // Act + Assess
    expect(removed({ contactId: 'c1', externalId: null, version: 2 })).toEqual(['#holderExternalId']);
    expect(removed({ contactId: 'c1', externalId: 'crm-1', version: 2 })).toEqual([]);
    expect(removed()).toEqual(['#holderContactId', '#holderExternalId', '#holderVersion']);
  });
});

describe("a copy of the ledger's row, and the check that keeps it true", () => {
  const recorded = (number: string, status: string, at?: string) => ({
    ...ledgerKey(number),
    number,
    consentStatus: status,
    consentSource: 'sms_keyword',
    ...(at && { consentAt: at }),
    consentNote: 'Replied STOP',
  });
  const AT = '2026-10-01T10:00:00.000Z';

  it('checks a recorded change is still the one read: its time and its status', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: recorded('+14155550100', 'opted_out', AT) });
    // Act
    const snapshot = await ledgerSnapshot(tenantId, '+14155550100');
    // Assess
    expect(snapshot).toEqual({
      consent: { status: 'opted_out', source: 'sms_keyword', at: AT, note: 'Replied STOP' },
      unchanged: {
        ConditionCheck: {
          TableName: table,
          Key: ledgerKey('+14155550100'),
          ConditionExpression: '#at = :at AND #status = :status',
          ExpressionAttributeNames: { '#at': 'consentAt', '#status': 'consentStatus' },
          ExpressionAttributeValues: { ':at': AT, ':status': 'opted_out' },
        },
      },
    });
    expect(ddb).toHaveReceivedCommandWith(GetCommand, { Key: ledgerKey('+14155550100'), ConsistentRead: true });
  });

  it('checks that a row with no change recorded still has none, and that a number with no row still has none', async () => {
    // Prepare: a row holding no change (unknown) for one number, nothing for the other
    ddb
      .on(GetCommand)
      .resolves({})
      .on(GetCommand, { Key: ledgerKey('+14155550100') })
      .resolves({ Item: { ...ledgerKey('+14155550100'), number: '+14155550100' } });
    // Act
    const rowWithout = await ledgerSnapshot(tenantId, '+14155550100');
    const noRow = await ledgerSnapshot(tenantId, '+14155550101');
    // Assess
    expect(rowWithout.consent.status).toBe('unknown');
    expect(rowWithout.unchanged.ConditionCheck).toEqual({
      TableName: table,
      Key: ledgerKey('+14155550100'),
      ConditionExpression: 'attribute_not_exists(#at)',
      ExpressionAttributeNames: { '#at': 'consentAt' },
    });
    expect(noRow.consent).toEqual({ status: 'unknown', source: null, at: null, note: null });
    expect(noRow.unchanged.ConditionCheck).toEqual({
      TableName: table,
      Key: ledgerKey('+14155550101'),
      ConditionExpression: 'attribute_not_exists(pk)',
    });
  });

  it('reads the rows of many numbers in one consistent batch, each number once, each with its own check', async () => {
    // Prepare
    ddb.on(BatchGetCommand).resolves({ Responses: { [table]: [recorded('+14155550100', 'opted_in', AT)] } });
    // Act
    const snapshots = await ledgerSnapshots(tenantId, ['+14155550100', '+14155550101', '+14155550100']);
    // Assess
    expect([...snapshots.keys()]).toEqual(['+14155550100', '+14155550101']);
    expect(snapshots.get('+14155550100')!.consent.status).toBe('opted_in');
    expect(snapshots.get('+14155550100')!.unchanged.ConditionCheck!.ExpressionAttributeValues).toEqual({
      ':at': AT,
      ':status': 'opted_in',
    });
    expect(snapshots.get('+14155550101')!.consent.status).toBe('unknown');
    expect(snapshots.get('+14155550101')!.unchanged.ConditionCheck!.ConditionExpression).toBe(
      'attribute_not_exists(pk)',
    );
    expect(ddb).toHaveReceivedCommandTimes(BatchGetCommand, 1);
    expect(ddb).toHaveReceivedCommandWith(BatchGetCommand, {
      RequestItems: { [table]: { Keys: [ledgerKey('+14155550100'), ledgerKey('+14155550101')], ConsistentRead: true } },
    });
  });

  it('stores a consent under the attributes a contact copies, and a change as the consent it records', () => {
    // Act + Assess
    const change = { status: 'opted_out' as const, source: 'sms_keyword', at: new Date(AT), note: 'Replied STOP' };
    const consent = consentOfChange(change);
    expect(consent).toEqual({ status: 'opted_out', source: 'sms_keyword', at: AT, note: 'Replied STOP' });
    expect(consentAttributes(consent)).toEqual({
      consentStatus: 'opted_out',
      consentSource: 'sms_keyword',
      consentAt: AT,
      consentNote: 'Replied STOP',
    });
  });
});

describe('batchGetItems', () => {
  it('reads the keys in one BatchGetItem and asks again for the keys left unprocessed', async () => {
    // Prepare: the first answer leaves one key unprocessed
    const opted = { ...ledgerKey('+14155550100'), consentStatus: 'opted_out' };
    const optedIn = { ...ledgerKey('+14155550101'), consentStatus: 'opted_in' };
    ddb
      .on(BatchGetCommand)
      .resolvesOnce({
        Responses: { [table]: [opted] },
        UnprocessedKeys: { [table]: { Keys: [ledgerKey('+14155550101')] } },
      })
      .resolvesOnce({ Responses: { [table]: [optedIn] } });
    // Act
    const rows = await batchGetItems(
      [ledgerKey('+14155550100'), ledgerKey('+14155550101'), ledgerKey('+14155550102')],
      { consistentRead: true },
    );
    // Assess: the retry asks for the unprocessed key only; a key without a row is missing
    expect(ddb).toHaveReceivedCommandTimes(BatchGetCommand, 2);
    expect(ddb).toHaveReceivedNthSpecificCommandWith(1, BatchGetCommand, {
      RequestItems: {
        [table]: {
          Keys: [ledgerKey('+14155550100'), ledgerKey('+14155550101'), ledgerKey('+14155550102')],
          ConsistentRead: true,
        },
      },
    });
    expect(ddb).toHaveReceivedNthSpecificCommandWith(2, BatchGetCommand, {
      RequestItems: { [table]: { Keys: [ledgerKey('+14155550101')], ConsistentRead: true } },
    });
    expect(rows).toEqual([opted, optedIn]);
  });

  it('reads more than 100 keys in batches of 100, the most BatchGetItem takes', async () => {
    // Prepare
    const keys = Array.from({ length: 101 }, (_, i) => ledgerKey(`+1415555${String(i).padStart(4, '0')}`));
    ddb.on(BatchGetCommand).resolves({ Responses: { [table]: [] } });
    // Act
    await batchGetItems(keys);
    // Assess
    const batches = ddb
      .commandCalls(BatchGetCommand)
      .map((call) => call.args[0].input.RequestItems![table].Keys!.length);
    expect(batches).toEqual([100, 1]);
  });

  it('reads nothing for no keys', async () => {
    // Act
    const rows = await batchGetItems([]);
    // Assess
    expect(rows).toEqual([]);
    expect(ddb).not.toHaveReceivedCommand(BatchGetCommand);
  });
});
