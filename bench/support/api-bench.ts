import { randomBytes } from 'node:crypto';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type QueryCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { TABLE_NAME } from '../../lambdas/shared/aws';
import { createApiKey } from '../../lambdas/contexts/tenants/api-keys';
import { recordCall } from '../../lambdas/contexts/calls/calls';
import { consentKey, notOptedOutCheck } from '../../lambdas/contexts/consent/ledger';
import { createContact } from '../../lambdas/contexts/contacts/contacts';
import {
  contactKey,
  fromItem,
  numberClaimKey,
  toItem as contactItem,
} from '../../lambdas/contexts/contacts/contact-rows';
import { indexedEntriesOf, insertIndex, reindex } from '../../lambdas/contexts/contacts/search-rows';
import { uuidv7 } from '../../lambdas/shared/ids';
import { PREFIX, tenantPk, tenantScopedPk } from '../../lambdas/shared/table/keys';
import type { Message } from '../../lambdas/contexts/texting/schemas';
import { messageKey, messageSidKey, toItem as messageItem } from '../../lambdas/contexts/texting/messages';
import { rateWindowKey } from '../../lambdas/contexts/tenants/rate-limit';
import { WINDOW_MS, windowOf } from '../../lambdas/contexts/tenants/rate-limit-window';
import type { Contact } from '../../lambdas/contexts/contacts/schemas';
import { SCOPES } from '../../lambdas/contexts/tenants/scopes';
import { GSIS, TTL_ATTRIBUTE } from '../../lambdas/shared/table/table-schema';
import { createTenant, tenantKey } from '../../lambdas/contexts/tenants/tenants';
import { receiveInboundMessage } from '../../lambdas/contexts/texting/receiving';
import { threadKey, threadUpdateFor } from '../../lambdas/contexts/texting/threads';
import { chargeShard, settleSpend, SPEND_SHARDS } from '../../lambdas/contexts/texting/spend';
import { localDynamoClient } from '../../local/dynamodb-local';
import { httpClient, inPool, runLoad, type HttpClient, type HttpResponse } from './load';
import type { LimitsMeters } from './limits-meters';
import type { RuntimeProcess } from './runtime-process';
import { distribution, ratio, round, type Distribution } from './stats';
import { attachTableCallCounter, type CallTally } from './table-call-counter';
import { accessLogLine, logEventBytes } from './log-bytes';
import { API_PREFIX } from '../../lambdas/handlers/http/route-spec';

/**
 * 2. Table round trips per request and 3. latency overhead, against the local runtime, with the
 * bare DynamoDB operations each endpoint needs run from this process against the same DynamoDB
 * Local, interleaved in chunks so both sides see the same machine.
 */

// ---------- the data ----------

export type Fixture = {
  tenantId: string;
  key: string;
  /** A second key of the same organization: its first request shows the authorizer's reads. */
  coldKey: string;
  /**
   * The key of a third organization that POST /messages uses: every text to a new number adds a
   * thread, and GET /messages (which has no paging) must keep reading the same 31 threads.
   */
  senderKey: string;
  senderTenantId: string;
  /** The organization the bare writes go to, so they never touch what the endpoints read. */
  bareTenantId: string;
  callIds: string[];
  namedContactIds: string[];
  /** The numbers of contacts the calls auto-created (adoption). */
  autoContactNumbers: string[];
  /** The number with a long conversation; the others have a few texts each. */
  conversation: string;
  threadCount: number;
};

const SEED = { calls: 120, namedContacts: 120, conversationTexts: 120, otherThreads: 30 };

const e164 = (area: string, n: number) => `+1${area}55${String(n).padStart(5, '0')}`;

