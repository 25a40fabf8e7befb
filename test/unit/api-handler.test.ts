import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { handler as getMe } from '../../lambdas/handlers/api/get-me';
import { handler as getContact } from '../../lambdas/handlers/api/get-contact';
import { handler as createContact } from '../../lambdas/handlers/api/create-contact';
import { handler as updateContact } from '../../lambdas/handlers/api/update-contact';
import { handler as listCalls } from '../../lambdas/handlers/api/list-calls';
import { aPrincipal, apiEvent, bodyOf, jsonHeaders, lambdaContext } from '../support/api-event';

const ddb = mockClient(DynamoDBDocumentClient);
beforeEach(() => {
  ddb.reset();
  // The per-key limiter counts every authenticated request; first request of the window by default.
  ddb.on(UpdateCommand).resolves({ Attributes: { count: 1 } });
  // Contacts show their number's consent from the ledger: no row recorded by default.
  ddb.on(BatchGetCommand).resolves({ Responses: {} });
});

/** Table calls other than the limiter's counter update. */
const dataCalls = () =>
  ddb
    .calls()
    .filter((call) => !String((call.args[0].input as { Key?: { pk?: string } }).Key?.pk ?? '').includes('#RATE#'));

const contactId = '0199a000-0000-7000-8000-0000000000c1';

