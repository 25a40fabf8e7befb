import { get as httpGet, type IncomingHttpHeaders } from 'node:http';
import { gunzipSync, inflateSync } from 'node:zlib';
import { createClient } from '../../clients/typescript/src';
import { MINIMUM_COMPRESSION_BYTES } from '../../lambdas/handlers/http/compression';
import { unknownId, useLocalRuntime } from './support/e2e';

/** The contact directory: GET/POST /contacts and GET/PATCH/DELETE /contacts/{id}. */
const e2e = useLocalRuntime();

type Contact = { id: string; phoneNumber: string; displayName: string; version: number; [field: string]: unknown };

let demoKey: string;
/** The auto-created contact of a number an inbound call came from. */
let autoContactId: string;
let other: { key: string; contact: Contact };
/** An organization for page sizes: its 101 contacts would crowd the demo organization's lists. */
let big: { tenantId: string; key: string };

/** A distinct, valid number per call, so tests never collide on the one-contact-per-number rule. */
let nextNumber = 4155550300;
const newNumber = () => `+1${(nextNumber += 1)}`;
const aContact = (fields: Record<string, unknown> = {}) => ({
  displayName: 'Ada Lovelace',
  phoneNumber: newNumber(),
  ...fields,
});
const create = async (fields: Record<string, unknown> = {}, key = demoKey) => {
  const response = await e2e.api.post('/contacts', key, aContact(fields));
  expect(response.status).toBe(201);
  return response.body.contact as Contact;
};

beforeAll(async () => {
  demoKey = e2e.runtime.demoKey;
  const [call, otherOrg, bigOrg] = await Promise.all([
    e2e.runtime.admin(
      'simulate',
      'call',
      '--tenant',
      e2e.demoTenantId,
      '--direction',
      'inbound',
      '--from',
      '+14155550201',
      '--to',
      '+15005550006',
    ),
    e2e.runtime.admin('tenant', 'create', '--name', 'Other Org'),
    e2e.runtime.admin('tenant', 'create', '--name', 'Big Org'),
  ]);
  autoContactId = call.call.contactId;
  const [otherKey, bigKey] = await Promise.all([
    e2e.runtime.admin('key', 'create', '--tenant', otherOrg.tenant.id),
    e2e.runtime.admin('key', 'create', '--tenant', bigOrg.tenant.id, '--scopes', 'contacts.view,contacts.manage'),
  ]);
  other = { key: otherKey.key, contact: await create({ displayName: 'Not yours' }, otherKey.key) };
  big = { tenantId: bigOrg.tenant.id, key: bigKey.key };
});

const expect400Naming = (response: { status: number; body: { code: string; error: string } }, field: string) => {
  expect(response.status).toBe(400);
  expect(response.body.code).toBe('validation_failed');
  expect(response.body.error).toMatch(new RegExp(`^${field.replace('.', '\\.')}\\b`));
};

describe('POST /contacts', () => {
  it('creates a named contact: 201, adopted false, every field present', async () => {
    const phoneNumber = newNumber();

    const response = await e2e.api.post('/contacts', demoKey, {
      displayName: 'Grace Hopper',
      phoneNumber,
      company: 'Navy',
      tag: 'vip',
      notes: 'COBOL',
    });

    expect(response.status).toBe(201);
    expect(response.body).toEqual({
      adopted: false,
      contact: {
        id: expect.any(String),
        tenantId: e2e.demoTenantId,
        displayName: 'Grace Hopper',
        phoneNumber,
        company: 'Navy',
        tag: 'vip',
        notes: 'COBOL',
        createdByAgentId: null,
        createdAt: expect.any(String),
        updatedAt: response.body.contact.createdAt,
        normalizedNumber: phoneNumber,
        isAutoCreated: false,
        source: 'manual',
        consentStatus: 'unknown',
        consentSource: null,
        consentAt: null,
        consentNote: null,
        // Added within v1 (issue 32): present, null when not given.
        externalId: null,
        customFields: null,
        // Added within v1 (issue 38): grows with every change of the contact.
        version: 1,
      },
    });
  });

  it('adopts the auto-created contact of a number seen on a call: 200, adopted true, same id', async () => {
    const response = await e2e.api.post('/contacts', demoKey, {
      displayName: 'Caller Named',
      phoneNumber: '+14155550201',
    });

    expect(response.status).toBe(200);
    expect(response.body.adopted).toBe(true);
    expect(response.body.contact).toMatchObject({
      id: autoContactId,
      displayName: 'Caller Named',
      isAutoCreated: false,
      source: 'auto_inbound',
    });
  });

  it('answers 409 with the contactId of the named contact that has the number', async () => {
    const existing = await create();

    const response = await e2e.api.post('/contacts', demoKey, {
      displayName: 'Duplicate',
      phoneNumber: existing.phoneNumber,
    });

    expect(response.status).toBe(409);
    expect(response.body.contactId).toBe(existing.id);
  });

  it.each([
    ['body.nickname', { ...aContact(), nickname: 'Addie' }],
    ['body.phoneNumber', aContact({ phoneNumber: '555-0100' })],
    ['body.displayName', { phoneNumber: '+14155550999' }],
    ['body.tag', aContact({ tag: 'x'.repeat(61) })],
  ])('answers 400 naming %s', async (field, body) => {
    const response = await e2e.api.post('/contacts', demoKey, body);

    expect400Naming(response, field);
  });

  it('answers 400 naming the body for malformed JSON, and 415 for a body that is not JSON', async () => {
    const malformed = await e2e.api.request('POST', '/contacts', {
      key: demoKey,
      rawBody: '{"displayName": "Ada",',
      headers: { 'Content-Type': 'application/json' },
    });
    const notJson = await e2e.api.request('POST', '/contacts', {
      key: demoKey,
      rawBody: 'displayName=Ada',
      headers: { 'Content-Type': 'text/plain' },
    });

    expect400Naming(malformed, 'body');
    expect(notJson.status).toBe(415);
  });
});

