import { z } from 'zod';
import { UsageError } from '../../usage-error';
import {
  callbackTargetIn,
  organizationNumber,
  postCallbacks,
  resolveCallbackTarget,
  TARGET_OPTIONS,
  TARGET_USAGE,
  targetFields,
  targetOf,
  type TargetInput,
} from '../carrier-post';
import {
  apiOutboundSequence,
  directInboundSequence,
  inboundCallSequence,
  internalCallSequence,
  outboundCallSequence,
  untilStatus,
  type CallSequence,
} from '../carrier-sequences';
import { option, parseOptions } from '../options';
import { defineCommand } from '../registry';

/**
 * `simulate call`: the status callbacks Twilio sends for one call, signed and posted to the
 * running runtime, so the call, its agent and the auto-created contact of the external number are
 * written by the same code as in production. Which legs are played:
 *   inbound   --agent and completed: the PSTN leg rings the agent's softphone, which answers 5 s
 *             later (answeredAt = start + 5 s; durationSec is the caller's whole leg);
 *             completed without --agent: the application answers at once (answeredAt = start);
 *             no-answer: the softphone (or the ring group) rings out; canceled, failed: the PSTN leg alone.
 *   outbound  --agent: placed from that agent's softphone; without: through the REST API from the
 *             organization's number, picked up at once when completed.
 *   internal  softphone to softphone: --from and --to are the two agents' ids; the callee answers.
 *   ringing, in-progress: the beginning of the completed call's callbacks (it stays open).
 * --duration is the talk time of an answered call and the ringing time of one nobody answered.
 */
export const CALL_STATUSES = [
  'ringing',
  'in-progress',
  'completed',
  'no-answer',
  'busy',
  'failed',
  'canceled',
] as const;
export type SimulatedCallStatus = (typeof CALL_STATUSES)[number];

export type SimulateCallArgs = {
  tenantId: string;
  direction: 'inbound' | 'outbound';
  /**
   * Inbound: the caller; outbound: the organization's caller id (default its first number); internal: the caller's
   * agent id.
   */
  from?: string;
  /**
   * Inbound: the organization's number (default its first); outbound: the number dialled; internal: the callee's agent
   * id.
   */
  to?: string;
  agentId?: string;
  /** Between two softphones of the organization. */
  internal?: boolean;
  status: SimulatedCallStatus;
  durationSec: number;
  startedAt: Date;
  target: TargetInput;
};

const DEFAULT_DURATION_SEC = 30;

const isOngoing = (status: SimulatedCallStatus): status is 'ringing' | 'in-progress' =>
  status === 'ringing' || status === 'in-progress';

/** `--<name>: <problem>` for a value whose rule depends on other options. */
function check<T extends z.ZodType>(schema: T, name: string, value: string | undefined, needed: string): z.output<T> {
  if (value === undefined) throw new UsageError(`--${name}: is required ${needed}`);
  const result = schema.safeParse(value);
  if (!result.success) throw new UsageError(`--${name}: ${result.error.issues[0].message}`);
  return result.data;
}

/** Checked in `parse`, before anything is contacted: exit 2 for a call that cannot be simulated. */
export function checkCallArgs(args: SimulateCallArgs): SimulateCallArgs {
  if (args.startedAt.getMilliseconds() !== 0)
    throw new UsageError("--started-at: whole seconds only (the provider's timestamps have no milliseconds)");
  if (isOngoing(args.status) && args.durationSec !== 0)
    throw new UsageError('--duration: only for a call that ended (not with --status ringing or in-progress)');
  if (args.internal) {
    if (args.direction !== 'outbound')
      throw new UsageError('--direction: an internal call is placed from a softphone: outbound');
    if (args.agentId)
      throw new UsageError('--agent: an internal call is between --from and --to (agent ids); the callee answers');
    check(option.uuid, 'from', args.from, 'for an internal call (the calling agent)');
    check(option.uuid, 'to', args.to, 'for an internal call (the agent called)');
    return args;
  }
  if (args.from !== undefined) check(option.e164, 'from', args.from, '');
  if (args.to !== undefined) check(option.e164, 'to', args.to, '');
  if (args.direction === 'inbound') {
    check(option.e164, 'from', args.from, 'for an inbound call (the caller)');
    if (args.status === 'busy')
      throw new UsageError('--status: an inbound call is not busy (completed, no-answer, canceled or failed)');
  } else {
    check(option.e164, 'to', args.to, 'for an outbound call (the number dialled)');
  }
  return args;
}

