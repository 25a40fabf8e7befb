import { createClient, ContactImportError, verifyDelivery, type ImportContact } from '../../clients/typescript/src';
import type { OpenApiDocument } from '../../local/openapi-validator';
import type { ApiResult } from './support/api';
import { contractSuite } from './support/contract';
import { unknownId, useLocalRuntime } from './support/e2e';
import { pollUntil } from './support/poll';
import { startReceiver, type Received, type Receiver } from './support/receiver';
import { receiveTexts } from './support/texts';
import { webhookEventChecker } from './support/webhook-events';

/**
 * A directory a CRM can sync (issue 32), over HTTP against the local runtime: POST /contacts/batch
 * and its replay, GET /contacts?externalId= and ?updatedSince=, the contact.* and consent.changed
 * events at a receiver that checks every signature (exactly one per change and per STOP, only to
 * the endpoint that subscribed), and the typed client's import through lost answers, a 429 and a
 * resume. Every answer is checked against the served OpenAPI document (support/api.ts).
 */
const e2e = useLocalRuntime({ args: ['--allow-http-webhooks', '--webhook-backoff-ms', '20'] });

const ORG_NUMBER = '+15005550240';
let key: string;
/** A key of its own for the contract suite, so its requests leave the others' rate limit alone. */
let contractKey: string;
let tenantId: string;
let receiver: Receiver;
let checkEvent: (type: string, body: unknown) => void;
let directorySecret: string;

type Event = {
  id: string;
  type: string;
  sequence: number;
  data: {
    contact?: { id: string; version?: number; externalId?: string | null; phoneNumber?: string | null };
    consent?: { number: string };
    previousAttributes?: Record<string, unknown>;
    contactId?: string | null;
    externalId?: string | null;
    previousStatus?: string;
    version?: number | null;
  };
  request?: { id: string; idempotencyKey: string | null } | null;
};
const eventOf = (request: Received) => JSON.parse(request.body) as Event;

let nextNumber = 4155557000;
const newNumber = () => `+1${(nextNumber += 1)}`;

beforeAll(async () => {
  const admin = e2e.runtime.admin;
  receiver = await startReceiver();
  checkEvent = await webhookEventChecker(e2e.runtime.baseUrl);
  const { tenant } = await admin('tenant', 'create', '--name', 'CRM Sync Org', '--number', ORG_NUMBER);
  tenantId = tenant.id;
  await admin('tenant', 'update', tenantId, '--approve-host', '127.0.0.1');
  const [created, , minted, mintedForContract] = await Promise.all([
    admin(
      'webhook',
      'add',
      '--tenant',
      tenantId,
      '--url',
      receiver.url('/directory'),
      '--events',
      'contact.created,contact.updated,contact.deleted,consent.changed',
    ),
    // Registered without events: the contract's three, never a contact or consent event.
    admin('webhook', 'add', '--tenant', tenantId, '--url', receiver.url('/defaults')),
    admin('key', 'create', '--tenant', tenantId),
    admin('key', 'create', '--tenant', tenantId),
  ]);
  directorySecret = created.secret;
  key = minted.key;
  contractKey = mintedForContract.key;
}, 120_000);

afterAll(() => receiver?.close());

const batch = (contacts: unknown[], headers: Record<string, string> = {}) =>
  e2e.api.request('POST', '/contacts/batch', { key, json: { contacts }, headers });