describe('GET /contacts/{id}', () => {
  it('answers the contact as it was created', async () => {
    const contact = await create({ company: 'Analytical Engines' });

    const response = await e2e.api.get(`/contacts/${contact.id}`, demoKey);

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ contact });
  });
});

describe('PATCH /contacts/{id}', () => {
  it('sets and clears an external id, merges custom fields key by key; 409 names the holder of an id; 400 names a bad field', async () => {
    const holder = await create({ externalId: 'e2e-held' });
    const contact = await create();

    const set = await e2e.api.patch(`/contacts/${contact.id}`, demoKey, {
      externalId: 'e2e-own',
      customFields: { tier: 'gold', region: 'west' },
    });
    const merged = await e2e.api.patch(`/contacts/${contact.id}`, demoKey, { customFields: { tier: 'silver' } });
    const removed = await e2e.api.patch(`/contacts/${contact.id}`, demoKey, { customFields: { region: null } });
    const taken = await e2e.api.patch(`/contacts/${contact.id}`, demoKey, { externalId: 'e2e-held' });
    const badKey = await e2e.api.patch(`/contacts/${contact.id}`, demoKey, { customFields: { 'no spaces': 'x' } });
    const cleared = await e2e.api.patch(`/contacts/${contact.id}`, demoKey, { externalId: null, customFields: null });

    expect(set.body.contact).toMatchObject({ externalId: 'e2e-own', customFields: { tier: 'gold', region: 'west' } });
    expect(merged.body.contact.customFields).toEqual({ tier: 'silver', region: 'west' });
    expect(removed.body.contact.customFields).toEqual({ tier: 'silver' });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ code: 'contact_conflict', contactId: holder.id });
    expect400Naming(badKey, 'body.customFields.no spaces');
    expect(cleared.body.contact).toMatchObject({ externalId: null, customFields: null });
    expect((await e2e.api.get('/contacts?externalId=e2e-own', demoKey)).body.contacts).toEqual([]);
  });

  it('changes only the fields given', async () => {
    const contact = await create({ company: 'Old Co', tag: 'lead' });

    const response = await e2e.api.patch(`/contacts/${contact.id}`, demoKey, { company: 'New Co', tag: null });
    const read = await e2e.api.get(`/contacts/${contact.id}`, demoKey);

    expect(response.status).toBe(200);
    expect(response.body.contact).toEqual({
      ...contact,
      company: 'New Co',
      tag: null,
      updatedAt: expect.any(String),
      version: contact.version + 1,
    });
    expect(read.body.contact).toEqual(response.body.contact);
  });

  it('moves the contact to a new number, freeing the old one', async () => {
    const contact = await create();
    const phoneNumber = newNumber();

    const response = await e2e.api.patch(`/contacts/${contact.id}`, demoKey, { phoneNumber });
    const reuse = await e2e.api.post('/contacts', demoKey, {
      displayName: 'Takes the old number',
      phoneNumber: contact.phoneNumber,
    });

    expect(response.body.contact).toMatchObject({ phoneNumber, normalizedNumber: phoneNumber });
    expect(reuse.status).toBe(201);
  });

  it('answers 409 with contactId when another contact has the number', async () => {
    const [contact, holder] = await Promise.all([create(), create()]);

    const response = await e2e.api.patch(`/contacts/${contact.id}`, demoKey, { phoneNumber: holder.phoneNumber });

    expect(response.status).toBe(409);
    expect(response.body.contactId).toBe(holder.id);
  });

  it.each([
    ['body', {}],
    ['body.nickname', { nickname: 'Addie' }],
    ['body.phoneNumber', { phoneNumber: '+0123' }],
    ['body.displayName', { displayName: '' }],
  ])('answers 400 naming %s for %j', async (field, body) => {
    const contact = await create();

    const response = await e2e.api.patch(`/contacts/${contact.id}`, demoKey, body);

    expect400Naming(response, field);
  });

  it('answers 400 naming the body for malformed JSON', async () => {
    const contact = await create();

    const response = await e2e.api.request('PATCH', `/contacts/${contact.id}`, {
      key: demoKey,
      rawBody: 'not json',
      headers: { 'Content-Type': 'application/json' },
    });

    expect400Naming(response, 'body');
  });
});

