import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createTestTable } from '../support/table';
import { engineStats, expectTransactionsMet, markRaceMeters, onLimitsEngine } from '../support/engine-meters';
import { lambdaContext } from '../support/api-event';
import { callbackHandler } from '../../lambdas/handlers/carrier/callback-handler';
import { carrierRoutes } from '../../lambdas/handlers/carrier/routes';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import {
  callKey,
  findCallByProviderSid,
  findCallIdByProviderSid,
  getCall,
  listCalls,
} from '../../lambdas/contexts/calls/calls';
import { voiceStatusCallback } from '../../lambdas/contexts/carrier/callbacks';
import { getContact } from '../../lambdas/contexts/contacts/contacts';
import { createTenant } from '../../lambdas/contexts/tenants/tenants';
import { dialLeg, pstnInboundLeg, sid, softphoneLeg, type Form, type LegEvent } from '../fixtures/twilio/callbacks';
import { signedCallbackEvent, TEST_PUBLIC_BASE_URL, TEST_TOKEN } from '../fixtures/twilio/events';

const ORG = '+14155550000';
const AGENT = '0199a000-0000-7000-8000-0000000000a1';
const AGENT_2 = '0199a000-0000-7000-8000-0000000000a2';
const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000);
const iso = (s: number) => at(s).toISOString();

let tenantId: string;
let sids = 100;
let callers = 0;
/** Each test its own sids and caller number, so contacts and calls of other tests never interfere. */
const nextSid = () => sid('CA', (sids += 1));
const nextCaller = () => `+1415555${String((callers += 1)).padStart(4, '0')}`;

const route = carrierRoutes.twilioVoiceStatus;
const handler = callbackHandler(route, voiceStatusCallback, {
  config: { authToken: TEST_TOKEN, publicBaseUrl: TEST_PUBLIC_BASE_URL },
});
const post = async (form: Form, query: Record<string, string> = {}) => {
  const result = await handler(signedCallbackEvent(route, form, query), lambdaContext);
  expect(result.statusCode).toBe(200);
};
const postAll = async (forms: Form[]) => {
  for (const form of forms) await post(form);
};
const callOf = async (parentSid: string) => (await findCallByProviderSid(tenantId, parentSid))!;
const rawCall = async (parentSid: string) =>
  (
    await dynamo.send(
      new GetCommand({
        TableName: TABLE_NAME,
        Key: callKey(tenantId, (await findCallIdByProviderSid(tenantId, parentSid))!),
      }),
    )
  ).Item;

const ev = (callSid: string, status: LegEvent['status'], s: number, sequence: number, duration?: number): LegEvent => ({
  callSid,
  status,
  at: at(s),
  sequence,
  duration,
});

beforeAll(async () => {
  await createTestTable();
  tenantId = (await createTenant({ name: 'Voice Org', numbers: [ORG] })).id;
});