/** A realistic organization, written through the domain modules (the same rows the service writes). */
export async function seed(): Promise<Fixture> {
  const tenant = await createTenant({
    name: 'Bench Organization',
    plan: 'pro',
    smsNumber: '+15005550006',
    billingStatus: 'active',
  });
  const bare = await createTenant({
    name: 'Bench Bare Operations',
    plan: 'pro',
    smsNumber: '+15005550007',
    billingStatus: 'active',
  });
  const sender = await createTenant({
    name: 'Bench Sender',
    plan: 'pro',
    smsNumber: '+15005550008',
    billingStatus: 'active',
  });
  // The bare sends charge the bare organization's spend shards, as `tenant create` makes them.
  await settleSpend(bare.id);
  const [{ key }, { key: coldKey }, { key: senderKey }] = await Promise.all([
    createApiKey({ tenantId: tenant.id, name: 'bench', scopes: [...SCOPES] }),
    createApiKey({ tenantId: tenant.id, name: 'bench-cold', scopes: [...SCOPES] }),
    createApiKey({ tenantId: sender.id, name: 'bench-sender', scopes: [...SCOPES] }),
  ]);
  const now = Date.now();
  const calls = await inPool(SEED.calls, 8, (i) =>
    recordCall(tenant.id, {
      direction: i % 2 === 0 ? 'inbound' : 'outbound',
      fromNumber: i % 2 === 0 ? e164('212', i) : '+15005550006',
      toNumber: i % 2 === 0 ? '+15005550006' : e164('212', i),
      status: 'completed',
      startedAt: new Date(now - (SEED.calls - i) * 60_000),
      answeredAt: new Date(now - (SEED.calls - i) * 60_000 + 5_000),
      endedAt: new Date(now - (SEED.calls - i) * 60_000 + 65_000),
      durationSec: 60,
    }),
  );
  const named = await inPool(SEED.namedContacts, 8, (i) =>
    createContact(tenant.id, {
      displayName: `Bench Contact ${i}`,
      phoneNumber: e164('310', i),
      company: i % 3 === 0 ? 'Acme' : null,
    }),
  );
  const conversation = e164('415', 0);
  // One conversation in order (its texts share a thread row), the other threads side by side.
  for (let i = 0; i < SEED.conversationTexts; i += 1) {
    await receiveInboundMessage(tenant.id, {
      from: conversation,
      to: '+15005550006',
      body: `Conversation text ${i}`,
      messageSid: `SMbench${randomBytes(12).toString('hex')}`,
      receivedAt: new Date(now - (SEED.conversationTexts - i) * 1_000),
    });
  }
  await inPool(SEED.otherThreads, 8, (i) =>
    receiveInboundMessage(tenant.id, {
      from: e164('415', i + 1),
      to: '+15005550006',
      body: `Hello ${i}`,
      messageSid: `SMbench${randomBytes(12).toString('hex')}`,
      receivedAt: new Date(now - i * 1_000),
    }),
  );
  return {
    tenantId: tenant.id,
    key,
    coldKey,
    senderKey,
    senderTenantId: sender.id,
    bareTenantId: bare.id,
    callIds: calls.map((c) => c.id),
    namedContactIds: named.map((c) => c.contact.id),
    autoContactNumbers: calls.map((_, i) => e164('212', i)),
    conversation,
    threadCount: SEED.otherThreads + 1,
  };
}

// ---------- the bare operations ----------

/** The benchmark's own document client: configured like lambdas/shared/aws.ts, counted like the runtime's. */
export function bareClient(endpoint: string) {
  const client = DynamoDBDocumentClient.from(localDynamoClient(endpoint), {
    marshallOptions: { removeUndefinedValues: true },
  });
  const counter = attachTableCallCounter(client.middlewareStack);
  return { client, counter };
}

type Bare = ReturnType<typeof bareClient>['client'];