describe('POST /contacts/batch over HTTP', () => {
  it('answers each item of a mixed batch, counts once against the key, and a replay with the same key answers the same', async () => {
    // Prepare: two contacts of the CRM already in the directory
    const existing = await e2e.api.post('/contacts', key, {
      displayName: 'Existing',
      phoneNumber: newNumber(),
      externalId: 'crm-existing',
    });
    const holder = await e2e.api.post('/contacts', key, {
      displayName: 'Holder',
      phoneNumber: newNumber(),
      externalId: 'crm-holder',
    });
    const items = [
      { displayName: 'New', phoneNumber: newNumber(), externalId: 'crm-new' },
      {
        displayName: 'Existing',
        phoneNumber: existing.body.contact.phoneNumber,
        externalId: 'crm-existing',
        tag: 'vip',
      },
      { displayName: 'Another record', phoneNumber: holder.body.contact.phoneNumber, externalId: 'crm-other' },
      { displayName: 'Bad', phoneNumber: 'n/a' },
      { displayName: 'New again', phoneNumber: newNumber(), externalId: 'crm-new' },
    ];

    // Act
    const first = await batch(items, { 'Idempotency-Key': 'sync-run-1' });
    const replay = await batch(items, { 'Idempotency-Key': 'sync-run-1' });
    const again = await batch(items);

    // Assess: every item answered at its index; the replay is the first answer again
    expect(first.status).toBe(200);
    expect(first.body.results.map((r: { status: string }) => r.status)).toEqual([
      'created',
      'updated',
      'conflict',
      'invalid',
      'invalid',
    ]);
    expect(first.body.results[1].contactId).toBe(existing.body.contact.id);
    expect(first.body.results[2]).toMatchObject({
      contactId: holder.body.contact.id,
      code: 'contact_conflict',
      error: expect.stringMatching(/^contacts\[2\]\.phoneNumber: /),
    });
    expect(first.body.results[3]).toMatchObject({
      code: 'validation_failed',
      error: 'contacts[3].phoneNumber: must be an E.164 phone number such as +14155550123',
    });
    expect(first.body.results[4].error).toBe(
      'contacts[4].externalId: repeats contacts[0] (a batch names each external id once)',
    );
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    // Sent again without the key, the same items change nothing.
    expect(again.body.results.slice(0, 3).map((r: { status: string }) => r.status)).toEqual([
      'unchanged',
      'unchanged',
      'conflict',
    ]);
    expect(Number(replay.headers.get('ratelimit-remaining')) - Number(again.headers.get('ratelimit-remaining'))).toBe(
      1,
    );
  });

  it('finds a contact by external id and follows the feed of changes with its tombstones', async () => {
    // Prepare
    const since = new Date(Date.now() - 1).toISOString();
    const { body } = await batch([
      { displayName: 'Feed One', phoneNumber: newNumber(), externalId: 'feed-1', customFields: { stage: 'lead' } },
      { displayName: 'Feed Two', phoneNumber: newNumber(), externalId: 'feed-2' },
    ]);
    const [one, two] = body.results.map((r: { contactId: string }) => r.contactId);
    await e2e.api.delete(`/contacts/${two}`, key);

    // Act
    const byExternalId = await e2e.api.get('/contacts?externalId=feed-1', key);
    const feed = await e2e.api.get(`/contacts?updatedSince=${encodeURIComponent(since)}&includeDeleted=true`, key);
    const refused = await e2e.api.get('/contacts?includeDeleted=true', key);

    // Assess
    expect(byExternalId.body).toMatchObject({
      contacts: [{ id: one, externalId: 'feed-1', customFields: { stage: 'lead' } }],
      nextCursor: null,
    });
    expect(feed.body.contacts.map((c: { id: string }) => c.id)).toEqual([one]);
    expect(feed.body.deletedContacts).toEqual([
      { id: two, deletedAt: expect.any(String), externalId: 'feed-2', phoneNumber: expect.any(String), version: 2 },
    ]);
    expect([refused.status, refused.body.error]).toEqual([400, 'includeDeleted: applies only with updatedSince']);
  });

  it('says when the feed cannot answer (410 at 31 days), and hands on a watermark a next walk starts from', async () => {
    // Prepare
    const daysAgo = (days: number) => encodeURIComponent(new Date(Date.now() - days * 24 * 3600 * 1000).toISOString());
    const { body } = await batch([{ displayName: 'Mirrored', phoneNumber: newNumber(), externalId: 'mirror-1' }]);
    const mirrored = body.results[0].contactId as string;

    // Act: walks from 31 and 29 days back; a change after the second; a walk from its nextUpdatedSince
    const at31 = await e2e.api.get(`/contacts?updatedSince=${daysAgo(31)}&includeDeleted=true`, key);
    const at29 = await e2e.api.get(`/contacts?updatedSince=${daysAgo(29)}&includeDeleted=true&limit=100`, key);
    // The mark a full resync takes before its walk (docs/api.md): an empty last page, the server's watermark.
    const mark = await e2e.api.get('/contacts?updatedSince=2100-01-01T00:00:00Z&limit=1', key);
    await e2e.api.patch(`/contacts/${mirrored}`, key, { tag: 'after the walk' });
    const next = await e2e.api.get(
      `/contacts?updatedSince=${encodeURIComponent(at29.body.nextUpdatedSince)}&includeDeleted=true&limit=100`,
      key,
    );

    // Assess
    expect(at31.status).toBe(410);
    expect(at31.body).toMatchObject({ code: 'resync_required', oldestUpdatedSince: expect.any(String) });
    expect(Date.parse(at31.body.oldestUpdatedSince)).toBeGreaterThan(Date.now() - 30 * 24 * 3600 * 1000 - 60_000);
    expect(at29.status).toBe(200);
    expect(at29.body.nextCursor).toBeNull();
    expect(mark.body).toMatchObject({ contacts: [], nextCursor: null });
    expect(Date.parse(mark.body.nextUpdatedSince)).toBeGreaterThanOrEqual(Date.parse(at29.body.nextUpdatedSince));
    for (const page of [at29, next, mark]) {
      // The server's Date header has whole seconds: the watermark is at or before it.
      expect(Date.parse(page.body.nextUpdatedSince)).toBeLessThanOrEqual(Date.parse(page.headers.get('date')!));
    }
    expect(next.body.contacts).toContainEqual(expect.objectContaining({ id: mirrored, tag: 'after the walk' }));
  });
});

