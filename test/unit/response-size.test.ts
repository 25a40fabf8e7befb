import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import * as z from 'zod/mini';
import { BatchGetCommand, DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { handler as listThreads } from '../../lambdas/handlers/api/list-threads';
import { toProxyResult } from '../../lambdas/handlers/http/responses';
import { contactFields, CUSTOM_FIELD_LIMITS } from '../../lambdas/contexts/contacts/requests/contact-fields';
import { SendMessageBody } from '../../lambdas/contexts/texting/requests/send-message';
import type { Call } from '../../lambdas/contexts/calls/schemas';
import type { Contact } from '../../lambdas/contexts/contacts/schemas';
import type { Message, Thread } from '../../lambdas/contexts/texting/schemas';
import { fittingPage } from '../../lambdas/shared/table/paging';
import { MAX_PAGE_SIZE } from '../../lambdas/shared/schemas/paging';
import { LAMBDA_RESPONSE_LIMIT_BYTES } from '../../lambdas/shared/response-limit';
import { apiEvent, bodyOf, lambdaContext } from '../support/api-event';

/**
 * No list response may pass Lambda's 6 MB: over it the invocation fails and API Gateway answers
 * 502. The largest page each list route can answer is built here from the schemas' limits, with
 * every string made of the character that costs most once escaped twice (a control character:
 * `\u0001` in the body, `\\u0001` in the proxy result, 7 bytes for one UTF-16 unit).
 */
const ddb = mockClient(DynamoDBDocumentClient);

beforeEach(() => {
  ddb.reset();
  ddb.on(UpdateCommand).resolves({ Attributes: { count: 1 } });
});

const WORST = '\u0001';
const worst = (length: number) => WORST.repeat(length);
/** A request field's maxLength, read from its schema (a fresh object: a registered one comes out as a $ref). */
const maxLengthOf = (shape: Record<string, z.ZodMiniType>, field: string): number => {
  const json = z.toJSONSchema(z.object(shape), { io: 'input', unrepresentable: 'any' }) as {
    properties: Record<string, { maxLength?: number; anyOf?: { maxLength?: number }[] }>;
  };
  const property = json.properties[field];
  const maxLength = property.maxLength ?? property.anyOf?.find((option) => option.maxLength !== undefined)?.maxLength;
  if (maxLength === undefined) throw new Error(`${field} has no maxLength`);
  return maxLength;
};

const ID = '019a5f10-3a00-7000-8000-000000000001';
const NUMBER = '+123456789012345';
const AT = '2026-10-01T10:00:00.000Z';

const largestContact: Contact = {
  id: ID,
  tenantId: ID,
  displayName: worst(maxLengthOf(contactFields, 'displayName')),
  phoneNumber: NUMBER,
  company: worst(maxLengthOf(contactFields, 'company')),
  tag: worst(maxLengthOf(contactFields, 'tag')),
  notes: worst(maxLengthOf(contactFields, 'notes')),
  createdByAgentId: ID,
  createdAt: AT,
  updatedAt: AT,
  normalizedNumber: NUMBER,
  isAutoCreated: false,
  source: 'auto_outbound',
  consentStatus: 'opted_out',
  consentSource: 'carrier_error_21610',
  consentAt: AT,
  consentNote: worst(160),
  // JSON's longest spelling of a character these fields allow (no control characters) is `\"`.
  externalId: '"'.repeat(maxLengthOf(contactFields, 'externalId')),
  customFields: Object.fromEntries(
    Array.from({ length: CUSTOM_FIELD_LIMITS.maxTotalLength / CUSTOM_FIELD_LIMITS.maxValueLength }, (_, i) => [
      `k${i}`,
      '"'.repeat(CUSTOM_FIELD_LIMITS.maxValueLength - 2),
    ]),
  ), // A version past any a contact reaches: the longest number JSON spells here.
  version: Number.MAX_SAFE_INTEGER,
};
const largestMessage: Message = {
  id: ID,
  tenantId: ID,
  direction: 'outbound',
  fromNumber: NUMBER,
  toNumber: NUMBER,
  counterpartNumber: NUMBER,
  body: worst(maxLengthOf(SendMessageBody.shape, 'body')),
  status: 'delivered',
  messageSid: `SM${'f'.repeat(32)}`,
  agentId: ID,
  isRead: false,
  createdAt: AT,
};
const largestThread: Thread = {
  counterpartNumber: NUMBER,
  lastMessage: largestMessage.body,
  lastDirection: 'outbound',
  lastStatus: 'delivered',
  lastAt: AT,
  messageCount: Number.MAX_SAFE_INTEGER,
  hasUnread: true,
};
const largestCall: Call = {
  id: ID,
  direction: 'outbound',
  fromNumber: NUMBER,
  toNumber: NUMBER,
  status: worst(40),
  startedAt: AT,
  answeredAt: AT,
  endedAt: AT,
  durationSec: Number.MAX_SAFE_INTEGER,
  isInternal: false,
  agentId: ID,
  contactId: ID,
} as Call;

/** The invocation's response payload as Lambda counts it, with the headers the chain adds. */
const invocationBytes = (body: unknown) => {
  const result = toProxyResult({
    statusCode: 200,
    body,
    headers: { 'RateLimit-Limit': '120', 'RateLimit-Policy': '"default";q=120;w=60' },
  });
  return Buffer.byteLength(JSON.stringify(result), 'utf8');
};

describe('the largest page of every list route', () => {
  it.each([
    ['GET /contacts', 'contacts', largestContact],
    ['GET /messages/{counterpart}', 'messages', largestMessage],
    ['GET /messages', 'threads', largestThread],
    ['GET /calls', 'calls', largestCall],
  ] as const)('%s: 100 rows at every limit fit a Lambda response whole', (_route, list, largest) => {
    // Prepare
    const rows = Array.from({ length: MAX_PAGE_SIZE + 1 }, () => largest);
    // Act
    const page = fittingPage(rows, MAX_PAGE_SIZE);
    // Assess: the budget never shortens a page the schemas allow, and that page fits.
    expect(page).toHaveLength(MAX_PAGE_SIZE);
    expect(invocationBytes({ [list]: page, nextCursor: ID })).toBeLessThan(LAMBDA_RESPONSE_LIMIT_BYTES);
  });
});

describe('a page of rows larger than any request may write', () => {
  it('ends early with a nextCursor and stays within the response limit (inbound texts are as long as the carrier sends them)', async () => {
    // Prepare: 101 threads whose last inbound text holds 100,000 control characters each.
    const rows = Array.from({ length: 101 }, (_, n) => ({
      pk: `T#org#THREAD#${n}`,
      sk: 'THREAD',
      gsi2pk: 'T#org#THREADS',
      gsi2sk: `${AT}#019a5f10-3a00-7000-8000-${String(n).padStart(12, '0')}`,
      counterpartNumber: NUMBER,
      lastMessage: worst(100_000),
      lastDirection: 'inbound',
      lastStatus: 'received',
      lastAt: AT,
      messageCount: 1,
      unreadCount: 1,
      lastMessageId: `019a5f10-3a00-7000-8000-${String(n).padStart(12, '0')}`,
    }));
    // The index holds the threads' keys; the batch read answers the rows asked for.
    ddb.on(QueryCommand).resolves({ Items: rows.map(({ pk, sk, gsi2pk, gsi2sk }) => ({ pk, sk, gsi2pk, gsi2sk })) });
    ddb.on(BatchGetCommand).callsFake((input: { RequestItems: Record<string, { Keys: { pk: string }[] }> }) => {
      const [table, { Keys }] = Object.entries(input.RequestItems)[0];
      return { Responses: { [table]: Keys.map((key) => rows.find((row) => row.pk === key.pk)) } };
    });
    // Act
    const result = await listThreads(apiEvent({ query: { limit: '100' } }), lambdaContext);
    // Assess
    const { threads, nextCursor } = bodyOf(result);
    expect(result.statusCode).toBe(200);
    expect(threads.length).toBeGreaterThan(0);
    expect(threads.length).toBeLessThan(100);
    expect(nextCursor).toBe(rows[threads.length - 1].lastMessageId);
    expect(Buffer.byteLength(JSON.stringify(result), 'utf8')).toBeLessThan(LAMBDA_RESPONSE_LIMIT_BYTES);
  });
});