/** What consumeKeyBudget sends: one conditional ADD on the key's window row (its own key id here). */
function rateLimitUpdate(db: Bare, tenantId: string) {
  const { start } = windowOf(Date.now());
  return db.send(
    new UpdateCommand({
      TableName: TABLE_NAME,
      Key: rateWindowKey(tenantId, 'bench-bare-key', start),
      UpdateExpression: 'ADD #count :one SET #ttl = if_not_exists(#ttl, :expires)',
      ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit',
      ExpressionAttributeNames: { '#count': 'count', '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: {
        ':one': 1,
        ':limit': 1_000_000,
        ':expires': Math.ceil((start + WINDOW_MS) / 1000) + 120,
      },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
}

/** The contact list's key condition, as `listContacts` builds it. */

/**
 * A write that gives a contact a number reads the number's consent ledger row first (`ledgerSnapshot`), strongly
 * consistent.
 */
const ledgerRead = (db: DynamoDBDocumentClient, tenantId: string, number: string) =>
  db.send(new GetCommand({ TableName: TABLE_NAME, Key: consentKey(tenantId, number), ConsistentRead: true }));

/** ... and checks it unchanged in its transaction (a number nobody texted has no row). */
const ledgerUnchanged = (tenantId: string, number: string) => ({
  ConditionCheck: {
    TableName: TABLE_NAME,
    Key: consentKey(tenantId, number),
    ConditionExpression: 'attribute_not_exists(pk)',
  },
});

const page = (query: Omit<QueryCommandInput, 'TableName'>, limit = 50): QueryCommandInput => ({
  TableName: TABLE_NAME,
  ScanIndexForward: false,
  Limit: limit + 1,
  ...query,
});

function newContact(tenantId: string, number: string, name: string): Contact {
  const now = new Date();
  return {
    id: uuidv7(now),
    tenantId,
    displayName: name,
    phoneNumber: number,
    company: null,
    tag: null,
    notes: null,
    createdByAgentId: null,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
    normalizedNumber: number,
    isAutoCreated: false,
    source: 'manual',
    consentStatus: 'unknown',
    consentSource: null,
    consentAt: null,
    consentNote: null,
    externalId: null,
    customFields: null,
    version: 1,
  };
}

// ---------- the endpoints ----------

type RequestSpec = { method: string; path: string; body?: unknown; headers?: Record<string, string> };

export type Endpoint = {
  name: string;
  write: boolean;
  /** Sent with the sender organization's key (see Fixture.senderKey). */
  asSender?: boolean;
  request: (i: number) => RequestSpec;
  expect: number[];
  onResponse?: (response: HttpResponse, i: number) => void;
  /** The table operations one request needs, sent directly, in the same order and overlap. */
  bare: (i: number) => Promise<unknown>;
};

export function endpoints(fixture: Fixture, db: Bare): Endpoint[] {
  const t = fixture.tenantId;
  const created: string[] = [];
  const bareCreated: { id: string; number: string }[] = [];
  const pick = <T>(list: T[], i: number) => list[i % list.length];
  const parallelWithLimit = (read: () => Promise<unknown>) => Promise.all([read(), rateLimitUpdate(db, t)]);
  const bareTenant = fixture.bareTenantId;
  let postNumber = 0;
  let bareNumber = 0;

  return [
    {
      name: 'GET /me',
      write: false,
      request: () => ({ method: 'GET', path: '/me' }),
      expect: [200],
      bare: () => rateLimitUpdate(db, t),
    },
    {
      name: 'GET /calls',
      write: false,
      request: () => ({ method: 'GET', path: '/calls' }),
      expect: [200],
      bare: () =>
        parallelWithLimit(() =>
          db.send(
            new QueryCommand(
              page({
                KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :lower AND :upper',
                ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
                ExpressionAttributeValues: { ':pk': tenantPk(t), ':lower': PREFIX.call, ':upper': `${PREFIX.call}~` },
              }),
            ),
          ),
        ),
    },
    {
      name: 'GET /calls/{id}',
      write: false,
      request: (i) => ({ method: 'GET', path: `/calls/${pick(fixture.callIds, i)}` }),
      expect: [200],
      bare: (i) =>
        parallelWithLimit(() =>
          db.send(
            new GetCommand({
              TableName: TABLE_NAME,
              Key: { pk: tenantPk(t), sk: `${PREFIX.call}${pick(fixture.callIds, i)}` },
            }),
          ),
        ),
    },
    {
      name: 'GET /contacts',
      write: false,
      request: () => ({ method: 'GET', path: '/contacts' }),
      expect: [200],
      // One Query of the directory index: each contact carries its number's consent.
      bare: () =>
        parallelWithLimit(() =>
          db.send(
            new QueryCommand(
              page({
                IndexName: GSIS.directory.indexName,
                KeyConditionExpression: '#pk = :pk',
                ExpressionAttributeNames: { '#pk': GSIS.directory.partitionKey },
                ExpressionAttributeValues: { ':pk': tenantScopedPk(t, PREFIX.contacts) },
              }),
            ),
          ),
        ),
    },
    {
      name: 'GET /contacts/{id}',
      write: false,
      request: (i) => ({ method: 'GET', path: `/contacts/${pick(fixture.namedContactIds, i)}` }),
      expect: [200],
      bare: (i) =>
        parallelWithLimit(() =>
          db.send(new GetCommand({ TableName: TABLE_NAME, Key: contactKey(t, pick(fixture.namedContactIds, i)) })),
        ),
    },
    {
      name: 'GET /messages',
      write: false,
      request: () => ({ method: 'GET', path: '/messages' }),
      expect: [200],
      // The index holds the threads' keys; the page's threads are read by key.
      bare: () =>
        parallelWithLimit(async () => {
          const { Items } = await db.send(
            new QueryCommand({
              TableName: TABLE_NAME,
              IndexName: GSIS.gsi2.indexName,
              KeyConditionExpression: '#pk = :pk',
              ExpressionAttributeNames: { '#pk': GSIS.gsi2.partitionKey },
              ExpressionAttributeValues: { ':pk': tenantScopedPk(t, PREFIX.threadsByActivity) },
              ScanIndexForward: false,
              Limit: 51,
            }),
          );
          const keys = (Items ?? []).slice(0, 50).map((item) => ({ pk: item.pk, sk: item.sk }));
          return db.send(new BatchGetCommand({ RequestItems: { [TABLE_NAME]: { Keys: keys } } }));
        }),
    },
    {
      name: 'GET /messages/{counterpart}',
      write: false,
      request: () => ({ method: 'GET', path: `/messages/${encodeURIComponent(fixture.conversation)}` }),
      expect: [200],
      bare: () =>
        parallelWithLimit(() =>
          db.send(
            new QueryCommand(
              page({
                IndexName: GSIS.gsi1.indexName,
                KeyConditionExpression: '#pk = :pk',
                ExpressionAttributeNames: { '#pk': GSIS.gsi1.partitionKey },
                ExpressionAttributeValues: { ':pk': tenantScopedPk(t, PREFIX.conversation, fixture.conversation) },
              }),
            ),
          ),
        ),
    },
    {
      name: 'POST /contacts',
      write: true,
      request: () => {
        postNumber += 1;
        return {
          method: 'POST',
          path: '/contacts',
          body: { displayName: `Load ${postNumber}`, phoneNumber: e164('646', postNumber) },
        };
      },
      expect: [201],
      onResponse: (response) => created.push((JSON.parse(response.body) as { contact: { id: string } }).contact.id),
      bare: async () => {
        await rateLimitUpdate(db, t);
        bareNumber += 1;
        const contact = newContact(bareTenant, e164('917', bareNumber), `Bare ${bareNumber}`);
        bareCreated.push({ id: contact.id, number: contact.phoneNumber });
        await ledgerRead(db, bareTenant, contact.phoneNumber);
        await db.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Put: {
                  TableName: TABLE_NAME,
                  Item: {
                    ...numberClaimKey(bareTenant, contact.phoneNumber),
                    type: 'numberClaim',
                    contactId: contact.id,
                    named: true,
                  },
                  ConditionExpression: 'attribute_not_exists(pk)',
                  ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
                },
              },
              {
                Put: {
                  TableName: TABLE_NAME,
                  Item: contactItem(contact),
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
              ledgerUnchanged(bareTenant, contact.phoneNumber),
              // The contact's search entries, written with it as the service does.
              ...insertIndex(bareTenant, contact.id, contact).writes,
            ],
          }),
        );
      },
    },
    {
      name: 'PATCH /contacts/{id}',
      write: true,
      request: (i) => ({
        method: 'PATCH',
        path: `/contacts/${pick(fixture.namedContactIds, i)}`,
        body: { notes: `Patched ${i}` },
      }),
      expect: [200],
      bare: async (i) => {
        await rateLimitUpdate(db, t);
        const { Item } = await db.send(
          new GetCommand({ TableName: TABLE_NAME, Key: contactKey(t, pick(fixture.namedContactIds, i)) }),
        );
        await db.send(
          new UpdateCommand({
            TableName: TABLE_NAME,
            Key: contactKey(t, pick(fixture.namedContactIds, i)),
            UpdateExpression: 'SET #notes = :notes, #updatedAt = :updatedAt',
            ConditionExpression: 'attribute_exists(pk) AND #normalizedNumber = :currentNumber',
            ExpressionAttributeNames: {
              '#notes': 'notes',
              '#updatedAt': 'updatedAt',
              '#normalizedNumber': 'normalizedNumber',
            },
            ExpressionAttributeValues: {
              ':notes': `Bare ${i}`,
              ':updatedAt': new Date().toISOString(),
              ':currentNumber': Item?.normalizedNumber,
            },
          }),
        );
      },
    },
    {
      name: 'DELETE /contacts/{id}',
      write: true,
      request: (i) => ({ method: 'DELETE', path: `/contacts/${created[i]}` }),
      expect: [204],
      bare: async (i) => {
        await rateLimitUpdate(db, t);
        const target = bareCreated[i];
        const { Item } = await db.send(
          new GetCommand({ TableName: TABLE_NAME, Key: contactKey(bareTenant, target.id) }),
        );
        await db.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Delete: {
                  TableName: TABLE_NAME,
                  Key: contactKey(bareTenant, target.id),
                  ConditionExpression: 'attribute_exists(pk) AND normalizedNumber = :number',
                  ExpressionAttributeValues: { ':number': Item?.normalizedNumber },
                },
              },
              {
                Delete: {
                  TableName: TABLE_NAME,
                  Key: numberClaimKey(bareTenant, target.number),
                  ConditionExpression: 'contactId = :contactId',
                  ExpressionAttributeValues: { ':contactId': target.id },
                },
              },
              // Its search entries go with it, as the service deletes them.
              ...(Item
                ? reindex(bareTenant, target.id, indexedEntriesOf(Item, fromItem(Item)), {
                    displayName: '',
                    company: null,
                    normalizedNumber: null,
                  }).writes
                : []),
            ],
          }),
        );
      },
    },
    {
      name: 'POST /messages',
      write: true,
      asSender: true,
      request: (i) => ({
        method: 'POST',
        path: '/messages',
        body: { to: e164('702', i), body: 'Your appointment is confirmed for 3 pm.' },
      }),
      expect: [201],
      bare: async (i) => {
        await rateLimitUpdate(db, t);
        // The organization row, strongly consistent: a billing change bites at the next send.
        await db.send(new GetCommand({ TableName: TABLE_NAME, Key: tenantKey(bareTenant), ConsistentRead: true }));
        const to = e164('818', i);
        // The thread.
        await db.send(new GetCommand({ TableName: TABLE_NAME, Key: threadKey(bareTenant, to) }));
        const now = new Date();
        const message: Message = {
          id: uuidv7(now),
          tenantId: bareTenant,
          direction: 'outbound',
          fromNumber: '+15005550007',
          toNumber: to,
          counterpartNumber: to,
          body: 'Your appointment is confirmed for 3 pm.',
          status: 'queued',
          messageSid: '',
          agentId: null,
          isRead: true,
          createdAt: now.toISOString(),
        };
        const shard = i % SPEND_SHARDS;
        await db.send(
          new TransactWriteCommand({
            TransactItems: [
              notOptedOutCheck(bareTenant, to),
              chargeShard(bareTenant, shard, 1, { spendingLimitCents: null, version: 0 }),
              {
                Put: {
                  TableName: TABLE_NAME,
                  Item: messageItem(message, { segments: 1, costCents: 1, spendShard: shard }),
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
              threadUpdateFor(bareTenant, message, true, false),
            ],
          }),
        );
        const sid = `SM${randomBytes(16).toString('hex')}`;
        await db.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: TABLE_NAME,
                  Key: messageKey(bareTenant, message.id),
                  UpdateExpression: 'SET #sid = :sid REMOVE #gsi2pk, #gsi2sk',
                  ConditionExpression: 'attribute_exists(pk)',
                  ExpressionAttributeNames: {
                    '#sid': 'messageSid',
                    '#gsi2pk': GSIS.gsi2.partitionKey,
                    '#gsi2sk': GSIS.gsi2.sortKey,
                  },
                  ExpressionAttributeValues: { ':sid': sid },
                },
              },
              {
                Put: {
                  TableName: TABLE_NAME,
                  Item: {
                    ...messageSidKey(bareTenant, sid),
                    type: 'messageSid',
                    messageId: message.id,
                    counterpartNumber: to,
                  },
                  ConditionExpression: 'attribute_not_exists(pk)',
                },
              },
            ],
          }),
        );
      },
    },
  ];
}

