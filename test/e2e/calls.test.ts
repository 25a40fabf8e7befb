import { recordCalls } from './support/seed';
import { unknownId, useLocalRuntime } from './support/e2e';

/** GET /calls and GET /calls/{id}, over calls fed in with `admin simulate call`. */
const e2e = useLocalRuntime();

type Call = { id: string; direction: string; startedAt: string; contactId: string | null; [field: string]: unknown };

const DEMO_NUMBER = '+15005550006';
/** Four calls an hour apart, oldest first; four so that pages of two end exactly on a page boundary. */
let calls: Call[];
let otherKey: string;
let otherCall: Call;
/** An organization for the page-size limit; its 101 calls would crowd the others' lists. */
let busy: { tenantId: string; key: string };

beforeAll(async () => {
  const simulate = (...args: string[]) =>
    e2e.runtime.admin('simulate', 'call', '--tenant', e2e.demoTenantId, ...args).then((out) => out.call as Call);
  const [first, second, third, fourth, other, busyOrg] = await Promise.all([
    simulate(
      '--direction',
      'inbound',
      '--from',
      '+14155550101',
      '--to',
      DEMO_NUMBER,
      '--started-at',
      '2026-03-01T09:00:00Z',
      '--duration',
      '65',
    ),
    simulate(
      '--direction',
      'outbound',
      '--from',
      DEMO_NUMBER,
      '--to',
      '+14155550102',
      '--started-at',
      '2026-03-01T10:00:00Z',
      '--status',
      'no-answer',
      '--duration',
      '20',
    ),
    simulate(
      '--direction',
      'inbound',
      '--from',
      '+14155550103',
      '--to',
      DEMO_NUMBER,
      '--started-at',
      '2026-03-01T11:00:00Z',
      '--status',
      'ringing',
    ),
    simulate(
      '--direction',
      'outbound',
      '--from',
      DEMO_NUMBER,
      '--to',
      '+14155550101',
      '--started-at',
      '2026-03-01T12:00:00Z',
      '--duration',
      '5',
    ),
    // Its number: `simulate call` plays signed carrier callbacks, which reach an organization through its numbers.
    e2e.runtime.admin('tenant', 'create', '--name', 'Other Org', '--number', '+15550001111'),
    e2e.runtime.admin('tenant', 'create', '--name', 'Busy Org'),
  ]);
  calls = [first, second, third, fourth];
  const otherTenantId = other.tenant.id;
  const [otherKeyCreated, otherCallSimulated, busyKeyCreated] = await Promise.all([
    e2e.runtime.admin('key', 'create', '--tenant', otherTenantId),
    e2e.runtime.admin(
      'simulate',
      'call',
      '--tenant',
      otherTenantId,
      '--direction',
      'inbound',
      '--from',
      '+14155550101',
      '--to',
      '+15550001111',
    ),
    e2e.runtime.admin('key', 'create', '--tenant', busyOrg.tenant.id, '--scopes', 'calls.view.team'),
  ]);
  otherKey = otherKeyCreated.key;
  otherCall = otherCallSimulated.call;
  busy = { tenantId: busyOrg.tenant.id, key: busyKeyCreated.key };
});

const listIds = async (query: string, key = e2e.runtime.demoKey) => {
  const response = await e2e.api.get(`/calls${query}`, key);
  expect(response.status).toBe(200);
  return {
    ids: (response.body.calls as Call[]).map((call) => call.id),
    nextCursor: response.body.nextCursor as string | null,
  };
};
const idsOf = (...indexes: number[]) => indexes.map((i) => calls[i].id);