describe('DELETE /contacts/{id}', () => {
  it('answers 204 with an empty body; the contact is gone and its number free', async () => {
    const contact = await create();

    const response = await e2e.api.delete(`/contacts/${contact.id}`, demoKey);
    const read = await e2e.api.get(`/contacts/${contact.id}`, demoKey);
    const again = await e2e.api.post('/contacts', demoKey, {
      displayName: 'New holder',
      phoneNumber: contact.phoneNumber,
    });

    expect(response.status).toBe(204);
    expect(response.body).toBeUndefined();
    expect(read.status).toBe(404);
    expect(again.status).toBe(201);
  });
});

describe('404 on every contact id endpoint', () => {
  const ids: [string, () => string][] = [
    ['an id that names no contact', () => unknownId()],
    ['a malformed id', () => 'not-a-uuid'],
    ["another organization's contact", () => other.contact.id],
  ];

  it.each(ids)('GET, PATCH and DELETE answer 404 not_found for %s', async (_name, idOf) => {
    const id = idOf();

    const responses = await Promise.all([
      e2e.api.get(`/contacts/${id}`, demoKey),
      e2e.api.patch(`/contacts/${id}`, demoKey, { displayName: 'Taken over' }),
      e2e.api.delete(`/contacts/${id}`, demoKey),
    ]);

    for (const response of responses) {
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('not_found');
    }
  });

  it("leaves another organization's contact as it was", async () => {
    const response = await e2e.api.get(`/contacts/${other.contact.id}`, other.key);

    expect(response.body.contact).toEqual(other.contact);
  });
});

describe('GET /contacts', () => {
  it("lists only the caller's organization's contacts", async () => {
    const response = await e2e.api.get('/contacts', other.key);

    expect(response.body).toEqual({ contacts: [other.contact], nextCursor: null });
  });

  it('includes auto-created contacts unless includeAutoCreated=false', async () => {
    const { call } = await e2e.runtime.admin(
      'simulate',
      'call',
      '--tenant',
      e2e.demoTenantId,
      '--direction',
      'outbound',
      '--from',
      '+15005550006',
      '--to',
      newNumber(),
    );

    const all = await e2e.api.get('/contacts?limit=100', demoKey);
    const named = await e2e.api.get('/contacts?limit=100&includeAutoCreated=false', demoKey);

    const ids = (response: typeof all) => (response.body.contacts as Contact[]).map((c) => c.id);
    expect(ids(all)).toContain(call.contactId);
    expect(ids(named)).not.toContain(call.contactId);
    expect((named.body.contacts as Contact[]).every((c) => c.isAutoCreated === false)).toBe(true);
  });

  it('searches display name and company case-insensitively, and the digits of the number', async () => {
    const byName = await create({ displayName: 'Zebulon Quartz' });
    const byCompany = await create({ company: 'Quartzite Ltd' });

    const text = await e2e.api.get('/contacts?search=QUARTZ', demoKey);
    const digits = await e2e.api.get(`/contacts?search=${encodeURIComponent(byName.phoneNumber.slice(-7))}`, demoKey);

    expect((text.body.contacts as Contact[]).map((c) => c.id).sort()).toEqual([byName.id, byCompany.id].sort());
    expect((digits.body.contacts as Contact[]).map((c) => c.id)).toEqual([byName.id]);
  });

  it.each([
    ['limit', '?limit=0'],
    ['limit', '?limit=abc'],
    ['search', '?search='],
    ['includeAutoCreated', '?includeAutoCreated=maybe'],
    ['cursor', '?cursor=42'],
  ])('answers 400 naming %s for %s', async (field, query) => {
    const response = await e2e.api.get(`/contacts${query}`, demoKey);

    expect400Naming(response, field);
  });

  it('clamps a limit above 100 to 100, and nextCursor is null exactly on the last page', async () => {
    // 101 contacts: a batch of 100 (what a CRM sends) and one more.
    const batch = await e2e.api.post('/contacts/batch', big.key, {
      contacts: Array.from({ length: 100 }, (_, i) => aContact({ displayName: `Bulk ${i}`, externalId: `bulk-${i}` })),
    });
    expect({
      status: batch.status,
      results: batch.body.results?.map((item: { status: string }) => item.status),
    }).toEqual({
      status: 200,
      results: Array(100).fill('created'),
    });
    await create({ displayName: 'Bulk 100' }, big.key);

    const first = await e2e.api.get('/contacts?limit=1000', big.key);
    const last = await e2e.api.get(`/contacts?limit=1&cursor=${first.body.nextCursor}`, big.key);

    expect(first.body.contacts).toHaveLength(100);
    expect(first.body.nextCursor).toBe(first.body.contacts[99].id);
    expect(last.body.contacts).toHaveLength(1);
    expect(last.body.nextCursor).toBeNull();
  });
});