async function send(client: HttpClient, key: string, spec: RequestSpec): Promise<HttpResponse> {
  return client.request(
    spec.method,
    spec.path,
    { Authorization: `Bearer ${key}`, ...spec.headers },
    spec.body === undefined ? undefined : JSON.stringify(spec.body),
  );
}

// ---------- 2. round trips ----------

export type RoundTripCase = {
  name: string;
  commands: Record<string, number>;
  roundTrips: number;
  capacityUnits: number;
  status: number;
  /** The table calls the design allows (the rate-limit update included); undefined: reported only. */
  target?: Record<string, number>;
  holds?: boolean;
  note?: string;
};

type CaseSpec = {
  name: string;
  /** Evaluated before the counters are reset (a cursor needs page 1 first). */
  request: () => Promise<RequestSpec> | RequestSpec;
  key?: 'cold' | 'sender';
  target?: Record<string, number>;
  note?: string;
};

const READ_ONE = { GetItem: 1, UpdateItem: 1 };
const QUERY_ONE = { Query: 1, UpdateItem: 1 };
/** A contact carries its number's consent: a contact read is one GetItem, a page one Query. */
const CONTACT_ONE = READ_ONE;
const CONTACTS_PAGE = QUERY_ONE;

const sameCounts = (a: Record<string, number>, b: Record<string, number>) => {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((k) => (a[k] ?? 0) === (b[k] ?? 0));
};