const batchDelete = (contacts: unknown[], headers: Record<string, string> = {}) =>
  e2e.api.request('POST', '/contacts/batch/delete', { key, json: { contacts }, headers });

describe('POST /contacts/batch/delete over HTTP (issue 38, part 8)', () => {
  it('deletes by id and by external id (deleted three times, not_found once), replays under its key, leaves a tombstone and sends a contact.deleted each', async () => {
    // Prepare
    const since = new Date(Date.now() - 1).toISOString();
    const { body } = await batch(
      ['gone-1', 'gone-2', 'gone-3'].map((externalId) => ({
        displayName: externalId,
        phoneNumber: newNumber(),
        externalId,
      })),
    );
    const [a, b, c] = body.results.map((r: { contactId: string }) => r.contactId);
    const items = [{ id: a }, { externalId: 'gone-2' }, { externalId: 'gone-3' }, { id: unknownId() }];

    // Act
    const first = await batchDelete(items, { 'Idempotency-Key': 'cleanup-run-1' });
    const replay = await batchDelete(items, { 'Idempotency-Key': 'cleanup-run-1' });
    const tooMany = await batchDelete(Array.from({ length: 101 }, () => ({ id: a })));

    // Assess
    expect(first.status).toBe(200);
    expect(first.body.results.map((r: { status: string; contactId: string }) => [r.status, r.contactId])).toEqual([
      ['deleted', a],
      ['deleted', b],
      ['deleted', c],
      ['not_found', items[3].id],
    ]);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect([tooMany.status, tooMany.body.error]).toEqual([
      400,
      'body.contacts: Too big: expected array to have <=100 items',
    ]);
    const feed = await e2e.api.get(`/contacts?updatedSince=${encodeURIComponent(since)}&includeDeleted=true`, key);
    expect(feed.body.deletedContacts.map((gone: { id: string }) => gone.id).sort()).toEqual([a, b, c].sort());
    const deletedEvents = () =>
      receiver
        .received()
        .filter((r) => r.path === '/directory' && eventOf(r).type === 'contact.deleted')
        .filter((r) => [a, b, c].includes(eventOf(r).data.contact!.id));
    await pollUntil('a contact.deleted of each', deletedEvents, (found) => found.length >= 3, 60_000);
    expect(
      deletedEvents()
        .map((r) => eventOf(r).data.contact!.id)
        .sort(),
    ).toEqual([a, b, c].sort());
  }, 90_000);
});

describe('a contract suite generated from the served OpenAPI document (issue 38, part 10)', () => {
  it.each([['/contacts/batch'], ['/contacts/batch/delete']])(
    'POST %s: every generated request is answered as the document says, with a status and a body it lists',
    async (path) => {
      // Prepare: the document as the runtime serves it
      const document = (await (await fetch(`${e2e.runtime.baseUrl}/openapi.json`)).json()) as OpenApiDocument;
      const cases = contractSuite(document, 'POST', path);

      // Act: one at a time; the client checks each answer's status and body against the document (support/api.ts)
      const answers: ApiResult[] = [];
      for (const c of cases) answers.push(await e2e.api.request('POST', path, { key: contractKey, json: c.body }));

      // Assess: a request the document's schema accepts succeeds, one it refuses is a 400; an item the item schema
      // refuses is answered `invalid` at its index, as the document's result says
      const outcome = (status: number) => (status >= 200 && status < 300 ? 'success' : status);
      expect(cases.map((c, i) => [c.name, outcome(answers[i].status)])).toEqual(
        cases.map((c) => [c.name, c.accepted ? 'success' : 400]),
      );
      const items = cases.flatMap((c, i) =>
        c.item?.refused ? [[c.name, answers[i].body.results[c.item.index].status]] : [],
      );
      expect(items.length).toBeGreaterThan(0);
      expect(items).toEqual(items.map(([name]) => [name, 'invalid']));
    },
  );
});

