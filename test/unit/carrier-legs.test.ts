import {
  agentIdOf,
  callChangeOfLeg,
  eventTime,
  rootCallSidOf,
  voiceClues,
} from '../../lambdas/contexts/carrier/internal/voice-legs';
import { VoiceStatusParams } from '../../lambdas/contexts/carrier/internal/callback-params';
import { dialLeg, pstnInboundLeg, sid, softphoneLeg, twilioTime } from '../fixtures/twilio/callbacks';

const ORG = '+14155550000';
const CALLER = '+14155550199';
const AGENT = '0199a000-0000-7000-8000-0000000000a1';
const T0 = new Date('2026-11-21T10:00:00.000Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);
const received = new Date('2026-11-21T11:00:00.000Z');
const parent = sid('CA', 1);
const child = sid('CA', 2);
const orgNumbers = new Set([ORG]);

const parse = (form: Record<string, string>) => VoiceStatusParams.parse(form);
const change = (form: Record<string, string>) => callChangeOfLeg(parse(form), orgNumbers, received);

describe('mapping a PSTN parent leg (inbound)', () => {
  it('is the inbound call from the caller to the organization number, whose progress and answer it reports', () => {
    // Act
    const ringing = change(
      pstnInboundLeg({ callSid: parent, status: 'ringing', at: at(0), sequence: 0, from: CALLER, to: ORG }),
    );
    const answered = change(
      pstnInboundLeg({ callSid: parent, status: 'in-progress', at: at(3), sequence: 1, from: CALLER, to: ORG }),
    );
    // Assess
    expect(ringing).toEqual({
      at: at(0),
      externalNumbers: [CALLER],
      classification: {
        rank: 3,
        direction: 'inbound',
        isInternal: false,
        fromNumber: CALLER,
        toNumber: ORG,
        outcomeLeg: 'parent',
      },
      progress: 'ringing',
      answeredAt: undefined,
      end: undefined,
    });
    expect(answered).toMatchObject({ progress: 'in-progress', answeredAt: at(3) });
  });

  it('ends the call with its status and CallDuration, as no-answer when nobody answered a completed call', () => {
    // Act
    const ended = change(
      pstnInboundLeg({
        callSid: parent,
        status: 'completed',
        at: at(60),
        sequence: 3,
        duration: 57,
        from: CALLER,
        to: ORG,
      }),
    );
    const busy = change(
      pstnInboundLeg({ callSid: parent, status: 'busy', at: at(5), sequence: 1, from: CALLER, to: ORG }),
    );
    // Assess
    expect(ended.end).toEqual({ status: 'completed', durationSec: 57, endedAt: at(60), unansweredStatus: 'no-answer' });
    expect(busy.end).toEqual({ status: 'busy', durationSec: 0, endedAt: at(5) });
    expect(ended.progress).toBeUndefined();
  });
});

describe('mapping child legs', () => {
  it('takes the answering agent from a client:<uuid> child and lets the parent carry the outcome', () => {
    // Act
    const agentAnswers = change(
      dialLeg({
        callSid: child,
        parentCallSid: parent,
        status: 'in-progress',
        at: at(8),
        sequence: 2,
        from: CALLER,
        to: `client:${AGENT}`,
      }),
    );
    const agentHangsUp = change(
      dialLeg({
        callSid: child,
        parentCallSid: parent,
        status: 'completed',
        at: at(50),
        sequence: 3,
        duration: 42,
        from: CALLER,
        to: `client:${AGENT}`,
      }),
    );
    // Assess
    expect(agentAnswers).toMatchObject({
      classification: { rank: 2, direction: 'inbound', isInternal: false, fromNumber: CALLER, outcomeLeg: 'parent' },
      progress: 'in-progress',
      answeredAt: at(8),
      agentId: AGENT,
    });
    expect(agentHangsUp).toMatchObject({
      answeredAt: at(8),
      agentId: AGENT,
      end: { status: 'completed', onlyIfOutcomeLeg: 'child' },
    });
  });

  it('makes a softphone call outbound from the caller id to the dialled number, the child carrying the outcome', () => {
    // Act
    const dialled = change(
      dialLeg({
        callSid: child,
        parentCallSid: parent,
        status: 'no-answer',
        at: at(30),
        sequence: 2,
        from: ORG,
        to: CALLER,
      }),
    );
    // Assess
    expect(dialled).toMatchObject({
      externalNumbers: [CALLER],
      classification: {
        rank: 2,
        direction: 'outbound',
        isInternal: false,
        fromNumber: ORG,
        toNumber: CALLER,
        outcomeLeg: 'child',
      },
      answeredAt: undefined,
      agentId: undefined,
      end: { status: 'no-answer', endedAt: at(30), onlyIfOutcomeLeg: 'child' },
    });
  });

  it('makes a call between two client identities internal, with no external number', () => {
    // Act
    const internal = change(
      dialLeg({
        callSid: child,
        parentCallSid: parent,
        status: 'in-progress',
        at: at(4),
        sequence: 1,
        from: 'client:alice',
        to: `client:${AGENT}`,
      }),
    );
    // Assess
    expect(internal).toMatchObject({
      externalNumbers: [],
      classification: {
        rank: 2,
        isInternal: true,
        fromNumber: 'client:alice',
        toNumber: `client:${AGENT}`,
        outcomeLeg: 'child',
      },
      agentId: AGENT,
    });
  });

  it('keys every leg by the parent sid', () => {
    // Act + Assess
    expect(
      rootCallSidOf(
        parse(
          dialLeg({
            callSid: child,
            parentCallSid: parent,
            status: 'ringing',
            at: at(1),
            sequence: 0,
            from: CALLER,
            to: 'client:x',
          }),
        ),
      ),
    ).toBe(parent);
    expect(
      rootCallSidOf(
        parse(pstnInboundLeg({ callSid: parent, status: 'ringing', at: at(0), sequence: 0, from: CALLER, to: ORG })),
      ),
    ).toBe(parent);
  });
});

describe('mapping the softphone parent leg', () => {
  it('reports neither progress nor an answer, names the caller as agent and only closes the call as a fallback', () => {
    // Act
    const connected = change(
      softphoneLeg({ callSid: parent, status: 'in-progress', at: at(1), sequence: 1, identity: AGENT, to: CALLER }),
    );
    const ended = change(
      softphoneLeg({
        callSid: parent,
        status: 'completed',
        at: at(40),
        sequence: 2,
        duration: 39,
        identity: AGENT,
        to: CALLER,
      }),
    );
    // Assess
    expect(connected).toMatchObject({
      classification: {
        rank: 1,
        direction: 'outbound',
        fromNumber: `client:${AGENT}`,
        toNumber: CALLER,
        outcomeLeg: 'child',
      },
      agentId: AGENT,
    });
    expect(connected.progress).toBeUndefined();
    expect(connected.answeredAt).toBeUndefined();
    expect(ended.end).toEqual({ status: 'completed', durationSec: 39, endedAt: at(40), unansweredStatus: 'no-answer' });
  });
});

describe('finding the organization of a voice leg', () => {
  it('asks the dialled number for a PSTN parent, the call then the caller id for a child, only the call for a softphone', () => {
    // Act
    const pstn = voiceClues(
      parse(pstnInboundLeg({ callSid: parent, status: 'ringing', at: at(0), sequence: 0, from: CALLER, to: ORG })),
    );
    const out = voiceClues(
      parse(
        dialLeg({
          callSid: child,
          parentCallSid: parent,
          status: 'ringing',
          at: at(0),
          sequence: 0,
          from: ORG,
          to: CALLER,
        }),
      ),
    );
    const agentLeg = voiceClues(
      parse(
        dialLeg({
          callSid: child,
          parentCallSid: parent,
          status: 'ringing',
          at: at(0),
          sequence: 0,
          from: CALLER,
          to: 'client:bob',
        }),
      ),
      AGENT,
    );
    const softphone = voiceClues(
      parse(softphoneLeg({ callSid: parent, status: 'ringing', at: at(0), sequence: 0, identity: 'bob', to: CALLER })),
    );
    // Assess
    expect(pstn).toMatchObject({ ownNumbers: [ORG], callSid: parent });
    expect(out).toMatchObject({ ownNumbers: [ORG], callSid: parent, callFirst: true });
    expect(agentLeg).toMatchObject({ ownNumbers: [], callSid: parent, callFirst: true, tenantHint: AGENT });
    expect(softphone).toMatchObject({ ownNumbers: [], callSid: parent });
  });
});

describe('leg details', () => {
  it('reads an agent id only from client:<uuid>', () => {
    expect(agentIdOf(`client:${AGENT.toUpperCase()}`)).toBe(AGENT);
    expect(agentIdOf('client:alice')).toBeUndefined();
    expect(agentIdOf(AGENT)).toBeUndefined();
  });

  it("uses Twilio's Timestamp, falling back to the time the callback arrived", () => {
    expect(eventTime(twilioTime(at(5)), received)).toEqual(at(5));
    expect(eventTime(undefined, received)).toBe(received);
    expect(eventTime('not a date', received)).toBe(received);
  });
});