/** The requests of sections 2 and 9: every route, its cursors, filters and outcomes. */
function roundTripCases(client: HttpClient, fixture: Fixture, numbers: number): CaseSpec[] {
  const cursorOf = async (path: string) => {
    const response = await send(client, fixture.key, { method: 'GET', path });
    return (JSON.parse(response.body) as { nextCursor: string | null }).nextCursor;
  };
  const conversation = encodeURIComponent(fixture.conversation);
  return [
    {
      name: 'GET /me, first request of a key (authorizer cache miss)',
      key: 'cold',
      request: () => ({ method: 'GET', path: '/me' }),
      note: 'authorizer: key by hash + organization',
    },
    {
      name: 'GET /me',
      request: () => ({ method: 'GET', path: '/me' }),
      target: { UpdateItem: 1 },
      note: 'answered from the authorizer context',
    },
    { name: 'GET /calls', request: () => ({ method: 'GET', path: '/calls' }), target: QUERY_ONE },
    {
      name: 'GET /calls, page 2 (cursor)',
      request: async () => ({ method: 'GET', path: `/calls?cursor=${await cursorOf('/calls')}` }),
      target: QUERY_ONE,
    },
    {
      name: 'GET /calls?direction=inbound',
      request: () => ({ method: 'GET', path: '/calls?direction=inbound' }),
      target: QUERY_ONE,
    },
    {
      name: 'GET /calls?since=<1 h ago>',
      request: () => ({
        method: 'GET',
        path: `/calls?since=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`,
      }),
      target: QUERY_ONE,
    },
    {
      name: 'GET /calls/{id}',
      request: () => ({ method: 'GET', path: `/calls/${fixture.callIds[0]}` }),
      target: READ_ONE,
    },
    { name: 'GET /contacts', request: () => ({ method: 'GET', path: '/contacts' }), target: CONTACTS_PAGE },
    {
      name: 'GET /contacts, page 2 (cursor)',
      request: async () => ({ method: 'GET', path: `/contacts?cursor=${await cursorOf('/contacts')}` }),
      target: CONTACTS_PAGE,
    },
    {
      name: 'GET /contacts?includeAutoCreated=false',
      request: () => ({ method: 'GET', path: '/contacts?includeAutoCreated=false' }),
      target: CONTACTS_PAGE,
    },
    {
      name: 'GET /contacts?search=acme',
      request: () => ({ method: 'GET', path: '/contacts?search=acme' }),
      target: { ...CONTACTS_PAGE, BatchGetItem: 1 },
      note: 'the search index: its entries, then the contacts they name',
    },
    {
      name: 'GET /contacts/{id}',
      request: () => ({ method: 'GET', path: `/contacts/${fixture.namedContactIds[0]}` }),
      target: CONTACT_ONE,
    },
    {
      name: 'GET /messages',
      request: () => ({ method: 'GET', path: '/messages' }),
      target: { ...QUERY_ONE, BatchGetItem: 1 },
      note: 'threads by activity: their keys, then the threads',
    },
    {
      name: 'GET /messages/{counterpart}',
      request: () => ({ method: 'GET', path: `/messages/${conversation}` }),
      target: QUERY_ONE,
    },
    {
      name: 'GET /messages/{counterpart}, page 2 (cursor)',
      request: async () => ({
        method: 'GET',
        path: `/messages/${conversation}?cursor=${await cursorOf(`/messages/${conversation}`)}`,
      }),
      target: QUERY_ONE,
    },
    {
      name: 'POST /contacts (create)',
      request: () => ({
        method: 'POST',
        path: '/contacts',
        body: { displayName: 'Round Trip', phoneNumber: e164('551', 1 + numbers) },
      }),
      target: { GetItem: 1, TransactWriteItems: 1, UpdateItem: 1 },
      note: "its number's consent ledger row, then the create transaction, which checks it unchanged",
    },
    {
      name: 'POST /contacts (adopt an auto-created contact)',
      request: () => ({
        method: 'POST',
        path: '/contacts',
        body: { displayName: 'Adopted', phoneNumber: fixture.autoContactNumbers[numbers > 0 ? 1 : 0] },
      }),
      note: 'the create transaction fails on the claim, then the adoption transaction, then the read of the result',
    },
    {
      name: 'POST /contacts (number taken: 409)',
      request: () => ({
        method: 'POST',
        path: '/contacts',
        body: { displayName: 'Taken', phoneNumber: e164('310', 1) },
      }),
    },
    {
      name: 'POST /contacts with Idempotency-Key',
      request: () => ({
        method: 'POST',
        path: '/contacts',
        body: { displayName: 'Idempotent', phoneNumber: e164('551', 2 + numbers) },
        headers: { 'Idempotency-Key': `bench-${randomBytes(6).toString('hex')}` },
      }),
      note: 'Powertools idempotency: in-progress record, then the stored response',
    },
    {
      name: 'PATCH /contacts/{id}',
      request: () => ({
        method: 'PATCH',
        path: `/contacts/${fixture.namedContactIds[1]}`,
        body: { notes: 'round trip' },
      }),
    },
    {
      name: 'DELETE /contacts/{id}',
      request: async () => {
        const response = await send(client, fixture.key, {
          method: 'POST',
          path: '/contacts',
          body: { displayName: 'To Delete', phoneNumber: e164('551', 3 + numbers) },
        });
        return {
          method: 'DELETE',
          path: `/contacts/${(JSON.parse(response.body) as { contact: { id: string } }).contact.id}`,
        };
      },
    },
    {
      name: 'POST /messages',
      key: 'sender',
      request: () => ({
        method: 'POST',
        path: '/messages',
        body: { to: e164('551', 4 + numbers), body: 'Round trip' },
      }),
    },
    { name: 'GET /openapi.json', request: () => ({ method: 'GET', path: '/openapi.json' }), target: {} },
  ];
}

