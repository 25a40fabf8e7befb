import { randomBytes } from 'node:crypto';
import { carrierRoutes, type CarrierRouteSpec } from '../../lambdas/handlers/carrier/routes';
import { TENANT_HINT_PARAM } from '../../lambdas/contexts/carrier/tenant-hint';

/**
 * The callbacks Twilio would send for a simulated call, voicemail or text: form fields as the
 * provider names them, one post per callback, in the provider's order. Pure: no table, no
 * network, no clock (the caller gives the times), so the operator CLI can build them before it
 * contacts anything and tests can read them.
 */
export type CallbackPost = {
  route: CarrierRouteSpec;
  params: Record<string, string>;
  /** Query parameters of the callback URL (signed with it), e.g. the organization's `tenantId`. */
  query?: Record<string, string>;
};

export const newSid = (kind: 'CA' | 'RE' | 'TR' | 'SM'): string => `${kind}${randomBytes(16).toString('hex')}`;

/** Twilio's Timestamp format (RFC 2822): whole seconds. */
const twilioTime = (at: Date): string => at.toUTCString().replace('GMT', '+0000');
const plus = (at: Date, seconds: number): Date => new Date(at.getTime() + seconds * 1000);
const SIMULATED_ACCOUNT = 'AC00000000000000000000000000000000';

type Leg = { callSid: string; status: string; at: Date; sequence: number; duration?: number };

function legParams(leg: Leg, fields: Record<string, string>): Record<string, string> {
  return {
    AccountSid: SIMULATED_ACCOUNT,
    ApiVersion: '2010-04-01',
    CallSid: leg.callSid,
    CallStatus: leg.status,
    CallbackSource: 'call-progress-events',
    SequenceNumber: String(leg.sequence),
    Timestamp: twilioTime(leg.at),
    Caller: fields.From,
    Called: fields.To,
    ...(leg.duration !== undefined && {
      CallDuration: String(leg.duration),
      Duration: String(Math.ceil(leg.duration / 60)),
    }),
    ...fields,
  };
}

const voice = carrierRoutes.twilioVoiceStatus;

export type CallSequence = { callSid: string; posts: CallbackPost[] };

// ---------- inbound ----------

export type InboundCallInput = {
  tenantId: string;
  from: string;
  /** The organization's number the caller dialled. */
  to: string;
  startedAt: Date;
  /** The agent whose softphone (`client:<agentId>`) rings; none: the ring group's. */
  agentId?: string;
  /** Default: answered when an agent is named. */
  answered?: boolean;
  /** Seconds talked after the answer (or ringing before the caller gives up). */
  durationSec: number;
  callSid?: string;
};

/**
 * An inbound call: the PSTN parent rings and Twilio rings the agent's softphone as an
 * outbound-dial child. Answered: the parent goes in-progress, the child answers, talks and
 * completes, then the parent completes. Not answered: the child rings out (no-answer) and the
 * parent completes, which the service records as no-answer. The children's callback URL names
 * the organization (`tenantId`): their legs carry no number of it.
 */
export function inboundCallSequence(input: InboundCallInput): CallSequence {
  const callSid = input.callSid ?? newSid('CA');
  const childSid = newSid('CA');
  const t0 = input.startedAt;
  const parent = (status: string, at: Date, sequence: number, duration?: number): CallbackPost => ({
    route: voice,
    params: legParams(
      { callSid, status, at, sequence, duration },
      { Direction: 'inbound', From: input.from, To: input.to },
    ),
  });
  const child = (status: string, at: Date, sequence: number, duration?: number): CallbackPost => ({
    route: voice,
    query: { [TENANT_HINT_PARAM]: input.tenantId },
    params: legParams(
      { callSid: childSid, status, at, sequence, duration },
      {
        Direction: 'outbound-dial',
        ParentCallSid: callSid,
        From: input.from,
        To: `client:${input.agentId ?? 'ring-group'}`,
      },
    ),
  });
  const answered = input.answered ?? input.agentId !== undefined;
  const end = answered ? 6 + input.durationSec : 2 + input.durationSec;
  return {
    callSid,
    posts: [
      parent('ringing', t0, 0),
      child('ringing', plus(t0, 1), 0),
      ...(answered
        ? [
            parent('in-progress', plus(t0, 5), 1),
            child('in-progress', plus(t0, 5), 1),
            child('completed', plus(t0, 5 + input.durationSec), 2, input.durationSec),
          ]
        : [child('no-answer', plus(t0, 1 + input.durationSec), 1, 0)]),
      parent('completed', plus(t0, end), 2, end),
    ],
  };
}