/** The provider's callbacks for the call (resolving the organization's number it involves). */
async function sequenceOf(args: SimulateCallArgs): Promise<CallSequence> {
  const ongoing = isOngoing(args.status) ? args.status : undefined;
  const status = ongoing ? 'completed' : args.status;
  const { tenantId, startedAt, durationSec } = args;
  let sequence: CallSequence;
  if (args.internal) {
    sequence = internalCallSequence({
      tenantId,
      callerAgentId: args.from!,
      calleeAgentId: args.to!,
      startedAt,
      status,
      durationSec,
    });
  } else if (args.direction === 'inbound') {
    const to = await organizationNumber(tenantId, args.to, 'voice');
    const ringsSoftphone = status === 'no-answer' || (status === 'completed' && args.agentId !== undefined);
    sequence = ringsSoftphone
      ? inboundCallSequence({
          tenantId,
          from: args.from!,
          to,
          startedAt,
          agentId: args.agentId,
          answered: status === 'completed',
          durationSec,
        })
      : directInboundSequence({ from: args.from!, to, startedAt, status, durationSec });
  } else {
    const from = await organizationNumber(tenantId, args.from, 'voice');
    sequence = args.agentId
      ? outboundCallSequence({ tenantId, agentId: args.agentId, from, to: args.to!, startedAt, status, durationSec })
      : apiOutboundSequence({ from, to: args.to!, startedAt, status, durationSec });
  }
  return ongoing ? untilStatus(sequence, ongoing) : sequence;
}

export async function simulateCallViaCallbacks(args: SimulateCallArgs) {
  const sequence = await sequenceOf(args);
  await postCallbacks(await resolveCallbackTarget(args.target), sequence.posts);
  const { findCallByProviderSid } = await import('../../../lambdas/contexts/calls/calls');
  const call = await findCallByProviderSid(args.tenantId, sequence.callSid);
  if (!call) throw new Error('The runtime accepted the callbacks but stored no call: is it serving the same table?');
  return { call };
}

/** Now, in whole seconds like the provider's timestamps. */
const nowInSeconds = () => new Date(Math.floor(Date.now() / 1000) * 1000);

export const simulateCall = defineCommand({
  words: ['simulate', 'call'],
  summary: 'A call through signed Twilio status callbacks posted to the running runtime (auto-creates the contact)',
  usage:
    `--tenant <id> --direction inbound|outbound --from <e164> --to <e164> [--status <${CALL_STATUSES.join('|')}>] ` +
    `[--started-at <iso>] [--duration <sec>] [--agent <uuid>] [--internal] ${TARGET_USAGE}`,
  options: {
    tenant: { type: 'string' },
    direction: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    status: { type: 'string' },
    'started-at': { type: 'string' },
    duration: { type: 'string' },
    agent: { type: 'string' },
    internal: { type: 'boolean' },
    ...TARGET_OPTIONS,
  },
  parse: ({ values }): SimulateCallArgs => {
    const o = parseOptions(
      z.object({
        tenant: option.uuid,
        direction: option.direction,
        // E.164 numbers, or agent ids with --internal: checked by checkCallArgs.
        from: z.string().optional(),
        to: z.string().optional(),
        status: z.enum(CALL_STATUSES, { error: `must be one of ${CALL_STATUSES.join(', ')}` }).optional(),
        'started-at': option.isoDateTime.optional(),
        duration: option.wholeNumber.optional(),
        agent: option.uuid.optional(),
        internal: z.boolean().optional(),
        ...targetFields,
      }),
      values,
    );
    const status = o.status ?? 'completed';
    return checkCallArgs({
      tenantId: o.tenant,
      direction: o.direction,
      from: o.from,
      to: o.to,
      agentId: o.agent,
      internal: o.internal ?? false,
      status,
      durationSec: o.duration ?? (isOngoing(status) ? 0 : DEFAULT_DURATION_SEC),
      startedAt: o['started-at'] ? new Date(o['started-at']) : nowInSeconds(),
      target: targetOf(o),
    });
  },
  run: (args, context) => simulateCallViaCallbacks({ ...args, target: callbackTargetIn(args.target, context) }),
});
