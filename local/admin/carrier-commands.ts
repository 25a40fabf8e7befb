import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { API_PREFIX } from '../../lambdas/api/routes';
import { carrierRoutes, type CarrierRouteSpec } from '../../lambdas/carrier/routes';
import { LOCAL_TWILIO_AUTH_TOKEN } from '../../lambdas/core/carrier-callbacks/config';
import { TENANT_HINT_PARAM } from '../../lambdas/core/carrier-callbacks/organization';
import { computeTwilioSignature } from '../../lambdas/core/carrier-callbacks/signature';
import { DEFAULT_STATE_DIR } from '../cli-args';
import { isProcessAlive, readRuntimeInfo } from '../runtime-file';
import { UsageError } from '../usage-error';
import { option, parseOptions } from './options';
import { defineCommand, type OptionSpecs } from './registry';

/**
 * The operator CLI's carrier simulations: `simulate call`, `simulate sms` and `simulate voicemail`
 * make the callbacks Twilio would send, sign them like Twilio (X-Twilio-Signature with the auth
 * token the runtime checks) and POST them to the running local runtime, so the whole path runs
 * as in production: signature, organization lookup, ingestion, stream, webhooks. What they
 * created is then read back from the table and printed.
 * Only modules that touch no table are imported at the top (see options.ts); the domain modules
 * are imported in `run`, once the CLI has pointed TABLE_NAME at its target.
 */

// ---------- signing and posting ----------

export type CallbackPost = {
  route: CarrierRouteSpec;
  params: Record<string, string>;
  /** Query parameters of the callback URL (signed with it), e.g. the organization's `tenantId`. */
  query?: Record<string, string>;
};

export type PostResult = { status: number; body: string };

/**
 * POSTs one form-encoded callback to `baseUrl + path`, signed over `publicUrl + path` as Twilio
 * signs the URL it was configured with (the runtime checks against its own public URL).
 */
export async function postSignedCallback(
  baseUrl: string,
  path: string,
  params: Record<string, string>,
  authToken: string,
  publicUrl: string,
): Promise<PostResult> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      'X-Twilio-Signature': computeTwilioSignature(`${publicUrl}${path}`, params, authToken),
    },
    body: new URLSearchParams(params).toString(),
    redirect: 'error',
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: await response.text() };
}

export type CallbackTarget = { baseUrl: string; publicUrl: string; authToken: string };

/** Posts each callback in order; any answer but 200 stops the sequence with an operator's explanation. */
export async function postCallbacks(target: CallbackTarget, posts: readonly CallbackPost[]): Promise<void> {
  for (const post of posts) {
    const search = new URLSearchParams(post.query ?? {}).toString();
    const path = `${post.route.path}${search ? `?${search}` : ''}`;
    const { status } = await postSignedCallback(target.baseUrl, path, post.params, target.authToken, target.publicUrl);
    if (status === 403) {
      throw new Error(
        `${post.route.path} refused the signature (403): pass the runtime's --twilio-auth-token and --public-url to this command`,
      );
    }
    if (status !== 200) throw new Error(`${post.route.path} answered ${status}`);
  }
}

// ---------- callback sequences, shaped like Twilio's ----------

export const newSid = (kind: 'CA' | 'RE' | 'TR' | 'SM'): string => `${kind}${randomBytes(16).toString('hex')}`;

/** Twilio's Timestamp format (RFC 2822). */
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
    ...(leg.duration !== undefined && { CallDuration: String(leg.duration), Duration: String(Math.ceil(leg.duration / 60)) }),
    ...fields,
  };
}

const voice = carrierRoutes.twilioVoiceStatus;