/**
 * An inbound call the application answers itself (an IVR, a recorded message) or that ends before
 * anyone answers (`canceled`: the caller hung up; `failed`): the PSTN leg alone. Answered at
 * once, so `answeredAt` is the start and `durationSec` the talk time.
 */
export function directInboundSequence(input: SingleLegInput): CallSequence {
  return singleLegSequence('inbound', input);
}

// ---------- outbound ----------

export type OutboundCallInput = {
  tenantId: string;
  /** The agent placing the call from the softphone (`client:<agentId>`). */
  agentId: string;
  /** The organization's caller id. */
  from: string;
  to: string;
  startedAt: Date;
  /** A terminal status: the dialled leg's outcome. */
  status: string;
  /** Talk time once answered; how long it rang otherwise. */
  durationSec: number;
};

/**
 * A call placed from the softphone: its `client:` parent (whose callback URL names the
 * organization: the leg has no number of it) and the outbound-dial child to the number, whose
 * outcome is the call's. The parent reports first (its TwiML runs before the dial) and last.
 */
export function outboundCallSequence(input: OutboundCallInput): CallSequence {
  const callSid = newSid('CA');
  const childSid = newSid('CA');
  const t0 = input.startedAt;
  const parent = (status: string, at: Date, sequence: number, duration?: number): CallbackPost => ({
    route: voice,
    query: { [TENANT_HINT_PARAM]: input.tenantId },
    params: legParams(
      { callSid, status, at, sequence, duration },
      {
        Direction: 'inbound',
        From: `client:${input.agentId}`,
        To: input.to,
        ApplicationSid: 'AP00000000000000000000000000000000',
      },
    ),
  });
  const child = (status: string, at: Date, sequence: number, duration?: number): CallbackPost => ({
    route: voice,
    params: legParams(
      { callSid: childSid, status, at, sequence, duration },
      { Direction: 'outbound-dial', ParentCallSid: callSid, From: input.from, To: input.to },
    ),
  });
  const talked = input.status === 'completed';
  const end = talked ? 5 + input.durationSec : 1 + input.durationSec;
  return {
    callSid,
    posts: [
      parent('initiated', t0, 0),
      child('ringing', plus(t0, 1), 0),
      ...(talked ? [child('in-progress', plus(t0, 5), 1)] : []),
      child(input.status, plus(t0, end), 2, input.durationSec),
      parent('completed', plus(t0, end + 1), 1, end + 1),
    ],
  };
}

/**
 * A call placed through the REST API (click-to-call without a softphone, a dialler): one
 * `outbound-api` leg from the organization's number, picked up at once when `completed`.
 */
export function apiOutboundSequence(input: SingleLegInput): CallSequence {
  return singleLegSequence('outbound-api', input);
}

// ---------- internal ----------

/**
 * A call between two softphones (`client:<callerAgentId>` to `client:<calleeAgentId>`): no
 * organization number on any leg, so every callback URL names the organization. The callee's
 * leg carries the outcome; the callee is the call's agent once it answers.
 */
export function internalCallSequence(input: {
  tenantId: string;
  callerAgentId: string;
  calleeAgentId: string;
  startedAt: Date;
  status: string;
  durationSec: number;
}): CallSequence {
  const callSid = newSid('CA');
  const childSid = newSid('CA');
  const t0 = input.startedAt;
  const fields = { From: `client:${input.callerAgentId}`, To: `client:${input.calleeAgentId}` };
  const query = { [TENANT_HINT_PARAM]: input.tenantId };
  const parent = (status: string, at: Date, sequence: number, duration?: number): CallbackPost => ({
    route: voice,
    query,
    params: legParams({ callSid, status, at, sequence, duration }, { Direction: 'inbound', ...fields }),
  });
  const child = (status: string, at: Date, sequence: number, duration?: number): CallbackPost => ({
    route: voice,
    query,
    params: legParams(
      { callSid: childSid, status, at, sequence, duration },
      { Direction: 'outbound-dial', ParentCallSid: callSid, ...fields },
    ),
  });
  const talked = input.status === 'completed';
  const end = plus(t0, input.durationSec);
  return {
    callSid,
    posts: [
      parent('initiated', t0, 0),
      child('ringing', t0, 0),
      ...(talked ? [child('in-progress', t0, 1)] : []),
      child(input.status, end, 2, input.durationSec),
      parent('completed', end, 1, input.durationSec),
    ],
  };
}

// ---------- a call still going on ----------