describe('response compression, as API Gateway does it from 1 KiB', () => {
  /** A raw GET (node:http sends no Accept-Encoding unless told): the bytes as they crossed the wire. */
  const rawGet = (path: string, key: string, acceptEncoding?: string) =>
    new Promise<{ status: number; headers: IncomingHttpHeaders; bytes: Buffer }>((done, fail) => {
      const headers = {
        Authorization: `Bearer ${key}`,
        ...(acceptEncoding !== undefined && { 'Accept-Encoding': acceptEncoding }),
      };
      httpGet(`${e2e.runtime.baseUrl}${path}`, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }));
        res.on('error', fail);
      }).on('error', fail);
    });

  beforeAll(async () => {
    // A page well above the threshold: about 0.4 KB a contact.
    await Promise.all(Array.from({ length: 8 }, () => create({ displayName: 'Compressed Page' }, other.key)));
  });

  it('gzips the contact page for a client that accepts it, deflates it for one that asks for deflate, and sends it plain otherwise', async () => {
    const plain = await rawGet('/contacts', other.key);
    const gzipped = await rawGet('/contacts', other.key, 'gzip, deflate, br');
    const deflated = await rawGet('/contacts', other.key, 'deflate');
    const starred = await rawGet('/contacts', other.key, '*');

    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.bytes.length).toBeGreaterThanOrEqual(MINIMUM_COMPRESSION_BYTES);
    expect(Number(plain.headers['content-length'])).toBe(plain.bytes.length);
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(Number(gzipped.headers['content-length'])).toBe(gzipped.bytes.length);
    expect(gzipped.bytes.length).toBeLessThan(plain.bytes.length / 2);
    expect(JSON.parse(gunzipSync(gzipped.bytes).toString('utf8'))).toEqual(JSON.parse(plain.bytes.toString('utf8')));
    expect(deflated.headers['content-encoding']).toBe('deflate');
    expect(inflateSync(deflated.bytes).equals(plain.bytes)).toBe(true);
    expect(starred.headers['content-encoding']).toBeUndefined();
  });

  it('sends a response under 1 KiB (one contact) plain, whatever the client accepts', async () => {
    const one = await rawGet(`/contacts/${other.contact.id}`, other.key, 'gzip');

    expect(one.status).toBe(200);
    expect(one.bytes.length).toBeLessThan(MINIMUM_COMPRESSION_BYTES);
    expect(one.headers['content-encoding']).toBeUndefined();
  });

  it('the typed client reads the compressed page: Node fetch asks for gzip and decompresses it', async () => {
    const encodings: (string | null)[] = [];
    const client = createClient({
      baseUrl: e2e.runtime.baseUrl,
      apiKey: other.key,
      fetch: async (request: Request) => {
        const response = await fetch(request);
        encodings.push(response.headers.get('content-encoding'));
        return response;
      },
    });

    const { data, error } = await client.GET('/contacts', {});

    expect(error).toBeUndefined();
    expect(encodings).toEqual(['gzip']);
    expect(data!.contacts.length).toBeGreaterThanOrEqual(9);
    expect(data!.contacts.every((c) => typeof c.id === 'string' && typeof c.phoneNumber === 'string')).toBe(true);
  });
});