export type InboundCallInput = {
  tenantId: string;
  from: string;
  /** The organization's number the caller dialled. */
  to: string;
  startedAt: Date;
  /** The agent whose softphone (`client:<agentId>`) answers; none: nobody answers. */
  agentId?: string;
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
export function inboundCallSequence(input: InboundCallInput): { callSid: string; posts: CallbackPost[] } {
  const callSid = input.callSid ?? newSid('CA');
  const childSid = newSid('CA');
  const t0 = input.startedAt;
  const parent = (status: string, at: Date, sequence: number, duration?: number): CallbackPost => ({
    route: voice,
    params: legParams({ callSid, status, at, sequence, duration }, { Direction: 'inbound', From: input.from, To: input.to }),
  });
  const child = (status: string, at: Date, sequence: number, duration?: number): CallbackPost => ({
    route: voice,
    query: { [TENANT_HINT_PARAM]: input.tenantId },
    params: legParams(
      { callSid: childSid, status, at, sequence, duration },
      { Direction: 'outbound-dial', ParentCallSid: callSid, From: input.from, To: `client:${input.agentId ?? 'ring-group'}` },
    ),
  });
  const answered = input.agentId !== undefined;
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

export type OutboundCallInput = {
  /** The agent placing the call from the softphone (`client:<agentId>`). */
  agentId: string;
  /** The organization's caller id. */
  from: string;
  to: string;
  startedAt: Date;
  status: 'completed' | 'no-answer' | 'busy';
  durationSec: number;
};

/** A call placed from the softphone: its `client:` parent and the outbound-dial child to the number. */
export function outboundCallSequence(input: OutboundCallInput): { callSid: string; posts: CallbackPost[] } {
  const callSid = newSid('CA');
  const childSid = newSid('CA');
  const t0 = input.startedAt;
  const parent = (status: string, at: Date, sequence: number, duration?: number): CallbackPost => ({
    route: voice,
    params: legParams(
      { callSid, status, at, sequence, duration },
      { Direction: 'inbound', From: `client:${input.agentId}`, To: input.to, ApplicationSid: 'AP00000000000000000000000000000000' },
    ),
  });
  const child = (status: string, at: Date, sequence: number, duration?: number): CallbackPost => ({
    route: voice,
    params: legParams({ callSid: childSid, status, at, sequence, duration }, { Direction: 'outbound-dial', ParentCallSid: callSid, From: input.from, To: input.to }),
  });
  const talked = input.status === 'completed';
  const end = talked ? 5 + input.durationSec : 1 + input.durationSec;
  return {
    callSid,
    posts: [
      child('ringing', plus(t0, 1), 0),
      ...(talked ? [child('in-progress', plus(t0, 5), 1)] : []),
      child(input.status, plus(t0, end), 2, talked ? input.durationSec : 0),
      // Last, like Twilio: by now the call exists, so the softphone leg finds it and names the agent.
      parent('completed', plus(t0, end + 1), 1, end + 1),
    ],
  };
}

export type VoicemailInput = { tenantId: string; from: string; to: string; startedAt: Date; transcript?: string; durationSec: number };

/**
 * A caller nobody answered leaves a voicemail: the call's callbacks, then (Twilio's usual order
 * when transcribing) the transcription, then the recording; ready with the transcript.
 */
export function voicemailSequence(input: VoicemailInput): { callSid: string; posts: CallbackPost[] } {
  const call = inboundCallSequence({ tenantId: input.tenantId, from: input.from, to: input.to, startedAt: input.startedAt, durationSec: 20 });
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

export function inboundSmsCallback(input: { from: string; to: string; body: string; messageSid?: string }): { messageSid: string; post: CallbackPost } {
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

// ---------- where to post ----------

export type TargetInput = { callbackUrl?: string; publicUrl?: string; authToken?: string; stateDir?: string };

/**
 * The running local runtime (runtime.json) unless `--callback-url` names another root (a deployed
 * stage, with its real token). The signature is made over `--public-url` (default: the runtime's
 * recorded public URL, else where it is posted) with `--twilio-auth-token` (default: the
 * TWILIO_AUTH_TOKEN environment variable, else the local runtime's documented default).
 */
export async function resolveCallbackTarget(input: TargetInput): Promise<CallbackTarget> {
  let baseUrl = input.callbackUrl;
  let recordedPublicUrl: string | undefined;
  if (!baseUrl) {
    const stateDir = input.stateDir ?? DEFAULT_STATE_DIR;
    const info = await readRuntimeInfo(stateDir);
    if (!info || !isProcessAlive(info.pid)) throw new Error(`No running local runtime recorded in ${stateDir}: start one with \`npm start\`, or pass --callback-url`);
    baseUrl = info.apiBaseUrl.endsWith(API_PREFIX) ? info.apiBaseUrl.slice(0, -API_PREFIX.length) : info.apiBaseUrl;
    // Written by runtimes that know it (`--public-url`); older runtime.json files do not have it.
    recordedPublicUrl = (info as { publicBaseUrl?: unknown }).publicBaseUrl as string | undefined;
  }
  const strip = (url: string) => url.replace(/\/+$/, '');
  return {
    baseUrl: strip(baseUrl),
    publicUrl: strip(input.publicUrl ?? recordedPublicUrl ?? baseUrl),
    authToken: input.authToken ?? process.env.TWILIO_AUTH_TOKEN ?? LOCAL_TWILIO_AUTH_TOKEN,
  };
}

// ---------- the commands ----------

const TARGET_OPTIONS = {
  'callback-url': { type: 'string' },
  'public-url': { type: 'string' },
  'twilio-auth-token': { type: 'string' },
} as const satisfies OptionSpecs;

const TARGET_USAGE = '[--callback-url <url>] [--public-url <url>] [--twilio-auth-token <token>]';

const url = z.url({ protocol: /^https?$/, error: 'must be an http or https URL' });
const targetFields = { 'callback-url': url.optional(), 'public-url': url.optional(), 'twilio-auth-token': option.text.optional() };

type TargetValues = { 'callback-url'?: string; 'public-url'?: string; 'twilio-auth-token'?: string };
const targetOf = (o: TargetValues): TargetInput => ({ callbackUrl: o['callback-url'], publicUrl: o['public-url'], authToken: o['twilio-auth-token'] });

/** The organization and the number the simulated carrier traffic reaches (its first, or its SMS number). */
async function organizationNumber(tenantId: string, given: string | undefined, kind: 'voice' | 'sms'): Promise<string> {
  const { getTenant } = await import('../../lambdas/core/tenants');
  const tenant = await getTenant(tenantId);
  if (!tenant) throw new Error(`No organization with id ${tenantId}`);
  const number = given ?? (kind === 'sms' ? (tenant.smsNumber ?? tenant.numbers[0]) : tenant.numbers[0]);
  if (!number) throw new Error(`The organization has no number: add one with \`tenant update ${tenantId} --number <e164>\``);
  if (!tenant.numbers.includes(number)) throw new Error(`${number} is not one of the organization's numbers (${tenant.numbers.join(', ') || 'none'})`);
  return number;
}

export type SimulateSmsArgs = { tenantId: string; from: string; to?: string; body: string; target: TargetInput };

export async function simulateSms(args: SimulateSmsArgs) {
  const to = await organizationNumber(args.tenantId, args.to, 'sms');
  const { messageSid, post } = inboundSmsCallback({ from: args.from, to, body: args.body });
  await postCallbacks(await resolveCallbackTarget(args.target), [post]);
  const { findMessageIdBySid, getMessage } = await import('../../lambdas/core/messages');
  const messageId = await findMessageIdBySid(args.tenantId, messageSid);
  if (!messageId) throw new Error('The runtime accepted the text but stored nothing: is it serving the same table?');
  return { message: await getMessage(args.tenantId, messageId) };
}

export const simulateSmsCommand = defineCommand({
  words: ['simulate', 'sms'],
  summary: 'Receive a text: a signed Twilio inbound-text callback posted to the running runtime',
  usage: `--tenant <id> --from <e164> --body <text> [--to <org e164>] ${TARGET_USAGE}`,
  options: { tenant: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, body: { type: 'string' }, ...TARGET_OPTIONS },
  parse: ({ values }): SimulateSmsArgs => {
    const o = parseOptions(z.object({ tenant: option.uuid, from: option.e164, to: option.e164.optional(), body: z.string().min(1).max(1600), ...targetFields }), values);
    return { tenantId: o.tenant, from: o.from, to: o.to, body: o.body, target: targetOf(o) };
  },
  run: simulateSms,
});

export type SimulateCallArgs = {
  tenantId: string;
  direction: 'inbound' | 'outbound';
  /** Inbound: the caller; outbound: the organization's caller id (default its first number). */
  from?: string;
  /** Inbound: the organization's number (default its first); outbound: the number dialled. */
  to?: string;
  agentId?: string;
  status: 'completed' | 'no-answer' | 'busy';
  durationSec: number;
  startedAt: Date;
  target: TargetInput;
};

/** Checked in `parse`, before anything is contacted: exit 2 for a call that cannot be simulated. */
function checkCallArgs(args: SimulateCallArgs): SimulateCallArgs {
  if (args.direction === 'inbound') {
    if (!args.from) throw new UsageError('--from: is required for an inbound call (the caller)');
    if (args.status === 'completed' && !args.agentId) throw new UsageError('--agent: an answered inbound call needs the agent whose softphone answers');
    if (args.status === 'busy') throw new UsageError('--status: an inbound call is completed or no-answer');
  } else if (!args.to || !args.agentId) {
    throw new UsageError('--to and --agent: an outbound call is placed by an agent to a number');
  }
  return args;
}

export async function simulateCallViaCallbacks(args: SimulateCallArgs) {
  const sequence =
    args.direction === 'inbound'
      ? inboundCallSequence({
          tenantId: args.tenantId,
          from: args.from!,
          to: await organizationNumber(args.tenantId, args.to, 'voice'),
          startedAt: args.startedAt,
          agentId: args.status === 'completed' ? args.agentId : undefined,
          durationSec: args.durationSec,
        })
      : outboundCallSequence({
          agentId: args.agentId!,
          from: await organizationNumber(args.tenantId, args.from, 'voice'),
          to: args.to!,
          startedAt: args.startedAt,
          status: args.status,
          durationSec: args.durationSec,
        });
  await postCallbacks(await resolveCallbackTarget(args.target), sequence.posts);
  const { findCallByProviderSid } = await import('../../lambdas/core/calls');
  const call = await findCallByProviderSid(args.tenantId, sequence.callSid);
  if (!call) throw new Error('The runtime accepted the callbacks but stored no call: is it serving the same table?');
  return { call };
}

export const simulateCallCommand = defineCommand({
  words: ['simulate', 'call'],
  summary: 'A call through signed Twilio status callbacks posted to the running runtime',
  usage: `--tenant <id> --direction inbound|outbound [--from <e164>] [--to <e164>] [--agent <uuid>] [--status completed|no-answer|busy] [--duration <sec>] [--started-at <iso>] ${TARGET_USAGE}`,
  options: {
    tenant: { type: 'string' },
    direction: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    agent: { type: 'string' },
    status: { type: 'string' },
    duration: { type: 'string' },
    'started-at': { type: 'string' },
    ...TARGET_OPTIONS,
  },
  parse: ({ values }): SimulateCallArgs => {
    const o = parseOptions(
      z.object({
        tenant: option.uuid,
        direction: option.direction,
        from: option.e164.optional(),
        to: option.e164.optional(),
        agent: option.uuid.optional(),
        status: z.enum(['completed', 'no-answer', 'busy'], { error: 'must be completed, no-answer or busy' }).optional(),
        duration: option.wholeNumber.optional(),
        'started-at': option.isoDateTime.optional(),
        ...targetFields,
      }),
      values,
    );
    return checkCallArgs({
      tenantId: o.tenant,
      direction: o.direction,
      from: o.from,
      to: o.to,
      agentId: o.agent,
      status: o.status ?? 'completed',
      durationSec: o.duration ?? 30,
      startedAt: o['started-at'] ? new Date(o['started-at']) : new Date(),
      target: targetOf(o),
    });
  },
  run: simulateCallViaCallbacks,
});

export type SimulateVoicemailArgs = { tenantId: string; from: string; to?: string; transcript?: string; target: TargetInput };

export async function simulateVoicemail(args: SimulateVoicemailArgs) {
  const to = await organizationNumber(args.tenantId, args.to, 'voice');
  const { callSid, posts } = voicemailSequence({ tenantId: args.tenantId, from: args.from, to, startedAt: new Date(), transcript: args.transcript, durationSec: 14 });
  await postCallbacks(await resolveCallbackTarget(args.target), posts);
  const { getVoicemail } = await import('../../lambdas/core/carrier-callbacks/voicemails');
  const voicemail = await getVoicemail(args.tenantId, callSid);
  if (!voicemail) throw new Error('The runtime accepted the callbacks but stored no voicemail: is it serving the same table?');
  const { tenantId: _tenantId, ...shown } = voicemail;
  return { voicemail: shown };
}

export const simulateVoicemailCommand = defineCommand({
  words: ['simulate', 'voicemail'],
  summary: 'A missed call that leaves a voicemail (signed callbacks: call status, transcription, recording)',
  usage: `--tenant <id> --from <e164> [--to <org e164>] [--transcript <text>] ${TARGET_USAGE}`,
  options: { tenant: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' }, transcript: { type: 'string' }, ...TARGET_OPTIONS },
  parse: ({ values }): SimulateVoicemailArgs => {
    const o = parseOptions(
      z.object({ tenant: option.uuid, from: option.e164, to: option.e164.optional(), transcript: option.text.optional(), ...targetFields }),
      values,
    );
    return { tenantId: o.tenant, from: o.from, to: o.to, transcript: o.transcript, target: targetOf(o) };
  },
  run: simulateVoicemail,
});

/** What local/admin/commands/index.ts registers (replacing the recordCall-based `simulate call`). */
export const CARRIER_COMMANDS = [simulateCallCommand, simulateSmsCommand, simulateVoicemailCommand];
