import { isE164 } from '../../../shared/phone';
import { isTerminalCallStatus, type CallClassification, type CallLegChange } from '../../calls/calls';
import type { OrganizationClues } from '../organization';
import type { VoiceStatusParams } from './callback-params';

/**
 * Twilio call legs -> one logical call. Twilio reports each leg separately, with its own sid:
 * - an inbound call is the PSTN leg (From external, To one of the organization's numbers, no
 *   ParentCallSid); agents' softphones ring as `outbound-dial` children (To `client:<id>`);
 * - a call placed from the softphone is a `client:` parent leg plus an `outbound-dial` child to
 *   the external number (From: the organization's caller id): the call is outbound, from that
 *   number to the external one, and the child's outcome is the call's;
 * - a call between two `client:` identities is internal;
 * - a transfer is a second child of the same parent: still the same call.
 * So the call is keyed by the parent's sid, and each leg contributes what it knows, ranked so a
 * leg that knows more (the PSTN parent) overrides a guess (a child seen first).
 * Pure: no reads, no clock, so each case is a table test.
 */
const CLIENT = 'client:';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Party = { kind: 'client' | 'org' | 'external' | 'other'; raw: string };

const partyOf = (raw: string, orgNumbers: ReadonlySet<string>): Party => ({
  raw,
  kind: raw.startsWith(CLIENT) ? 'client' : isE164(raw) ? (orgNumbers.has(raw) ? 'org' : 'external') : 'other',
});

/** `client:<uuid>` -> the uuid (an agent id); any other identity names nobody the API knows. */
export function agentIdOf(party: string): string | undefined {
  const identity = party.startsWith(CLIENT) ? party.slice(CLIENT.length) : '';
  return UUID.test(identity) ? identity.toLowerCase() : undefined;
}

/** Twilio's `answered` event reports CallStatus in-progress; older Dial callbacks say answered. */
export const normalizeCallStatus = (status: string): string => {
  const s = status.trim().toLowerCase();
  return s === 'answered' ? 'in-progress' : s;
};

/** Twilio's `Timestamp` (RFC 2822) when it parses, else when we received the callback. */
export function eventTime(timestamp: string | undefined, receivedAt: Date): Date {
  const ms = timestamp ? Date.parse(timestamp) : NaN;
  return Number.isFinite(ms) ? new Date(ms) : receivedAt;
}

export const isChildLeg = (p: Pick<VoiceStatusParams, 'ParentCallSid'>): boolean => p.ParentCallSid !== undefined;

/** The parent leg's sid: the key of the logical call. */
export const rootCallSidOf = (p: Pick<VoiceStatusParams, 'CallSid' | 'ParentCallSid'>): string =>
  p.ParentCallSid ?? p.CallSid;

/** Where the organization of a voice status callback is found (see organization.ts). */
export function voiceClues(p: VoiceStatusParams, tenantHint?: string): OrganizationClues {
  const legNumbers = [p.From, p.To];
  if (isChildLeg(p)) {
    // A child's From is the caller id: the organization's number only when it dials out.
    const dialsOut = isE164(p.To);
    return { ownNumbers: dialsOut ? [p.From] : [], legNumbers, callSid: rootCallSidOf(p), callFirst: true, tenantHint };
  }
  if (p.From.startsWith(CLIENT)) return { ownNumbers: [], legNumbers, callSid: p.CallSid, tenantHint };
  return { ownNumbers: p.Direction === 'outbound-api' ? [p.From] : [p.To], legNumbers, callSid: p.CallSid, tenantHint };
}

const classification = (
  rank: number,
  direction: CallClassification['direction'],
  from: Party,
  to: Party,
  outcomeLeg: CallClassification['outcomeLeg'],
): CallClassification => ({
  rank,
  direction,
  isInternal: from.kind === 'client' && to.kind === 'client',
  fromNumber: from.raw,
  toNumber: to.raw,
  outcomeLeg,
});

/** Ranks of what a leg knows about the call (see CallClassification). */
const GUESS = 0;
const SOFTPHONE_PARENT = 1;
const CHILD = 2;
const PSTN_PARENT = 3;

/** What a leg's callback says before the leg's place (child, softphone, API, PSTN) decides what counts. */
type LegFacts = {
  status: string;
  at: Date;
  from: Party;
  to: Party;
  terminal: boolean;
  /** A status that moves the call along, when this leg speaks for it. */
  progressed: string | undefined;
  durationSec: number | null;
  /** What every leg's change carries. */
  base: { at: Date; externalNumbers: string[] };
};