describe('contact.* and consent.changed at a receiver', () => {
  it('delivers exactly one signed event per change of a contact and per STOP, and only to the endpoint that subscribed', async () => {
    // Act: a batch of three, a PATCH, a delete, and two STOPs from the first number (the carrier's time of each)
    const numbers = [newNumber(), newNumber(), newNumber()];
    const { body } = await batch(
      numbers.map((phoneNumber, i) => ({ displayName: `Evented ${i}`, phoneNumber, externalId: `ev-${i}` })),
    );
    const [a, b, c] = body.results.map((r: { contactId: string }) => r.contactId);
    // A CRM's rename of the first contact, with its own Idempotency-Key: the STOPs come after it.
    const renamed = await e2e.api.request('PATCH', `/contacts/${a}`, {
      key,
      json: { displayName: 'Renamed 0' },
      headers: { 'Idempotency-Key': 'crm-write-a' },
    });
    await e2e.api.patch(`/contacts/${b}`, key, { notes: 'called back' });
    await e2e.api.delete(`/contacts/${c}`, key);
    await receiveTexts(e2e.runtime.info, tenantId, [
      { from: numbers[0], to: ORG_NUMBER, body: 'STOP', receivedAt: new Date(Date.now() - 1000) },
    ]);
    await receiveTexts(e2e.runtime.info, tenantId, [
      { from: numbers[0], to: ORG_NUMBER, body: 'STOP', receivedAt: new Date() },
    ]);
    // A last change: its event is routed after every change before it (the stream is read in order),
    // though the sender may deliver them in any order (attempts run concurrently, as on Lambda).
    const marker = (await e2e.api.post('/contacts', key, { displayName: 'Marker', phoneNumber: newNumber() })).body
      .contact.id as string;

    // Assess: every expected event arrives, then nothing more
    const about = (id: string) => (r: Received) =>
      (eventOf(r).data.contact?.id ?? eventOf(r).data.consent?.number) === id;
    const expected = [
      ...[a, b, c].map((id) => ['contact.created', id]),
      ['contact.updated', a],
      ['contact.updated', b],
      ['contact.deleted', c],
    ] as const;
    const atDirectory = () => receiver.received().filter((r) => r.path === '/directory');
    const events = () => new Map(atDirectory().map((r) => [eventOf(r).id, r]));
    const arrived = (found: Map<string, Received>) => {
      const all = [...found.values()];
      const has = (type: string, id: string) => all.some((r) => eventOf(r).type === type && about(id)(r));
      return (
        expected.every(([type, id]) => has(type, id)) &&
        all.filter(about(numbers[0])).length >= 2 &&
        all.some(about(marker))
      );
    };
    await pollUntil('the contact events, both STOPs and the marker', events, arrived, 60_000);
    const delivered = [...events().values()];
    for (const [type, id] of expected)
      expect(delivered.filter((r) => eventOf(r).type === type && about(id)(r))).toHaveLength(1);
    // In the order of the carrier's time of each STOP (deliveries may arrive in any order).
    const atOf = (r: Received) => (eventOf(r).data as { consent?: { at: string } }).consent?.at ?? '';
    const stops = delivered.filter(about(numbers[0])).sort((x, y) => atOf(x).localeCompare(atOf(y)));
    expect(stops.map((r) => eventOf(r).type)).toEqual(['consent.changed', 'consent.changed']);
    expect(stops[1].body).toContain('"status":"opted_out"');
    expect(eventOf(stops[1]).sequence).toBeGreaterThan(eventOf(stops[0]).sequence);
    // The STOPs changed the contact's copy of its consent, which is no contact.updated: the rename is the only one.
    const updatedA = delivered.filter((r) => eventOf(r).type === 'contact.updated' && about(a)(r)).map(eventOf);
    expect(updatedA).toHaveLength(1);
    // It says what changed, and which request changed it (its id is the PATCH's x-amzn-RequestId).
    expect(updatedA[0].data.previousAttributes).toEqual({ displayName: 'Evented 0' });
    expect(updatedA[0].request).toEqual({ id: renamed.headers.get('x-amzn-requestid'), idempotencyKey: 'crm-write-a' });
    expect(updatedA[0].data.contact!.version).toBe(renamed.body.contact.version);
    // Each STOP names the contact holding the number, its external id, what the consent was, and a version above the
    // rename's, so a receiver orders it against contact.* events; the carrier made it, so no request.
    expect(stops.map(eventOf).map(({ data, request }) => ({ ...data, consent: undefined, request }))).toEqual([
      { contactId: a, externalId: 'ev-0', previousStatus: 'unknown', version: expect.any(Number), request: null },
      { contactId: a, externalId: 'ev-0', previousStatus: 'opted_out', version: expect.any(Number), request: null },
    ]);
    expect(eventOf(stops[0]).data.version).toBeGreaterThan(renamed.body.contact.version);
    expect(eventOf(stops[1]).data.version).toBeGreaterThan(eventOf(stops[0]).data.version!);
    // The deletion says what a mirror finds its record by.
    const deleted = delivered
      .map(eventOf)
      .find((event) => event.type === 'contact.deleted' && event.data.contact!.id === c);
    expect(deleted!.data.contact).toMatchObject({ externalId: 'ev-2', phoneNumber: numbers[2] });
    for (const request of delivered) {
      expect(verifyDelivery(request.headers, request.body, directorySecret)).toEqual({ ok: true });
      checkEvent(eventOf(request).type, eventOf(request));
    }
    // The endpoint registered without events got the STOPs' sms.received, and nothing of the directory. Its
    // deliveries are waited for on their own: they may arrive after the directory endpoint's.
    const atDefaults = () =>
      receiver
        .received()
        .filter((r) => r.path === '/defaults')
        .map((r) => eventOf(r).type);
    await pollUntil('both STOPs at the default endpoint', atDefaults, (types) => types.length >= 2, 60_000);
    expect(atDefaults()).toEqual(['sms.received', 'sms.received']);
  }, 120_000);
});

