import { createTestTable } from '../support/table';
import { getCall, listCalls, recordCall, type RecordCallInput } from '../../lambdas/contexts/calls/calls';
import { getContact } from '../../lambdas/contexts/contacts/contacts';
import { NotFoundError } from '../../lambdas/shared/errors';
import { uuidv7 } from '../../lambdas/shared/ids';
import type { Call } from '../../lambdas/contexts/calls/schemas';

const tenantId = uuidv7();
const otherTenantId = uuidv7();
const base = Date.parse('2026-09-01T00:00:00.000Z');
const minutes = (n: number) => new Date(base + n * 60_000);
const list = (query: Partial<Parameters<typeof listCalls>[1]> = {}, tenant = tenantId) =>
  listCalls(tenant, { limit: 50, ...query });
const ids = (calls: Call[]) => calls.map((c) => c.id);

const calls: Call[] = [];
const callAt = (n: number, direction: RecordCallInput['direction']): RecordCallInput => ({
  direction,
  fromNumber: direction === 'inbound' ? `+1415555${String(1000 + n)}` : '+14155559999',
  toNumber: direction === 'inbound' ? '+14155559999' : `+1415555${String(1000 + n)}`,
  status: 'completed',
  startedAt: minutes(n),
  answeredAt: minutes(n),
  endedAt: new Date(minutes(n).getTime() + 30_000),
  durationSec: 30,
});

beforeAll(async () => {
  await createTestTable();
  // Recorded out of order on purpose: the list order comes from startedAt, not from insertion.
  for (const n of [3, 0, 4, 1, 2, 5])
    calls.push(await recordCall(tenantId, callAt(n, n % 2 === 0 ? 'inbound' : 'outbound')));
  calls.sort((a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt));
});

describe('listing calls', () => {
  it('returns calls newest first and pages with nextCursor null exactly on the last page', async () => {
    const first = await list({ limit: 4 });
    const second = await list({ limit: 4, cursor: first.nextCursor! });
    const exact = await list({ limit: 6 });

    expect(ids(first.items)).toEqual(ids(calls.slice(0, 4)));
    expect(ids(second.items)).toEqual(ids(calls.slice(4)));
    expect(second.nextCursor).toBeNull();
    expect(exact.items).toHaveLength(6);
    expect(exact.nextCursor).toBeNull();
  });

  it('filters by direction through its own index, paging within it', async () => {
    const inbound = calls.filter((c) => c.direction === 'inbound');

    const first = await list({ direction: 'inbound', limit: 2 });
    const rest = await list({ direction: 'inbound', limit: 2, cursor: first.nextCursor! });

    expect(first.items.every((c) => c.direction === 'inbound')).toBe(true);
    expect([...ids(first.items), ...ids(rest.items)]).toEqual(ids(inbound));
    expect(rest.nextCursor).toBeNull();
  });

  it('includes a call that started exactly at since and excludes the millisecond before', async () => {
    const atTwo = await list({ since: minutes(2).toISOString() });
    const justAfterTwo = await list({ since: new Date(minutes(2).getTime() + 1).toISOString() });

    expect(atTwo.items.map((c) => c.startedAt)).toEqual([5, 4, 3, 2].map((n) => minutes(n).toISOString()));
    expect(justAfterTwo.items.map((c) => c.startedAt)).toEqual([5, 4, 3].map((n) => minutes(n).toISOString()));
  });

  it('accepts since with an offset and combines it with direction and a cursor', async () => {
    const sinceWithOffset = new Date(minutes(1).getTime()).toISOString().replace('Z', '+00:00');

    const page = await list({ since: sinceWithOffset, direction: 'outbound', limit: 1 });
    const next = await list({ since: sinceWithOffset, direction: 'outbound', limit: 1, cursor: page.nextCursor! });
    const beyond = await list({ since: minutes(4).toISOString(), cursor: calls[calls.length - 1].id });

    expect(page.items.map((c) => c.startedAt)).toEqual([minutes(5).toISOString()]);
    expect(next.items.map((c) => c.startedAt)).toEqual([minutes(3).toISOString()]);
    expect(beyond).toEqual({ items: [], nextCursor: null });
  });

  it('never returns calls of another organization', async () => {
    const page = await list({}, otherTenantId);

    expect(page).toEqual({ items: [], nextCursor: null });
    await expect(getCall(otherTenantId, calls[0].id)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('recording calls', () => {
  it('mints the id from startedAt and links an auto-created contact for the external number, reusing it later', async () => {
    const first = await recordCall(tenantId, callAt(10, 'inbound'));
    const again = await recordCall(tenantId, { ...callAt(11, 'outbound'), toNumber: first.fromNumber });

    expect(first.contactId).not.toBeNull();
    expect(again.contactId).toBe(first.contactId);
    expect(await getContact(tenantId, first.contactId!)).toMatchObject({
      source: 'auto_inbound',
      isAutoCreated: true,
      normalizedNumber: first.fromNumber,
    });
    expect(await getCall(tenantId, first.id)).toEqual(first);
  });

  it('creates no contact for an internal call', async () => {
    const internal = await recordCall(tenantId, {
      ...callAt(12, 'outbound'),
      fromNumber: 'client:alice',
      toNumber: 'client:bob',
      isInternal: true,
    });

    expect(internal).toMatchObject({ isInternal: true, contactId: null });
  });
});