const keyOf = (fixture: Fixture, spec: CaseSpec) =>
  spec.key === 'cold' ? fixture.coldKey : spec.key === 'sender' ? fixture.senderKey : fixture.key;

/**
 * Sends each case once, one at a time, with the meters reset before it (after its own preparing
 * requests) and read after it. The authorizer cache is warm for the main and the sender key, as
 * API Gateway's would be.
 */
async function measureCases<T>(
  baseUrl: string,
  fixture: Fixture,
  numbers: number,
  meters: { reset: () => Promise<unknown> },
  record: (spec: CaseSpec, response: HttpResponse, request: RequestSpec, elapsedMs: number) => Promise<T>,
  headers: Record<string, string> = {},
): Promise<T[]> {
  const client = httpClient(baseUrl, 1);
  const results: T[] = [];
  try {
    await send(client, fixture.key, { method: 'GET', path: '/me' });
    await send(client, fixture.senderKey, { method: 'GET', path: '/me' });
    for (const spec of roundTripCases(client, fixture, numbers)) {
      const request = await spec.request();
      await meters.reset();
      const started = performance.now();
      const response = await send(client, keyOf(fixture, spec), {
        ...request,
        headers: { ...request.headers, ...headers },
      });
      results.push(await record(spec, response, request, performance.now() - started));
    }
  } finally {
    client.close();
  }
  return results;
}

export function measureRoundTrips(runtime: RuntimeProcess, fixture: Fixture): Promise<RoundTripCase[]> {
  return measureCases(runtime.baseUrl, fixture, 0, runtime, async (spec, response) => {
    const tally: CallTally = await runtime.stats();
    return {
      name: spec.name,
      commands: tally.commands,
      roundTrips: tally.roundTrips,
      capacityUnits: round(
        Object.values(tally.capacity).reduce((a, b) => a + b, 0),
        1,
      ),
      status: response.status,
      ...(spec.target && {
        target: spec.target,
        holds: response.status < 300 && sameCounts(tally.commands, spec.target),
      }),
      ...(spec.note && { note: spec.note }),
    };
  });
}

// ---------- 9. units as AWS charges them ----------

export type ChargedUnitsCase = {
  name: string;
  status: number;
  /** Read and write request units as AWS charges them (docs/local-engine.md), the table's and its indexes'. */
  readUnits: number;
  writeUnits: number;
  indexWriteUnits: number;
  operations: Record<string, number>;
  /** The request ran the authorizer (its key was not in the cache): a second invocation, its reads counted above. */
  authorizerRan: boolean;
  /**
   * Bytes sent to the client, headers included, as to one that accepts gzip (compressed from
   * 1 KiB, as API Gateway compresses) and as to one that accepts no coding; with the headers API
   * Gateway adds (`API_GATEWAY_HEADER_BYTES`).
   */
  responseBytes: number;
  plainResponseBytes: number;
  /**
   * CloudWatch Logs bytes (26 a line included) of the access-log line, and of the lines the functions wrote at the
   * stack's log level (INFO).
   */
  accessLogBytes: number;
  functionLogBytes: number;
};