describe('the middleware chain', () => {
  it('answers GET /me from the authorizer context with no table read besides the rate-limit count', async () => {
    const result = await getMe(apiEvent({ principal: aPrincipal({ scopes: ['contacts.view'] }) }), lambdaContext);

    expect(result.statusCode).toBe(200);
    expect(bodyOf(result)).toEqual({
      tenant: { id: '0199a000-0000-7000-8000-000000000001', name: 'Acme', slug: 'acme', plan: 'pro' },
      apiKey: {
        id: '0199a000-0000-7000-8000-0000000000aa',
        name: 'CI key',
        prefix: 'cct_AbCdEfGh',
        expiresAt: null,
        createdAt: '2026-10-01T00:00:00.000Z',
      },
      permissions: ['contacts.view'],
      rateLimit: { requestsPerMinute: 120 },
      quietHours: { mode: 'off', appliesTo: 'all', window: { start: '08:00', end: '21:00' } },
    });
    expect(dataCalls()).toHaveLength(0);
  });

  it('refuses a key without the route scope with 403 naming the scope, before reading anything', async () => {
    const event = apiEvent({
      pathParameters: { id: contactId },
      principal: aPrincipal({ scopes: ['calls.view.team'] }),
    });

    const result = await getContact(event, lambdaContext);

    expect(result.statusCode).toBe(403);
    expect(bodyOf(result)).toEqual({
      error: expect.stringContaining('contacts.view'),
      code: 'insufficient_scope',
      requiredScope: 'contacts.view',
      requestId: 'req-1',
    });
    expect(dataCalls()).toHaveLength(0);
  });

  it('answers 401 with WWW-Authenticate when the authorizer context is missing or the key expired since it was cached', async () => {
    const missing = await getMe(apiEvent({ principal: null }), lambdaContext);
    const expired = await getMe(
      apiEvent({ principal: aPrincipal({ expiresAt: '2020-01-01T00:00:00.000Z' }) }),
      lambdaContext,
    );

    for (const result of [missing, expired]) {
      expect(result.statusCode).toBe(401);
      expect(result.headers).toMatchObject({ 'WWW-Authenticate': 'Bearer' });
      expect(bodyOf(result).code).toBe('unauthorized');
    }
  });

  it('maps a malformed id to 404 not_found without a table read', async () => {
    const result = await getContact(apiEvent({ pathParameters: { id: 'not-a-uuid' } }), lambdaContext);

    expect(result.statusCode).toBe(404);
    expect(bodyOf(result)).toEqual({ error: 'Contact not found', code: 'not_found', requestId: 'req-1' });
    expect(dataCalls()).toHaveLength(0);
  });

  it('reads a contact with one GetItem on the caller tenant partition: its consent is on the row', async () => {
    const principal = aPrincipal();
    ddb.on(GetCommand).resolves({
      Item: {
        pk: `T#${principal.tenant.id}#CONTACT#${contactId}`,
        sk: 'CONTACT',
        id: contactId,
        tenantId: principal.tenant.id,
        displayName: 'Ada',
        phoneNumber: '+14155550100',
        normalizedNumber: '+14155550100',
        isAutoCreated: false,
        source: 'manual',
        consentStatus: 'opted_out',
        consentSource: 'sms_keyword',
        consentAt: '2026-10-02T00:00:00.000Z',
        consentNote: 'Replied STOP',
        createdAt: '2026-10-01T00:00:00.000Z',
        updatedAt: '2026-10-01T00:00:00.000Z',
        searchIndex: 'fingerprint',
      },
    });

    const result = await getContact(apiEvent({ pathParameters: { id: contactId }, principal }), lambdaContext);

    expect(result.statusCode).toBe(200);
    expect(ddb).toHaveReceivedCommandTimes(GetCommand, 1);
    expect(ddb).toHaveReceivedCommandWith(GetCommand, {
      Key: { pk: `T#${principal.tenant.id}#CONTACT#${contactId}`, sk: 'CONTACT' },
    });
    // The consent is its number's, copied onto the row with every change of the ledger: no second read.
    expect(ddb).toHaveReceivedCommandTimes(BatchGetCommand, 0);
    const { contact } = bodyOf(result);
    expect(contact).toMatchObject({
      id: contactId,
      company: null,
      tag: null,
      notes: null,
      consentStatus: 'opted_out',
      consentAt: '2026-10-02T00:00:00.000Z',
    });
    expect(contact).not.toHaveProperty('pk');
    expect(contact).not.toHaveProperty('searchIndex');
  });

  it('answers 400 naming the field for malformed JSON, an unknown field and a non-JSON content type', async () => {
    const malformed = await createContact(
      apiEvent({ method: 'POST', body: '{"displayName":', headers: jsonHeaders }),
      lambdaContext,
    );
    const unknown = await createContact(
      apiEvent({
        method: 'POST',
        body: JSON.stringify({ displayName: 'A', phoneNumber: '+14155550100', nick: 1 }),
        headers: jsonHeaders,
      }),
      lambdaContext,
    );
    const wrongType = await createContact(
      apiEvent({ method: 'POST', body: 'displayName=A', headers: { 'content-type': 'text/plain' } }),
      lambdaContext,
    );

    expect([malformed.statusCode, bodyOf(malformed).error]).toEqual([400, 'body: must be a valid JSON object']);
    expect([unknown.statusCode, bodyOf(unknown).error]).toEqual([400, 'body.nick: unknown field']);
    expect(wrongType.statusCode).toBe(415);
    expect(dataCalls()).toHaveLength(0);
  });

  it('reads the content type whatever the case of its header name', async () => {
    ddb.on(GetCommand).resolves({});
    ddb.on(TransactWriteCommand).resolves({});
    const body = JSON.stringify({ displayName: 'Ada', phoneNumber: '+14155550100' });

    const result = await createContact(
      apiEvent({ method: 'POST', body, headers: { 'CONTENT-TYPE': 'application/json' } }),
      lambdaContext,
    );

    expect(result.statusCode).toBe(201);
  });

  it('refuses a body over 64 KiB with 413 before parsing it', async () => {
    const body = JSON.stringify({ displayName: 'A', phoneNumber: '+14155550100', notes: 'x'.repeat(70_000) });

    const result = await createContact(apiEvent({ method: 'POST', body, headers: jsonHeaders }), lambdaContext);

    expect(result.statusCode).toBe(413);
    expect(bodyOf(result).code).toBe('payload_too_large');
  });

  it('answers an unexpected failure with a 500 that names the request and leaks nothing', async () => {
    ddb.on(QueryCommand).rejects(new Error('socket hang up at 10.0.0.12:443'));

    const result = await listCalls(apiEvent({ query: {} }), lambdaContext);

    expect(result.statusCode).toBe(500);
    expect(bodyOf(result)).toEqual({ error: 'Internal error', code: 'internal', requestId: 'req-1' });
  });
});