describe('leg mapping', () => {
  it('records an inbound answered call: one row, answered when Twilio picked up, the agent from the answering softphone', async () => {
    // Prepare
    const parent = nextSid();
    const child = nextSid();
    const caller = nextCaller();
    const agentLeg = (e: LegEvent) => dialLeg({ ...e, parentCallSid: parent, from: caller, to: `client:${AGENT}` });
    const pstn = (e: LegEvent) => pstnInboundLeg({ ...e, from: caller, to: ORG });
    // Act
    await postAll([
      pstn(ev(parent, 'ringing', 0, 0)),
      pstn(ev(parent, 'in-progress', 2, 1)),
      agentLeg(ev(child, 'ringing', 2, 0)),
      agentLeg(ev(child, 'in-progress', 6, 1)),
      agentLeg(ev(child, 'completed', 48, 2, 42)),
      pstn(ev(parent, 'completed', 50, 2, 48)),
    ]);
    // Assess
    const call = await callOf(parent);
    expect(call).toEqual({
      id: expect.any(String),
      direction: 'inbound',
      fromNumber: caller,
      toNumber: ORG,
      status: 'completed',
      startedAt: iso(0),
      answeredAt: iso(2),
      endedAt: iso(50),
      durationSec: 48,
      isInternal: false,
      agentId: AGENT,
      contactId: expect.any(String),
    });
    expect(await getContact(tenantId, call.contactId!)).toMatchObject({
      normalizedNumber: caller,
      source: 'auto_inbound',
      isAutoCreated: true,
    });
    expect(await findCallIdByProviderSid(tenantId, child)).toBeUndefined();
    // The API's call has our id only: no provider sid anywhere in it.
    expect(JSON.stringify(await getCall(tenantId, call.id))).not.toMatch(/CA[0-9a-f]{32}/);
  });

  it('records an inbound call nobody answered as no-answer, with the auto-created contact of the caller', async () => {
    // Prepare: Twilio picks up to run the TwiML, rings the agent, who does not answer; voicemail follows.
    const parent = nextSid();
    const child = nextSid();
    const caller = nextCaller();
    const agentLeg = (e: LegEvent) => dialLeg({ ...e, parentCallSid: parent, from: caller, to: `client:${AGENT}` });
    // Act
    await postAll([
      agentLeg(ev(child, 'ringing', 1, 0)),
      agentLeg(ev(child, 'no-answer', 21, 1)),
      pstnInboundLeg({ ...ev(parent, 'completed', 40, 0, 40), from: caller, to: ORG }),
    ]);
    // Assess
    const call = await callOf(parent);
    expect(call).toMatchObject({
      direction: 'inbound',
      fromNumber: caller,
      toNumber: ORG,
      status: 'no-answer',
      answeredAt: null,
      agentId: null,
      endedAt: iso(40),
      durationSec: 40,
    });
    expect(await getContact(tenantId, call.contactId!)).toMatchObject({
      normalizedNumber: caller,
      source: 'auto_inbound',
    });
  });

  it('records a call placed from the softphone as outbound from the caller id to the dialled number', async () => {
    // Prepare: the softphone's own leg names no organization number; its first events cannot be
    // placed (Twilio's TwiML App calls one static URL) and are answered 200; the dialled child can.
    const parent = nextSid();
    const child = nextSid();
    const dialled = nextCaller();
    const softphone = (e: LegEvent) => softphoneLeg({ ...e, identity: AGENT, to: dialled });
    const out = (e: LegEvent) => dialLeg({ ...e, parentCallSid: parent, from: ORG, to: dialled });
    // Act
    await postAll([
      softphone(ev(parent, 'ringing', 0, 0)),
      softphone(ev(parent, 'in-progress', 0, 1)),
      out(ev(child, 'ringing', 1, 0)),
      out(ev(child, 'in-progress', 5, 1)),
      out(ev(child, 'completed', 65, 2, 60)),
      softphone(ev(parent, 'completed', 66, 2, 66)),
    ]);
    // Assess
    const call = await callOf(parent);
    expect(call).toEqual({
      id: expect.any(String),
      direction: 'outbound',
      fromNumber: ORG,
      toNumber: dialled,
      status: 'completed',
      startedAt: iso(1),
      answeredAt: iso(5),
      endedAt: iso(65),
      durationSec: 60,
      isInternal: false,
      agentId: AGENT,
      contactId: expect.any(String),
    });
    expect(await getContact(tenantId, call.contactId!)).toMatchObject({
      normalizedNumber: dialled,
      source: 'auto_outbound',
    });
  });

  it('ends a softphone call with the dialled leg outcome even though the softphone leg completes', async () => {
    // Prepare
    const parent = nextSid();
    const child = nextSid();
    const dialled = nextCaller();
    // Act
    await postAll([
      dialLeg({ ...ev(child, 'ringing', 1, 0), parentCallSid: parent, from: ORG, to: dialled }),
      dialLeg({ ...ev(child, 'busy', 3, 1), parentCallSid: parent, from: ORG, to: dialled }),
      softphoneLeg({ ...ev(parent, 'completed', 4, 2, 4), identity: AGENT, to: dialled }),
    ]);
    // Assess
    expect(await callOf(parent)).toMatchObject({
      direction: 'outbound',
      status: 'busy',
      answeredAt: null,
      endedAt: iso(3),
      agentId: AGENT,
    });
  });

  it('records a call between two softphones as internal, with no contact, placed through the signed tenantId', async () => {
    // Prepare: no organization number on any leg; the softphone's TwiML names the organization.
    const parent = nextSid();
    const child = nextSid();
    const hint = { tenantId };
    const bobLeg = (e: LegEvent) =>
      dialLeg({ ...e, parentCallSid: parent, from: 'client:alice', to: `client:${AGENT}` });
    // Act
    await post(softphoneLeg({ ...ev(parent, 'in-progress', 0, 0), identity: 'alice', to: `client:${AGENT}` }), hint);
    await post(bobLeg(ev(child, 'ringing', 1, 0)), hint);
    await post(bobLeg(ev(child, 'in-progress', 3, 1)), hint);
    await post(bobLeg(ev(child, 'completed', 33, 2, 30)), hint);
    await post(softphoneLeg({ ...ev(parent, 'completed', 34, 1, 34), identity: 'alice', to: `client:${AGENT}` }));
    // Assess
    expect(await callOf(parent)).toEqual({
      id: expect.any(String),
      direction: 'outbound',
      fromNumber: 'client:alice',
      toNumber: `client:${AGENT}`,
      status: 'completed',
      startedAt: iso(0),
      answeredAt: iso(3),
      endedAt: iso(33),
      durationSec: 30,
      isInternal: true,
      agentId: AGENT,
      contactId: null,
    });
  });

  it('keeps one call through a transfer to a second agent, the first agent to answer staying its agent', async () => {
    // Prepare
    const parent = nextSid();
    const first = nextSid();
    const second = nextSid();
    const caller = nextCaller();
    const leg = (callSid: string, agent: string) => (e: LegEvent) =>
      dialLeg({ ...e, callSid, parentCallSid: parent, from: caller, to: `client:${agent}` });
    const pstn = (e: LegEvent) => pstnInboundLeg({ ...e, from: caller, to: ORG });
    const callsOfCaller = async () =>
      (await listCalls(tenantId, { limit: 100 })).items.filter((c) => c.fromNumber === caller);
    // Act
    await postAll([
      pstn(ev(parent, 'in-progress', 0, 0)),
      leg(first, AGENT)(ev(first, 'in-progress', 4, 0)),
      leg(second, AGENT_2)(ev(second, 'ringing', 30, 0)),
      leg(first, AGENT)(ev(first, 'completed', 31, 1, 27)),
      leg(second, AGENT_2)(ev(second, 'in-progress', 35, 1)),
      leg(second, AGENT_2)(ev(second, 'completed', 90, 2, 55)),
      pstn(ev(parent, 'completed', 91, 1, 91)),
    ]);
    // Assess
    expect(await callsOfCaller()).toHaveLength(1);
    expect(await callOf(parent)).toMatchObject({
      status: 'completed',
      answeredAt: iso(0),
      endedAt: iso(91),
      durationSec: 91,
      agentId: AGENT,
    });
  });
});