/**
 * Headers API Gateway adds to the service's own (`x-amz-apigw-id`, and `X-Amzn-Trace-Id` with
 * tracing on), which the local runtime does not send: their documented shapes, in bytes.
 */
export const API_GATEWAY_HEADER_BYTES =
  Buffer.byteLength('x-amz-apigw-id: Yx3kLHbToAMEbZw=\r\n') +
  Buffer.byteLength(
    'X-Amzn-Trace-Id: ' +
      'Root=1-6746f0a1-4c7d1e2b9a8f3c5d6e7f8091;Parent=5e6f708192a3b4c5;Sampled=0;Lineage=1:0a1b2c3d:0\r\n',
  );

/**
 * The lines a function wrote for one request: its JSON log lines carrying the request's id, and its embedded metrics.
 */
function functionLines(lines: string[], requestId: string): string[] {
  return lines.filter((line) => {
    if (line.startsWith('{"_aws"')) return !/"Name":"(Webhook|TextsSettled)/.test(line);
    return line.startsWith('{') && line.includes(`"requestId":"${requestId}"`);
  });
}

/**
 * A case's route, as API Gateway's `$context.resourcePath` names it: `GET /contacts/{id}, page 2` ->
 * `/api/v1/contacts/{id}`.
 */
const resourcePathOf = (name: string) => `${API_PREFIX}${name.split(' ')[1].replace(/[?,].*$/, '')}`;

/**
 * The same requests as section 2, through a runtime on the limits engine, each costed from the
 * engine's meters: every requested key of a batch read charged found or not, a Query per 4 KB it
 * examined, transactional reads and writes twice, every index an item enters, leaves or changes in.
 * Each request accepts gzip, as Node's fetch and browsers do, and the runtime runs at the stack's
 * log level: its bytes out and its log bytes are counted too.
 */
export function measureChargedUnits(
  runtime: RuntimeProcess & { limits: LimitsMeters },
  fixture: Fixture,
): Promise<ChargedUnitsCase[]> {
  const meters = {
    reset: async () => {
      await runtime.limits.reset();
    },
  };
  // Numbers of its own: this runs after section 2 on the same data (a create of a number section 2 took would answer
  // 409).
  return measureCases(
    runtime.baseUrl,
    fixture,
    100,
    meters,
    async (spec, response, request, elapsedMs) => {
      const stats = await runtime.limits.stats();
      const indexWriteUnits = Object.values(stats.tables).reduce(
        (sum, t) => sum + Object.values(t.indexes).reduce((a, i) => a + i.writeUnits, 0),
        0,
      );
      const requestId = String(response.headers['x-amzn-requestid']);
      const lines = functionLines(await runtime.linesUntil(requestId), requestId);
      const encoding = response.headers['content-encoding'];
      const plainBodyBytes = Buffer.byteLength(response.body, 'utf8');
      const plainWireBytes =
        response.wireBytes -
        response.bodyBytes +
        plainBodyBytes -
        (encoding ? Buffer.byteLength(`Content-Encoding: ${encoding}\r\n`) : 0);
      const authenticated = spec.name !== 'GET /openapi.json';
      return {
        name: spec.name,
        status: response.status,
        readUnits: round(
          Object.values(stats.operations).reduce((sum, o) => sum + o.readUnits, 0),
          1,
        ),
        writeUnits: round(
          Object.values(stats.operations).reduce((sum, o) => sum + o.writeUnits, 0),
          1,
        ),
        indexWriteUnits: round(indexWriteUnits, 1),
        operations: Object.fromEntries(Object.entries(stats.operations).map(([op, m]) => [op, m.requests])),
        authorizerRan: spec.key === 'cold',
        responseBytes: response.wireBytes + API_GATEWAY_HEADER_BYTES,
        plainResponseBytes: plainWireBytes + API_GATEWAY_HEADER_BYTES,
        accessLogBytes: logEventBytes(
          accessLogLine({
            requestId,
            httpMethod: request.method,
            resourcePath: resourcePathOf(spec.name),
            path: `/${STAGE_OF_RECORD}${API_PREFIX}${request.path.split('?')[0]}`,
            status: response.status,
            responseLength: response.bodyBytes,
            latencyMs: elapsedMs,
            authorizerRan: spec.key === 'cold',
            // A key id is a UUID, as long as the organization's.
            ...(authenticated && { tenantId: fixture.tenantId, keyId: fixture.tenantId }),
          }),
        ),
        functionLogBytes: lines.reduce((sum, line) => sum + logEventBytes(line), 0),
      };
    },
    { 'Accept-Encoding': 'gzip' },
  );
}

/** The stage name in an access line's path (`$context.path` starts with it on the execute-api URL). */
const STAGE_OF_RECORD = 'prod';

// ---------- 3. latency ----------