describe('consent gathered anywhere, over HTTP', () => {
  it('an opt-out by email refuses the next send (409), an opt-in needs evidence (400) and reopens sending; both reach a receiver as consent.changed with their source', async () => {
    // Prepare: an organization of its own with an SMS number, a receiver of its consent events, a key
    const admin = e2e.runtime.admin;
    const { tenant } = await admin('tenant', 'create', '--name', 'Consent Org', '--sms-number', '+15005550241');
    await admin('tenant', 'update', tenant.id, '--approve-host', '127.0.0.1');
    const [endpoint, { key: consentKey }] = await Promise.all([
      admin('webhook', 'add', '--tenant', tenant.id, '--url', receiver.url('/consent'), '--events', 'consent.changed'),
      admin('key', 'create', '--tenant', tenant.id),
    ]);
    const number = newNumber();
    const record = (json: unknown, headers: Record<string, string> = {}) =>
      e2e.api.request('POST', '/consent', { key: consentKey, json, headers });
    const send = () => e2e.api.post('/messages', consentKey, { to: number, body: 'Your order shipped' });
    const evidence = {
      statement: 'I agree to receive order updates by text. Reply STOP to end.',
      where: 'https://example.com/checkout',
      collectedAt: new Date(Date.now() + 1000).toISOString(),
    };
    const optIn = { phoneNumber: number, status: 'opted_in', source: 'web_form', evidence };

    // Act
    const optedOut = await record({ phoneNumber: number, status: 'opted_out', source: 'email' });
    const refused = await send();
    const withoutEvidence = await record({ phoneNumber: number, status: 'opted_in', source: 'web_form' });
    const optedIn = await record(optIn, { 'Idempotency-Key': `consent-${number}` });
    const replayed = await record(optIn, { 'Idempotency-Key': `consent-${number}` });
    const sent = await send();
    const shown = await e2e.api.get(`/consent?phoneNumber=${encodeURIComponent(number)}`, consentKey);

    // Assess
    expect([optedOut.status, optedOut.body.consent.status]).toEqual([200, 'opted_out']);
    expect([refused.status, refused.body.code]).toEqual([409, 'recipient_opted_out']);
    expect(withoutEvidence.status).toBe(400);
    expect(withoutEvidence.body.error).toMatch(/^body\.evidence: /);
    expect([optedIn.status, optedIn.body.consent.status]).toEqual([200, 'opted_in']);
    expect([replayed.headers.get('Idempotent-Replayed'), replayed.body]).toEqual(['true', optedIn.body]);
    expect(sent.status).toBe(201);
    expect(shown.body.consent).toMatchObject({
      status: 'opted_in',
      source: 'web_form',
      evidence: { ...evidence, collectedAt: expect.any(String) },
    });
    expect(shown.body.consent.history.map((h: { source: string }) => h.source)).toEqual(['web_form', 'email']);
    const atReceiver = () => receiver.received().filter((r) => r.path === '/consent');
    await pollUntil('both consent events', atReceiver, (found) => found.length >= 2, 60_000);
    const events = atReceiver().map(eventOf) as unknown as { type: string; data: { consent: { source: string } } }[];
    expect(events.map((e) => [e.type, e.data.consent.source]).sort()).toEqual([
      ['consent.changed', 'email'],
      ['consent.changed', 'web_form'],
    ]);
    for (const request of atReceiver()) {
      expect(verifyDelivery(request.headers, request.body, endpoint.secret)).toEqual({ ok: true });
      checkEvent(eventOf(request).type, eventOf(request));
    }
  }, 120_000);
});