describe('callbacks in order', () => {
  /** Writes of a call row or a voicemail the engine refused for their condition, whatever site named them. */
  const refusedCallWrites = async () =>
    Object.values((await engineStats()).refusals.bySite)
      .flatMap((site) => Object.entries(site.conditions))
      .filter(([condition]) => condition.endsWith('T#* CALL#*') || condition.endsWith('T#* VOICEMAIL#*'))
      .reduce((sum, [, count]) => sum + count, 0);

  it('write only what each adds: no write of the call row is refused for a fact it holds, nor a voicemail it lacks', async () => {
    // Prepare
    const parent = nextSid();
    const child = nextSid();
    const caller = nextCaller();
    const agentLeg = (e: LegEvent) => dialLeg({ ...e, parentCallSid: parent, from: caller, to: `client:${AGENT}` });
    const pstn = (e: LegEvent) => pstnInboundLeg({ ...e, from: caller, to: ORG });
    const before = onLimitsEngine() ? await refusedCallWrites() : 0;
    // Act
    await postAll([
      pstn(ev(parent, 'ringing', 0, 0)),
      agentLeg(ev(child, 'ringing', 1, 0)),
      pstn(ev(parent, 'in-progress', 5, 1)),
      agentLeg(ev(child, 'in-progress', 5, 1)),
      agentLeg(ev(child, 'completed', 35, 2, 30)),
      pstn(ev(parent, 'completed', 36, 2, 36)),
    ]);
    // Assess
    expect(await callOf(parent)).toMatchObject({ status: 'completed', answeredAt: iso(5), agentId: AGENT });
    if (onLimitsEngine()) expect((await refusedCallWrites()) - before).toBe(0);
  });
});

