import { carrierRoutes } from '../../lambdas/handlers/carrier/routes';
import {
  apiOutboundSequence,
  directInboundSequence,
  inboundCallSequence,
  internalCallSequence,
  outboundCallSequence,
  untilStatus,
  type CallSequence,
} from '../../local/admin/carrier-sequences';

/** What the simulate commands post, as (leg, status, seconds after the start, CallDuration). */
const TENANT = '0199a000-0000-7000-8000-000000000001';
const AGENT = '0199a000-0000-7000-8000-0000000000a1';
const T0 = new Date('2026-03-01T09:00:00Z');

function legsOf(sequence: CallSequence) {
  return sequence.posts.map(({ params }) => [
    params.CallSid === sequence.callSid ? 'parent' : 'child',
    params.CallStatus,
    (Date.parse(params.Timestamp) - T0.getTime()) / 1000,
    params.CallDuration,
  ]);
}

describe('the callbacks of a simulated call', () => {
  it('answers an inbound call in the application at once: the PSTN leg alone, talk time as its duration', () => {
    const sequence = directInboundSequence({
      from: '+14155550101',
      to: '+15005550006',
      startedAt: T0,
      status: 'completed',
      durationSec: 65,
    });

    expect(legsOf(sequence)).toEqual([
      ['parent', 'ringing', 0, undefined],
      ['parent', 'in-progress', 0, undefined],
      ['parent', 'completed', 65, '65'],
    ]);
    expect(
      sequence.posts.every((post) => post.route === carrierRoutes.twilioVoiceStatus && post.query === undefined),
    ).toBe(true);
  });

  it('rings the agent softphone as a child leg whose callback URL names the organization', () => {
    const sequence = inboundCallSequence({
      tenantId: TENANT,
      from: '+14155550101',
      to: '+15005550006',
      startedAt: T0,
      agentId: AGENT,
      durationSec: 30,
    });
    const children = sequence.posts.filter((post) => post.params.ParentCallSid === sequence.callSid);

    expect(children.map((post) => [post.params.To, post.query])).toEqual(
      children.map(() => [`client:${AGENT}`, { tenantId: TENANT }]),
    );
    expect(legsOf(sequence).at(-1)).toEqual(['parent', 'completed', 36, '36']);
  });

  it('places an outbound call from the softphone: the parent first and last, the dialled child carries the outcome', () => {
    const sequence = outboundCallSequence({
      tenantId: TENANT,
      agentId: AGENT,
      from: '+15005550006',
      to: '+14155550102',
      startedAt: T0,
      status: 'no-answer',
      durationSec: 20,
    });

    expect(legsOf(sequence)).toEqual([
      ['parent', 'initiated', 0, undefined],
      ['child', 'ringing', 1, undefined],
      ['child', 'no-answer', 21, '20'],
      ['parent', 'completed', 22, '22'],
    ]);
    expect(sequence.posts[0]).toMatchObject({
      query: { tenantId: TENANT },
      params: { From: `client:${AGENT}`, To: '+14155550102' },
    });
  });

  it('places an outbound call through the REST API from the organization number', () => {
    const sequence = apiOutboundSequence({
      from: '+15005550006',
      to: '+14155550102',
      startedAt: T0,
      status: 'busy',
      durationSec: 5,
    });

    expect(legsOf(sequence)).toEqual([
      ['parent', 'ringing', 0, undefined],
      ['parent', 'busy', 5, '5'],
    ]);
    expect(sequence.posts[0].params).toMatchObject({ Direction: 'outbound-api', From: '+15005550006' });
  });

  it('calls between two softphones with the organization named on every leg', () => {
    const sequence = internalCallSequence({
      tenantId: TENANT,
      callerAgentId: AGENT,
      calleeAgentId: 'b',
      startedAt: T0,
      status: 'completed',
      durationSec: 10,
    });

    expect(
      sequence.posts.every(
        (post) =>
          post.query?.tenantId === TENANT && post.params.From === `client:${AGENT}` && post.params.To === 'client:b',
      ),
    ).toBe(true);
  });

  it('keeps an ongoing call open: only the callbacks up to its status', () => {
    const completed = inboundCallSequence({
      tenantId: TENANT,
      from: '+14155550101',
      to: '+15005550006',
      startedAt: T0,
      agentId: AGENT,
      durationSec: 30,
    });

    expect(legsOf(untilStatus(completed, 'ringing')).map(([, status]) => status)).toEqual(['ringing', 'ringing']);
    expect(legsOf(untilStatus(completed, 'in-progress')).map(([, status]) => status)).toEqual([
      'ringing',
      'ringing',
      'in-progress',
      'in-progress',
    ]);
  });
});
