import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDBDocumentClient, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { handler as getConsent } from '../../lambdas/handlers/api/get-consent';
import { handler as recordConsent } from '../../lambdas/handlers/api/record-consent';
import { consentHistoryPut } from '../../lambdas/contexts/consent/history';
import type { RecordConsentInput } from '../../lambdas/contexts/consent/requests/record-consent';
import { consentChangeOfRequest } from '../../lambdas/contexts/texting/consent-records';
import { deriveEvent } from '../../lambdas/contexts/webhooks/events';
import { ValidationError } from '../../lambdas/shared/errors';
import { aPrincipal, apiEvent, bodyOf, jsonHeaders, lambdaContext } from '../support/api-event';

/**
 * POST /consent and GET /consent against aws-sdk-client-mock: what the request schema refuses
 * (before any table call), the change a request makes (its time, its note, its evidence), and the
 * answer for a number never seen.
 */
const ddb = mockClient(DynamoDBDocumentClient);
const principal = aPrincipal();
const ADA = '+14155550100';
const evidence = {
  statement: 'I agree to receive appointment reminders by text.',
  where: 'https://example.com/reminders',
  collectedAt: '2026-11-21T09:30:00Z',
};

beforeEach(() => {
  ddb.reset();
  ddb.on(UpdateCommand).resolves({ Attributes: { count: 1 } }); // the per-key limiter
});

const dataCalls = () =>
  ddb
    .calls()
    .filter((call) => !String((call.args[0].input as { Key?: { pk?: string } }).Key?.pk ?? '').includes('#RATE#'));

const post = (body: unknown) =>
  recordConsent(
    apiEvent({ method: 'POST', resource: '/api/v1/consent', body: JSON.stringify(body), headers: jsonHeaders }),
    lambdaContext,
  );

describe('POST /consent refuses what it cannot record, naming the field, before touching the table', () => {
  it.each([
    [
      'an opt-in without evidence',
      { phoneNumber: ADA, status: 'opted_in', source: 'web_form' },
      'body.evidence: is required for an opt-in',
    ],
    ["the carrier's own source", { phoneNumber: ADA, status: 'opted_out', source: 'sms_keyword' }, 'body.source: '],
    [
      'a number that is not E.164',
      { phoneNumber: '4155550100', status: 'opted_out', source: 'email' },
      'body.phoneNumber: ',
    ],
    ['an unknown status', { phoneNumber: ADA, status: 'unknown', source: 'email' }, 'body.status: '],
    [
      'an unknown part of the evidence',
      { phoneNumber: ADA, status: 'opted_in', source: 'call', evidence: { ...evidence, ip: '203.0.113.9' } },
      'body.evidence.ip: unknown field',
    ],
    [
      'a statement over 1000 characters',
      { phoneNumber: ADA, status: 'opted_in', source: 'call', evidence: { ...evidence, statement: 'x'.repeat(1001) } },
      'body.evidence.statement: ',
    ],
    [
      'evidence without its time',
      { phoneNumber: ADA, status: 'opted_in', source: 'in_person', evidence: { statement: 'Yes', where: 'Shop' } },
      'body.evidence.collectedAt: is required',
    ],
  ])('%s', async (_case, body, message) => {
    // Act
    const result = await post(body);
    // Assess
    expect(result.statusCode).toBe(400);
    expect(bodyOf(result)).toMatchObject({ code: 'validation_failed' });
    expect(bodyOf(result).error.startsWith(message)).toBe(true);
    expect(dataCalls()).toEqual([]);
  });
});

describe('the change a request makes', () => {
  const now = new Date('2026-11-21T10:00:00.000Z');
  const request = (fields: Partial<RecordConsentInput>): RecordConsentInput => ({
    phoneNumber: ADA,
    status: 'opted_in',
    source: 'web_form',
    evidence,
    ...fields,
  });

  it("takes the evidence's collectedAt as its time, normalized to UTC, with a note saying how", () => {
    const change = consentChangeOfRequest(
      request({ evidence: { ...evidence, collectedAt: '2026-11-21T10:30:00+01:00', reference: 'form-77' } }),
      now,
    );

    expect(change).toEqual({
      status: 'opted_in',
      source: 'web_form',
      at: new Date('2026-11-21T09:30:00.000Z'),
      note: 'Opted in through a web form',
      evidence: { ...evidence, collectedAt: '2026-11-21T09:30:00.000Z', reference: 'form-77' },
    });
  });

  it("takes the request's time for an opt-out without evidence, and for a collectedAt slightly ahead of the clock", () => {
    const optOut = consentChangeOfRequest(request({ status: 'opted_out', source: 'email', evidence: undefined }), now);
    const ahead = consentChangeOfRequest(
      request({ evidence: { ...evidence, collectedAt: '2026-11-21T10:04:00Z' } }),
      now,
    );

    expect(optOut).toEqual({
      status: 'opted_out',
      source: 'email',
      at: now,
      note: 'Opted out by email',
      evidence: undefined,
    });
    expect(ahead.at).toEqual(now);
  });

  it('refuses a collectedAt more than 5 minutes ahead, naming it', () => {
    const future = request({ evidence: { ...evidence, collectedAt: '2026-11-21T10:06:00Z' } });

    expect(() => consentChangeOfRequest(future, now)).toThrow(ValidationError);
    expect(() => consentChangeOfRequest(future, now)).toThrow(/^body\.evidence\.collectedAt: /);
  });

  it('keeps its history row out of the webhook pipeline (consent.changed comes from the ledger row alone)', () => {
    const row = consentHistoryPut(principal.tenant.id, ADA, consentChangeOfRequest(request({}), now)).Put!.Item;

    expect(
      deriveEvent({ eventId: 'e1', eventName: 'INSERT', approximateCreationMs: now.getTime(), newImage: row }),
    ).toBeUndefined();
    expect(row?.pk).toBe(`T#${principal.tenant.id}#CONSENT#${ADA}`);
  });
});

describe('GET /consent', () => {
  it("answers a number never seen as the ledger's default: unknown, nothing recorded, no history", async () => {
    // Prepare
    ddb.on(GetCommand).resolves({});
    ddb.on(QueryCommand).resolves({ Items: [] });
    // Act
    const result = await getConsent(
      apiEvent({ resource: '/api/v1/consent', query: { phoneNumber: ADA } }),
      lambdaContext,
    );
    // Assess
    expect(result.statusCode).toBe(200);
    expect(bodyOf(result)).toEqual({
      consent: {
        phoneNumber: ADA,
        status: 'unknown',
        source: null,
        note: null,
        evidence: null,
        updatedAt: null,
        history: [],
      },
    });
    // One bounded page of the number's own partition, newest first.
    expect(ddb).toHaveReceivedCommandWith(QueryCommand, {
      ExpressionAttributeValues: expect.objectContaining({ ':pk': `T#${principal.tenant.id}#CONSENT#${ADA}` }),
      ScanIndexForward: false,
      Limit: 20,
    });
  });

  it('answers 400 naming phoneNumber when it is missing or not E.164', async () => {
    const missing = await getConsent(apiEvent({ resource: '/api/v1/consent' }), lambdaContext);
    const malformed = await getConsent(
      apiEvent({ resource: '/api/v1/consent', query: { phoneNumber: '555-0100' } }),
      lambdaContext,
    );

    expect([missing.statusCode, bodyOf(missing).error]).toEqual([400, 'phoneNumber: is required']);
    expect(malformed.statusCode).toBe(400);
    expect(bodyOf(malformed).error).toMatch(/^phoneNumber: /);
  });
});