describe('callbacks out of order, twice, or at once', () => {
  it('never moves a call backwards, and a late answer corrects an ending that looked unanswered', async () => {
    // Prepare
    const parent = nextSid();
    const caller = nextCaller();
    const pstn = (e: LegEvent) => pstnInboundLeg({ ...e, from: caller, to: ORG });
    // Act + Assess, step by step
    await post(pstn(ev(parent, 'completed', 50, 3, 48)));
    expect(await callOf(parent)).toMatchObject({ status: 'no-answer', answeredAt: null, endedAt: iso(50) });
    await post(pstn(ev(parent, 'in-progress', 2, 1)));
    expect(await callOf(parent)).toMatchObject({
      status: 'completed',
      answeredAt: iso(2),
      endedAt: iso(50),
      durationSec: 48,
    });
    await post(pstn(ev(parent, 'ringing', 0, 0)));
    expect(await callOf(parent)).toMatchObject({
      status: 'completed',
      answeredAt: iso(2),
      endedAt: iso(50),
      durationSec: 48,
    });
  });

  it('changes nothing at all on a repeated callback (so no second call.completed can be derived)', async () => {
    // Prepare
    const parent = nextSid();
    const caller = nextCaller();
    const pstn = (e: LegEvent) => pstnInboundLeg({ ...e, from: caller, to: ORG });
    await postAll([
      pstn(ev(parent, 'ringing', 0, 0)),
      pstn(ev(parent, 'in-progress', 3, 1)),
      pstn(ev(parent, 'completed', 20, 2, 17)),
    ]);
    const before = await rawCall(parent);
    // Act
    await postAll([
      pstn(ev(parent, 'completed', 20, 2, 17)),
      pstn(ev(parent, 'in-progress', 3, 1)),
      pstn(ev(parent, 'busy', 21, 3)),
    ]);
    // Assess
    expect(await rawCall(parent)).toEqual(before);
    expect(before).toMatchObject({ status: 'completed', statusRank: 3 });
  });

  it('keeps in-progress when ringing arrives after it', async () => {
    // Prepare
    const parent = nextSid();
    const caller = nextCaller();
    const pstn = (e: LegEvent) => pstnInboundLeg({ ...e, from: caller, to: ORG });
    // Act
    await postAll([pstn(ev(parent, 'in-progress', 4, 1)), pstn(ev(parent, 'ringing', 0, 0))]);
    // Assess
    expect(await callOf(parent)).toMatchObject({ status: 'in-progress', answeredAt: iso(4), endedAt: null });
  });

  it('creates exactly one call when the first callbacks of its legs arrive concurrently', async () => {
    // Prepare
    const parent = nextSid();
    const caller = nextCaller();
    const forms = [
      ...Array.from({ length: 6 }, () => pstnInboundLeg({ ...ev(parent, 'ringing', 0, 0), from: caller, to: ORG })),
      ...Array.from({ length: 6 }, (_, i) =>
        dialLeg({
          ...ev(sid('CA', 9000 + i), 'ringing', 1, 0),
          parentCallSid: parent,
          from: caller,
          to: `client:${AGENT}`,
        }),
      ),
    ];
    const countCalls = async () =>
      (await listCalls(tenantId, { direction: 'inbound', limit: 100 })).items.filter((c) => c.fromNumber === caller)
        .length;
    const meters = await markRaceMeters();
    // Act: the agents' legs carry the signed tenantId, so they too may be the first to create the call.
    await Promise.all(forms.map((form) => post(form, form.ParentCallSid ? { tenantId } : {})));
    // Assess
    expect(await countCalls()).toBe(1);
    expect(await callOf(parent)).toMatchObject({
      direction: 'inbound',
      fromNumber: caller,
      toNumber: ORG,
      status: 'ringing',
    });
    await expectTransactionsMet(meters);
  }, 30_000);
});

describe('callbacks of no organization', () => {
  it('answers 200 and writes nothing for a number nobody registered', async () => {
    // Prepare
    const parent = nextSid();
    // Act
    await post(pstnInboundLeg({ ...ev(parent, 'ringing', 0, 0), from: nextCaller(), to: '+19995550000' }));
    // Assess
    expect(await findCallIdByProviderSid(tenantId, parent)).toBeUndefined();
  });

  it('refuses a tenantId that contradicts the number the call reached', async () => {
    // Prepare
    const other = (await createTenant({ name: 'Other Org', numbers: ['+14155550001'] })).id;
    const parent = nextSid();
    // Act
    await post(pstnInboundLeg({ ...ev(parent, 'ringing', 0, 0), from: nextCaller(), to: ORG }), { tenantId: other });
    // Assess
    expect(await findCallIdByProviderSid(tenantId, parent)).toBeUndefined();
    expect(await findCallIdByProviderSid(other, parent)).toBeUndefined();
  });
});