describe('GET /calls', () => {
  it('lists the calls newest first, every field as recorded, with nextCursor null on the only page', async () => {
    const response = await e2e.api.get('/calls', e2e.runtime.demoKey);

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ calls: [...calls].reverse(), nextCursor: null });
  });

  it('records times, duration and the contact of the external number as simulate call was told', () => {
    const [answered, unanswered, ringing, callBack] = calls;

    expect(answered).toMatchObject({
      status: 'completed',
      answeredAt: answered.startedAt,
      endedAt: '2026-03-01T09:01:05.000Z',
      durationSec: 65,
    });
    expect(unanswered).toMatchObject({
      status: 'no-answer',
      answeredAt: null,
      endedAt: '2026-03-01T10:00:20.000Z',
      durationSec: 20,
    });
    expect(ringing).toMatchObject({
      status: 'ringing',
      answeredAt: null,
      endedAt: null,
      durationSec: null,
      isInternal: false,
      agentId: null,
    });
    expect(callBack.contactId).toBe(answered.contactId);
  });

  it('auto-creates a contact for a number seen on a call', async () => {
    const response = await e2e.api.get(`/contacts/${calls[2].contactId}`, e2e.runtime.demoKey);

    expect(response.status).toBe(200);
    expect(response.body.contact).toMatchObject({
      phoneNumber: '+14155550103',
      isAutoCreated: true,
      source: 'auto_inbound',
    });
  });

  it('pages with limit and cursor, and nextCursor is null exactly on the last page', async () => {
    const first = await listIds('?limit=2');
    const second = await listIds(`?limit=2&cursor=${first.nextCursor}`);

    expect(first).toEqual({ ids: idsOf(3, 2), nextCursor: expect.any(String) });
    expect(second).toEqual({ ids: idsOf(1, 0), nextCursor: null });
  });

  it('filters by direction', async () => {
    const inbound = await listIds('?direction=inbound');
    const outbound = await listIds('?direction=outbound');

    expect(inbound.ids).toEqual(idsOf(2, 0));
    expect(outbound.ids).toEqual(idsOf(3, 1));
  });

  it('filters by since, including a call that started at that very instant, in any offset', async () => {
    const utc = await listIds('?since=2026-03-01T11:00:00Z');
    const withOffset = await listIds(`?since=${encodeURIComponent('2026-03-01T12:00:00+01:00')}`);
    const combined = await listIds('?since=2026-03-01T11:00:00.000Z&direction=inbound');

    expect(utc.ids).toEqual(idsOf(3, 2));
    expect(withOffset.ids).toEqual(idsOf(3, 2));
    expect(combined.ids).toEqual(idsOf(2));
  });

  it("lists only the caller's organization's calls", async () => {
    const other = await listIds('', otherKey);

    expect(other.ids).toEqual([otherCall.id]);
  });

  it.each([
    ['limit', '?limit=0'],
    ['limit', '?limit=abc'],
    ['direction', '?direction=sideways'],
    ['since', '?since=yesterday'],
    // Like API Gateway, a literal + in a query value is a space: offsets must be sent as %2B.
    ['since', '?since=2026-03-01T12:00:00+01:00'],
    ['cursor', '?cursor=not-a-uuid'],
  ])('answers 400 naming %s for %s', async (field, query) => {
    const response = await e2e.api.get(`/calls${query}`, e2e.runtime.demoKey);

    expect(response.status).toBe(400);
    expect(response.body.code).toBe('validation_failed');
    expect(response.body.error).toMatch(new RegExp(`^${field}\\b`));
  });

  it('clamps a limit above 100 to 100', async () => {
    const start = Date.parse('2026-02-01T00:00:00Z');
    await recordCalls(
      e2e.runtime.info,
      busy.tenantId,
      Array.from({ length: 101 }, (_, i) => ({
        direction: 'inbound' as const,
        fromNumber: '+14155550199',
        toNumber: DEMO_NUMBER,
        status: 'completed',
        startedAt: new Date(start + i * 60_000),
      })),
    );

    const first = await listIds('?limit=1000', busy.key);
    const second = await listIds(`?limit=1000&cursor=${first.nextCursor}`, busy.key);

    expect(first.ids).toHaveLength(100);
    expect(first.nextCursor).toEqual(expect.any(String));
    expect(second.ids).toHaveLength(1);
    expect(second.nextCursor).toBeNull();
  });
});

describe('GET /calls/{id}', () => {
  it('answers one call as the list shows it', async () => {
    const response = await e2e.api.get(`/calls/${calls[0].id}`, e2e.runtime.demoKey);

    expect(response.status).toBe(200);
    expect(response.body).toEqual({ call: calls[0] });
  });

  it.each([
    ['an id that names no call', () => unknownId()],
    ['a malformed id', () => 'not-a-uuid'],
    ["another organization's call", () => otherCall.id],
  ])('answers 404 not_found for %s', async (_name, idOf) => {
    const response = await e2e.api.get(`/calls/${idOf()}`, e2e.runtime.demoKey);

    expect(response.status).toBe(404);
    expect(response.body.code).toBe('not_found');
  });
});
