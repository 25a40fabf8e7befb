import { must, mustBeError, mustBeStatus } from './client';
import { needs, type Check, type SmokeContext } from './check';

/**
 * The directory: the run's one write. It creates a contact named after the run id on a number
 * no one has, reads, searches, changes and deletes it; `cleanupContact` deletes it should a check
 * in between fail.
 */

const PROBE_LIST = { method: 'GET', path: '/contacts?limit=1' };
/** A 400 is decided before anything is written, so the write probe changes nothing. */
const PROBE_WRITE = { method: 'POST', path: '/contacts' };

const contactPath = (ctx: SmokeContext) => `/contacts/${needs(ctx.contact, 'the contact the run created').id}`;

export const listContactsCheck: Check = {
  name: 'GET /contacts',
  scope: 'contacts.view',
  probe: PROBE_LIST,
  async run(ctx) {
    const reply = await ctx.client.request('GET', '/contacts?limit=2&includeAutoCreated=false');
    mustBeStatus('GET /contacts', reply, 200);
    return `${reply.body.contacts.length} named contact(s) on the first page of 2`;
  },
};

export const contactValidationCheck: Check = {
  name: 'POST /contacts refuses a bad body',
  scope: 'contacts.manage',
  probe: PROBE_WRITE,
  async run(ctx) {
    const badNumber = await ctx.client.request('POST', '/contacts', {
      json: { displayName: ctx.runId, phoneNumber: '12' },
    });
    mustBeError('POST /contacts with phoneNumber "12"', badNumber, 400, { names: 'body.phoneNumber' });
    const unknownField = await ctx.client.request('POST', '/contacts', {
      json: { displayName: ctx.runId, phoneNumber: ctx.markedNumber, nickname: 'x' },
    });
    mustBeError('POST /contacts with an unknown field', unknownField, 400, { names: 'body.nickname' });
    return '400 naming body.phoneNumber, then body.nickname';
  },
};

export const createContactCheck: Check = {
  name: 'POST /contacts creates the marked contact',
  scope: 'contacts.manage',
  probe: PROBE_WRITE,
  async run(ctx) {
    const reply = await ctx.client.request('POST', '/contacts', {
      json: {
        displayName: `Smoke ${ctx.runId}`,
        phoneNumber: ctx.markedNumber,
        notes: `Created by npm run smoke (${ctx.runId}); deleted when the run ends.`,
      },
    });
    // 200 would mean it adopted someone's contact of that number: not ours to change or delete.
    mustBeStatus('POST /contacts', reply, 201);
    must(reply.body.adopted === false, 'POST /contacts: 201 with adopted true');
    ctx.contact = { id: reply.body.contact.id, deleted: false };
    must(
      reply.body.contact.normalizedNumber === ctx.markedNumber,
      `POST /contacts: normalizedNumber ${reply.body.contact.normalizedNumber}, sent ${ctx.markedNumber}`,
    );
    return `contact ${ctx.contact.id} "Smoke ${ctx.runId}" on ${ctx.markedNumber}`;
  },
};

export const getContactCheck: Check = {
  name: 'GET /contacts/{id}',
  scope: 'contacts.view',
  probe: PROBE_LIST,
  async run(ctx) {
    const reply = await ctx.client.request('GET', contactPath(ctx));
    mustBeStatus(`GET ${contactPath(ctx)}`, reply, 200);
    must(
      reply.body.contact.displayName === `Smoke ${ctx.runId}`,
      `GET ${contactPath(ctx)}: displayName "${reply.body.contact.displayName}"`,
    );
    return 'the created contact as it was written';
  },
};

/** Search filters pages, so a page may come back short or empty with a cursor: follow a few. */
const SEARCH_PAGES = 5;

export const searchContactsCheck: Check = {
  name: 'GET /contacts?search= finds it',
  scope: 'contacts.view',
  probe: PROBE_LIST,
  async run(ctx) {
    const id = needs(ctx.contact, 'the contact the run created').id;
    let cursor: string | null = null;
    for (let page = 1; page <= SEARCH_PAGES; page++) {
      const path = `/contacts?search=${encodeURIComponent(ctx.runId.toUpperCase())}${cursor ? `&cursor=${cursor}` : ''}`;
      const reply = await ctx.client.request('GET', path);
      mustBeStatus(`GET ${path}`, reply, 200);
      if ((reply.body.contacts as { id: string }[]).some((contact) => contact.id === id))
        return `found on page ${page}, searching in upper case`;
      cursor = reply.body.nextCursor;
      if (cursor === null) break;
    }
    throw new Error(`GET /contacts?search=${ctx.runId.toUpperCase()}: contact ${id} not found`);
  },
};

export const updateContactCheck: Check = {
  name: 'PATCH /contacts/{id}',
  scope: 'contacts.manage',
  probe: PROBE_WRITE,
  async run(ctx) {
    const path = contactPath(ctx);
    const reply = await ctx.client.request('PATCH', path, { json: { company: 'Smoke test' } });
    mustBeStatus(`PATCH ${path}`, reply, 200);
    must(
      reply.body.contact.company === 'Smoke test',
      `PATCH ${path}: company is ${JSON.stringify(reply.body.contact.company)}`,
    );
    mustBeError(`PATCH ${path} with an empty body`, await ctx.client.request('PATCH', path, { json: {} }), 400, {
      names: 'body',
    });
    return 'company changed; an empty body is 400';
  },
};

export const conflictingContactCheck: Check = {
  name: 'POST /contacts on a taken number',
  scope: 'contacts.manage',
  probe: PROBE_WRITE,
  async run(ctx) {
    const id = needs(ctx.contact, 'the contact the run created').id;
    const reply = await ctx.client.request('POST', '/contacts', {
      json: { displayName: `Smoke ${ctx.runId} again`, phoneNumber: ctx.markedNumber },
    });
    mustBeError('POST /contacts with the same number', reply, 409);
    must(
      reply.body.contactId === id,
      `POST /contacts with the same number: contactId ${reply.body.contactId}, expected ${id}`,
    );
    return `409 ${reply.body.code} naming contact ${id}`;
  },
};

export const deleteContactCheck: Check = {
  name: 'DELETE /contacts/{id}',
  scope: 'contacts.manage',
  probe: PROBE_WRITE,
  async run(ctx) {
    const path = contactPath(ctx);
    const reply = await ctx.client.request('DELETE', path);
    mustBeStatus(`DELETE ${path}`, reply, 204);
    must(reply.body === undefined, `DELETE ${path}: 204 with a body`);
    ctx.contact!.deleted = true;
    mustBeError(`GET ${path} after the delete`, await ctx.client.request('GET', path), 404, { code: 'not_found' });
    return '204 without a body; then 404 not_found';
  },
};

/** Deletes the run's contact if a failed check left it behind; undefined when there was nothing to do. */
export async function cleanupContact(ctx: SmokeContext): Promise<string | undefined> {
  if (!ctx.contact || ctx.contact.deleted) return undefined;
  const path = `/contacts/${ctx.contact.id}`;
  const reply = await ctx.client.request('DELETE', path);
  must(
    reply.status === 204 || reply.status === 404,
    `DELETE ${path}: ${reply.status}: delete contact ${ctx.contact.id} (${ctx.runId}) by hand`,
  );
  ctx.contact.deleted = true;
  return `deleted contact ${ctx.contact.id} that a failed check left behind`;
}