describe('the typed client imports', () => {
  const people = (count: number, from: number): ImportContact[] =>
    Array.from({ length: count }, (_, i) => ({
      displayName: `Imported ${from + i}`,
      phoneNumber: `+1628555${String(from + i).padStart(4, '0')}`,
      externalId: `imp-${from + i}`,
    }));

  it('through a lost answer and a 429: every contact once, the lost batch answered by its replay', async () => {
    // Prepare: a network that loses the answer of the second request, and refuses the third once with 429
    let requests = 0;
    const seen: string[] = [];
    const flaky = async (request: Request): Promise<Response> => {
      requests += 1;
      seen.push(request.headers.get('Idempotency-Key')!);
      if (requests === 3)
        return new Response(JSON.stringify({ error: 'Too many requests', code: 'rate_limited' }), {
          status: 429,
          headers: { 'Retry-After': '1', 'Content-Type': 'application/json' },
        });
      const response = await fetch(request);
      if (requests === 2) throw new TypeError('fetch failed: the connection was reset');
      return response;
    };
    const client = createClient({ baseUrl: e2e.runtime.baseUrl, apiKey: key, fetch: flaky });
    const progress: number[] = [];

    // Act: 25 contacts from an async source, as a stream gives them, in batches of 10 (the client's default of 100
    // is the unit tests'; here the batches go over HTTP, and their size is the bench's)
    const source = (async function* () {
      for (const person of people(25, 0)) yield person;
    })();
    const report = await client.contacts.import(source, {
      batchSize: 10,
      onProgress: (p) => progress.push(p.done),
    });

    // Assess
    expect(report.results).toHaveLength(25);
    expect(report.results.map((r) => r.index)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect(report.counts).toEqual({ created: 25 });
    expect(progress).toEqual([10, 20, 25]);
    expect(report.requests).toBe(5);
    // The lost answer's batch went again with its key (and was answered by the replay); the 429 waited and went again
    // too.
    expect(seen[2]).toBe(seen[1]);
    expect(seen[3]).toBe(seen[2]);
    const listed = await e2e.api.get('/contacts?externalId=imp-24', key);
    expect(listed.body.contacts).toHaveLength(1);
  }, 120_000);

  it('stops with where to resume, and resumes there', async () => {
    // Prepare: a network that goes down after the first request
    let requests = 0;
    const down = async (request: Request): Promise<Response> => {
      requests += 1;
      if (requests > 1) throw new TypeError('fetch failed: network is unreachable');
      return fetch(request);
    };
    const contacts = people(15, 1000);
    const failing = createClient({ baseUrl: e2e.runtime.baseUrl, apiKey: key, fetch: down });

    // Act
    const stopped = await failing.contacts
      .import(contacts, { batchSize: 10, maxAttempts: 2 })
      .catch((err: unknown) => err);
    const resumed = await createClient({ baseUrl: e2e.runtime.baseUrl, apiKey: key }).contacts.import(contacts, {
      batchSize: 10,
      startAt: (stopped as ContactImportError).nextIndex,
    });

    // Assess
    expect(stopped).toBeInstanceOf(ContactImportError);
    expect((stopped as ContactImportError).nextIndex).toBe(10);
    expect((stopped as ContactImportError).results).toHaveLength(10);
    expect(resumed.results.map((r) => [r.index, r.status])).toEqual(
      Array.from({ length: 5 }, (_, i) => [10 + i, 'created']),
    );
  }, 120_000);
});