function legFactsOf(p: VoiceStatusParams, orgNumbers: ReadonlySet<string>, receivedAt: Date): LegFacts {
  const status = normalizeCallStatus(p.CallStatus);
  const at = eventTime(p.Timestamp, receivedAt);
  const from = partyOf(p.From, orgNumbers);
  const to = partyOf(p.To, orgNumbers);
  const externalNumbers = [from, to].filter((party) => party.kind === 'external').map((party) => party.raw);
  return {
    status,
    at,
    from,
    to,
    terminal: isTerminalCallStatus(status),
    progressed: status === 'ringing' || status === 'in-progress' ? status : undefined,
    durationSec: p.CallDuration ?? null,
    base: { at, externalNumbers },
  };
}

/** One voice status callback in the call's terms. */
export function callChangeOfLeg(
  p: VoiceStatusParams,
  orgNumbers: ReadonlySet<string>,
  receivedAt: Date,
): CallLegChange {
  const leg = legFactsOf(p, orgNumbers, receivedAt);
  if (isChildLeg(p)) return childLegChange(leg);
  const clickToCall = p.Direction === 'outbound-api' && leg.to.kind === 'client';
  if (leg.from.kind === 'client' || clickToCall) return softphoneParentChange(leg);
  if (p.Direction === 'outbound-api') return apiParentChange(leg);
  return pstnParentChange(leg);
}

/** A child leg: an agent rung, a number dialled, a softphone called; it ends the call only where it carries the outcome. */
function childLegChange({ status, at, from, to, terminal, progressed, durationSec, base }: LegFacts): CallLegChange {
  const c =
    to.kind === 'client' && from.kind === 'client'
      ? classification(CHILD, 'outbound', from, to, 'child') // softphone to softphone
      : to.kind === 'client' && from.kind === 'external'
        ? classification(CHILD, 'inbound', from, to, 'parent') // an agent rung for a PSTN caller
        : to.kind === 'external' && from.kind !== 'external'
          ? classification(CHILD, 'outbound', from, to, 'child') // dialled out with the organization's caller id
          : classification(GUESS, from.kind === 'external' ? 'inbound' : 'outbound', from, to, 'parent');
  const answeredAt = answeredAtOf(status, at, durationSec);
  return {
    ...base,
    classification: c,
    progress: progressed,
    answeredAt,
    agentId: answeredAt !== undefined && to.kind === 'client' ? agentIdOf(to.raw) : undefined,
    end: terminal ? { status, durationSec, endedAt: at, onlyIfOutcomeLeg: 'child' } : undefined,
  };
}

/**
 * The organization's own person is on this leg: its ringing and answering are not the call's; the
 * dialled child carries the outcome, and this leg's end only closes a call the child never ended.
 */
function softphoneParentChange({ status, at, from, to, terminal, durationSec, base }: LegFacts): CallLegChange {
  return {
    ...base,
    classification: classification(SOFTPHONE_PARENT, 'outbound', from, to, 'child'),
    // The person who placed an external call, or the agent a click-to-call rings first; between
    // two softphones it is the one who answers (the child), not the caller.
    agentId: from.kind !== 'client' ? agentIdOf(to.raw) : to.kind !== 'client' ? agentIdOf(from.raw) : undefined,
    end: terminal ? endOf(status, durationSec, at) : undefined,
  };
}

/** Placed through the REST API to a number: like a dialled child, `completed` means answered. */
function apiParentChange({ status, at, from, to, terminal, progressed, durationSec, base }: LegFacts): CallLegChange {
  return {
    ...base,
    classification: classification(PSTN_PARENT, 'outbound', from, to, 'parent'),
    progress: progressed,
    answeredAt: answeredAtOf(status, at, durationSec),
    end: terminal ? { status, durationSec, endedAt: at } : undefined,
  };
}

/** A PSTN caller's leg: the call's own, answered when it goes in-progress. */
function pstnParentChange({ status, at, from, to, terminal, progressed, durationSec, base }: LegFacts): CallLegChange {
  return {
    ...base,
    classification: classification(PSTN_PARENT, 'inbound', from, to, 'parent'),
    progress: progressed,
    answeredAt: status === 'in-progress' ? at : undefined,
    end: terminal ? endOf(status, durationSec, at) : undefined,
  };
}

/**
 * A dialled leg only completes after it was answered, so its `completed` (CallDuration seconds
 * after the answer) proves the answer even when the `answered` event was not subscribed.
 */
const answeredAtOf = (status: string, at: Date, durationSec: number | null): Date | undefined =>
  status === 'in-progress'
    ? at
    : status === 'completed'
      ? new Date(at.getTime() - (durationSec ?? 0) * 1000)
      : undefined;

/**
 * A parent leg's end. Twilio reports `completed` for any call it picked up, including one that
 * rang out to voicemail; the call is `no-answer` unless some leg that counts was answered
 * (the PSTN parent going in-progress, or a dialled child), decided by the row's own answeredAt.
 */
const endOf = (status: string, durationSec: number | null, at: Date): NonNullable<CallLegChange['end']> => ({
  status,
  durationSec,
  endedAt: at,
  ...(status === 'completed' && { unansweredStatus: 'no-answer' }),
});