describe('contact writes', () => {
  it("creates a contact with one transaction: the number claim and the row, both conditional, with the number's consent checked", async () => {
    const principal = aPrincipal();
    ddb.on(GetCommand).resolves({});
    ddb.on(TransactWriteCommand).resolves({});

    const result = await createContact(
      apiEvent({
        method: 'POST',
        body: JSON.stringify({ displayName: 'Ada', phoneNumber: '+14155550100' }),
        headers: jsonHeaders,
        principal,
      }),
      lambdaContext,
    );

    expect(result.statusCode).toBe(201);
    expect(bodyOf(result)).toMatchObject({
      adopted: false,
      contact: { displayName: 'Ada', isAutoCreated: false, source: 'manual', createdByAgentId: null },
    });
    // The number's consent (its ledger row), then one write: the transaction.
    expect(dataCalls().map((call) => call.args[0].constructor.name)).toEqual(['GetCommand', 'TransactWriteCommand']);
    expect(ddb).toHaveReceivedCommandWith(GetCommand, {
      Key: { pk: `T#${principal.tenant.id}#CONSENT#+14155550100`, sk: 'CONSENT' },
      ConsistentRead: true,
    });
    const [claim, row, ledgerCheck] = ddb.commandCalls(TransactWriteCommand)[0].args[0].input.TransactItems ?? [];
    expect(claim.Put).toMatchObject({
      Item: { pk: `T#${principal.tenant.id}#NUMBER#+14155550100`, sk: 'NUMBER', named: true },
      ConditionExpression: 'attribute_not_exists(pk)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
    expect(row.Put).toMatchObject({
      Item: {
        pk: expect.stringMatching(`^T#${principal.tenant.id}#CONTACT#`),
        sk: 'CONTACT',
        gsi1pk: `T#${principal.tenant.id}#NAMED_CONTACTS`,
        directorypk: `T#${principal.tenant.id}#CONTACTS`,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    // The row carries a copy of the number's ledger row (none yet: unknown), which must still be that when it commits.
    expect(row.Put!.Item).toMatchObject({
      consentStatus: 'unknown',
      consentSource: null,
      consentAt: null,
      consentNote: null,
    });
    expect(ledgerCheck.ConditionCheck).toMatchObject({
      Key: { pk: `T#${principal.tenant.id}#CONSENT#+14155550100`, sk: 'CONSENT' },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
  });

  it('answers 409 with the holder contactId when a named contact already has the number', async () => {
    ddb.on(GetCommand).resolves({});
    ddb.on(TransactWriteCommand).rejects(
      new TransactionCanceledException({
        message: 'Transaction cancelled',
        $metadata: {},
        CancellationReasons: [
          {
            Code: 'ConditionalCheckFailed',
            Item: marshall({ pk: 'T#x', sk: 'NUMBER#+14155550100', contactId, named: true }),
          },
          { Code: 'None' },
        ],
      }),
    );

    const result = await createContact(
      apiEvent({
        method: 'POST',
        body: JSON.stringify({ displayName: 'Ada', phoneNumber: '+14155550100' }),
        headers: jsonHeaders,
      }),
      lambdaContext,
    );

    expect(result.statusCode).toBe(409);
    expect(bodyOf(result)).toEqual({
      error: expect.any(String),
      code: 'contact_conflict',
      contactId,
      requestId: 'req-1',
    });
  });

  it('refuses an empty PATCH body with 400 naming the body and writes nothing', async () => {
    const result = await updateContact(
      apiEvent({ method: 'PATCH', pathParameters: { id: contactId }, body: '{}', headers: jsonHeaders }),
      lambdaContext,
    );

    expect(result.statusCode).toBe(400);
    expect(bodyOf(result)).toEqual({
      error: 'body: must contain at least one field',
      code: 'validation_failed',
      requestId: 'req-1',
    });
    expect(dataCalls()).toHaveLength(0);
  });
});