const PROGRESS: Record<string, number> = { initiated: 0, queued: 0, ringing: 1, 'in-progress': 2 };
/** Ringing 1, in progress 2, anything else (an end) 3, as the call row ranks them. */
const rankOf = (status: string): number => PROGRESS[status] ?? 3;

/**
 * The beginning of a call's sequence, up to the callbacks of `status` (`ringing` or
 * `in-progress`): what the provider has sent while the call is still going on.
 */
export function untilStatus(sequence: CallSequence, status: 'ringing' | 'in-progress'): CallSequence {
  const cut = sequence.posts.findIndex((post) => rankOf(post.params.CallStatus) > rankOf(status));
  return { callSid: sequence.callSid, posts: cut === -1 ? sequence.posts : sequence.posts.slice(0, cut) };
}

// ---------- voicemail and texts ----------

export type VoicemailInput = {
  tenantId: string;
  from: string;
  to: string;
  startedAt: Date;
  transcript?: string;
  durationSec: number;
};

/**
 * A caller nobody answered leaves a voicemail: the call's callbacks, then (Twilio's usual order
 * when transcribing) the transcription, then the recording; ready with the transcript.
 */
export function voicemailSequence(input: VoicemailInput): CallSequence {
  const call = inboundCallSequence({
    tenantId: input.tenantId,
    from: input.from,
    to: input.to,
    startedAt: input.startedAt,
    durationSec: 20,
  });
  const recordingSid = newSid('RE');
  const recordedAt = plus(input.startedAt, 22);
  const recordingUrl = `https://api.twilio.com/2010-04-01/Accounts/${SIMULATED_ACCOUNT}/Recordings/${recordingSid}`;
  const transcription: CallbackPost[] =
    input.transcript === undefined
      ? []
      : [
          {
            route: carrierRoutes.twilioVoiceTranscription,
            params: {
              AccountSid: SIMULATED_ACCOUNT,
              ApiVersion: '2010-04-01',
              CallSid: call.callSid,
              CallStatus: 'completed',
              Direction: 'inbound',
              From: input.from,
              To: input.to,
              RecordingSid: recordingSid,
              RecordingUrl: recordingUrl,
              TranscriptionSid: newSid('TR'),
              TranscriptionStatus: 'completed',
              TranscriptionText: input.transcript,
              TranscriptionType: 'fast',
            },
          },
        ];
  const recording: CallbackPost = {
    route: carrierRoutes.twilioVoiceRecording,
    params: {
      AccountSid: SIMULATED_ACCOUNT,
      CallSid: call.callSid,
      RecordingSid: recordingSid,
      RecordingUrl: recordingUrl,
      RecordingStatus: 'completed',
      RecordingDuration: String(input.durationSec),
      RecordingChannels: '1',
      RecordingStartTime: twilioTime(recordedAt),
      RecordingSource: 'RecordVerb',
      ErrorCode: '0',
    },
  };
  return { callSid: call.callSid, posts: [...call.posts, ...transcription, recording] };
}

export function inboundSmsCallback(input: { from: string; to: string; body: string; messageSid?: string }): {
  messageSid: string;
  post: CallbackPost;
} {
  const messageSid = input.messageSid ?? newSid('SM');
  return {
    messageSid,
    post: {
      route: carrierRoutes.twilioSmsInbound,
      params: {
        AccountSid: SIMULATED_ACCOUNT,
        ApiVersion: '2010-04-01',
        MessageSid: messageSid,
        SmsMessageSid: messageSid,
        SmsSid: messageSid,
        SmsStatus: 'received',
        NumMedia: '0',
        NumSegments: '1',
        From: input.from,
        To: input.to,
        Body: input.body,
      },
    },
  };
}

type SingleLegInput = { from: string; to: string; startedAt: Date; status: string; durationSec: number };

/** One leg, answered at once: ringing, in progress when it was talked on, and its end after `durationSec`. */
function singleLegSequence(direction: 'inbound' | 'outbound-api', input: SingleLegInput): CallSequence {
  const callSid = newSid('CA');
  const leg = (status: string, at: Date, sequence: number, duration?: number): CallbackPost => ({
    route: voice,
    params: legParams(
      { callSid, status, at, sequence, duration },
      { Direction: direction, From: input.from, To: input.to },
    ),
  });
  const end = leg(input.status, plus(input.startedAt, input.durationSec), 2, input.durationSec);
  return {
    callSid,
    posts: [
      leg('ringing', input.startedAt, 0),
      ...(input.status === 'completed' ? [leg('in-progress', input.startedAt, 1)] : []),
      end,
    ],
  };
}