export type LatencyResult = {
  endpoint: string;
  requests: number;
  failures: number;
  firstFailures: string[];
  endpointMs: Distribution;
  bareMs: Distribution;
  bareFailures: number;
  p50Ratio: number;
  p99Ratio: number;
  holds: boolean;
  endpointRps: number;
  /** Table calls per request under load, counted in the runtime and on the bare client. */
  endpointCallsPerRequest: Record<string, number>;
  bareCallsPerRequest: Record<string, number>;
  /** Runtime CPU (user + system) per request: the work a function does beyond waiting. */
  runtimeCpuMsPerRequest: number;
  /** This process's CPU per bare operation set (the SDK's own work for the same calls). */
  bareCpuMsPerRequest: number;
};

export type LatencyOptions = {
  concurrency: number;
  readRequests: number;
  writeRequests: number;
  warmup: number;
  chunks: number;
};

const perRequest = (commands: Record<string, number>, n: number) =>
  Object.fromEntries(Object.entries(commands).map(([k, v]) => [k, round(v / n, 2)]));

const addCounts = (into: Record<string, number>, from: Record<string, number>) => {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
};

export async function measureLatency(
  runtime: RuntimeProcess,
  fixture: Fixture,
  bare: ReturnType<typeof bareClient>,
  options: LatencyOptions,
  progress: (line: string) => void,
): Promise<LatencyResult[]> {
  const client = httpClient(runtime.baseUrl, options.concurrency);
  const results: LatencyResult[] = [];
  try {
    for (const endpoint of endpoints(fixture, bare.client)) {
      const total = endpoint.write ? options.writeRequests : options.readRequests;
      const http = async (i: number) => {
        const response = await send(client, endpoint.asSender ? fixture.senderKey : fixture.key, endpoint.request(i));
        if (!endpoint.expect.includes(response.status))
          throw new Error(`${endpoint.name}: HTTP ${response.status} ${response.body.slice(0, 200)}`);
        endpoint.onResponse?.(response, i);
      };
      // Warm-up (JIT, connections, caches) on both sides, not recorded.
      await runLoad(options.warmup, options.concurrency, http, 0);
      await runLoad(options.warmup, options.concurrency, endpoint.bare, 0);

      const endpointSamples: number[] = [];
      const bareSamples: number[] = [];
      const endpointCalls: Record<string, number> = {};
      const bareCalls: Record<string, number> = {};
      const firstFailures: string[] = [];
      let failures = 0;
      let bareFailures = 0;
      let endpointWallMs = 0;
      let cpuMicros = 0;
      let bareCpuMicros = 0;
      const chunk = Math.ceil(total / options.chunks);
      for (let done = 0; done < total; done += chunk) {
        const n = Math.min(chunk, total - done);
        const offset = options.warmup + done;
        const before = await runtime.reset();
        const loaded = await runLoad(n, options.concurrency, http, offset);
        const after = await runtime.reset();
        addCounts(endpointCalls, after.commands);
        cpuMicros += after.cpuMicros.user + after.cpuMicros.system - before.cpuMicros.user - before.cpuMicros.system;
        endpointSamples.push(...loaded.samples);
        endpointWallMs += loaded.wallMs;
        failures += loaded.failures;
        firstFailures.push(...loaded.firstFailures.slice(0, 3 - firstFailures.length));

        bare.counter.reset();
        const bareCpu = process.cpuUsage();
        const direct = await runLoad(n, options.concurrency, endpoint.bare, offset);
        const bareUsed = process.cpuUsage(bareCpu);
        bareCpuMicros += bareUsed.user + bareUsed.system;
        addCounts(bareCalls, bare.counter.reset().commands);
        bareSamples.push(...direct.samples);
        bareFailures += direct.failures;
        if (direct.firstFailures.length > 0 && firstFailures.length < 3)
          firstFailures.push(`bare: ${direct.firstFailures[0]}`);
      }
      const endpointMs = distribution(endpointSamples);
      const bareMs = distribution(bareSamples);
      const result: LatencyResult = {
        endpoint: endpoint.name,
        requests: total,
        failures,
        firstFailures,
        endpointMs,
        bareMs,
        bareFailures,
        p50Ratio: ratio(endpointMs.p50, bareMs.p50),
        p99Ratio: ratio(endpointMs.p99, bareMs.p99),
        holds: failures === 0 && endpointMs.p50 <= 1.5 * bareMs.p50,
        endpointRps: round((endpointSamples.length / endpointWallMs) * 1000, 0),
        endpointCallsPerRequest: perRequest(endpointCalls, total),
        bareCallsPerRequest: perRequest(bareCalls, total),
        runtimeCpuMsPerRequest: round(cpuMicros / 1000 / total, 2),
        bareCpuMsPerRequest: round(bareCpuMicros / 1000 / total, 2),
      };
      results.push(result);
      progress(
        `  ${endpoint.name.padEnd(28)} p50 ${endpointMs.p50} ms vs bare ${bareMs.p50} ms (x${result.p50Ratio}), ` +
          `p99 ${endpointMs.p99} vs ${bareMs.p99} ms${failures ? `, ${failures} failed: ${firstFailures[0]}` : ''}`,
      );
    }
  } finally {
    client.close();
  }
  return results;
}
