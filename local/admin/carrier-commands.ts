import { z } from 'zod';
import { inboundSmsCallback, voicemailSequence } from './carrier-sequences';
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
} from './carrier-post';
import { simulateCall } from './commands/simulate-call';
import { option, parseOptions } from './options';
import { defineCommand } from './registry';

/**
 * The operator CLI's carrier simulations: `simulate call` (commands/simulate-call.ts),
 * `simulate sms` and `simulate voicemail` make the callbacks Twilio would send, sign them like
 * Twilio (X-Twilio-Signature with the auth token the runtime checks) and POST them to the running
 * local runtime, so the whole path runs as in production: signature, organization lookup,
 * ingestion, stream, webhooks. What they created is then read back from the table and printed.
 * Only modules that touch no table are imported at the top (see options.ts); the domain modules
 * are imported in `run`, once the CLI has pointed TABLE_NAME at its target.
 */
export { postSignedCallback, type TargetInput } from './carrier-post';
export { simulateCallViaCallbacks } from './commands/simulate-call';

export type SimulateSmsArgs = { tenantId: string; from: string; to?: string; body: string; target: TargetInput };

export async function simulateSms(args: SimulateSmsArgs) {
  const to = await organizationNumber(args.tenantId, args.to, 'sms');
  const { messageSid, post } = inboundSmsCallback({ from: args.from, to, body: args.body });
  await postCallbacks(await resolveCallbackTarget(args.target), [post]);
  const { findMessageIdBySid, getMessage } = await import('../../lambdas/contexts/texting/messages');
  const messageId = await findMessageIdBySid(args.tenantId, messageSid);
  if (!messageId) throw new Error('The runtime accepted the text but stored nothing: is it serving the same table?');
  return { message: await getMessage(args.tenantId, messageId) };
}

export const simulateSmsCommand = defineCommand({
  words: ['simulate', 'sms'],
  summary: 'Receive a text: a signed Twilio inbound-text callback posted to the running runtime',
  usage: `--tenant <id> --from <e164> --body <text> [--to <org e164>] ${TARGET_USAGE}`,
  options: {
    tenant: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    body: { type: 'string' },
    ...TARGET_OPTIONS,
  },
  parse: ({ values }): SimulateSmsArgs => {
    const o = parseOptions(
      z.object({
        tenant: option.uuid,
        from: option.e164,
        to: option.e164.optional(),
        body: z.string().min(1, 'must not be empty').max(1600, 'must be at most 1600 characters'),
        ...targetFields,
      }),
      values,
    );
    return { tenantId: o.tenant, from: o.from, to: o.to, body: o.body, target: targetOf(o) };
  },
  run: (args, context) => simulateSms({ ...args, target: callbackTargetIn(args.target, context) }),
});

export type SimulateVoicemailArgs = {
  tenantId: string;
  from: string;
  to?: string;
  transcript?: string;
  target: TargetInput;
};

export async function simulateVoicemail(args: SimulateVoicemailArgs) {
  const to = await organizationNumber(args.tenantId, args.to, 'voice');
  const { callSid, posts } = voicemailSequence({
    tenantId: args.tenantId,
    from: args.from,
    to,
    startedAt: new Date(),
    transcript: args.transcript,
    durationSec: 14,
  });
  await postCallbacks(await resolveCallbackTarget(args.target), posts);
  const { getVoicemail } = await import('../../lambdas/contexts/calls/voicemails');
  const voicemail = await getVoicemail(args.tenantId, callSid);
  if (!voicemail)
    throw new Error('The runtime accepted the callbacks but stored no voicemail: is it serving the same table?');
  const { tenantId: _tenantId, ...shown } = voicemail;
  return { voicemail: shown };
}

export const simulateVoicemailCommand = defineCommand({
  words: ['simulate', 'voicemail'],
  summary: 'A missed call that leaves a voicemail (signed callbacks: call status, transcription, recording)',
  usage: `--tenant <id> --from <e164> [--to <org e164>] [--transcript <text>] ${TARGET_USAGE}`,
  options: {
    tenant: { type: 'string' },
    from: { type: 'string' },
    to: { type: 'string' },
    transcript: { type: 'string' },
    ...TARGET_OPTIONS,
  },
  parse: ({ values }): SimulateVoicemailArgs => {
    const o = parseOptions(
      z.object({
        tenant: option.uuid,
        from: option.e164,
        to: option.e164.optional(),
        transcript: option.text.optional(),
        ...targetFields,
      }),
      values,
    );
    return { tenantId: o.tenant, from: o.from, to: o.to, transcript: o.transcript, target: targetOf(o) };
  },
  run: (args, context) => simulateVoicemail({ ...args, target: callbackTargetIn(args.target, context) }),
});

/** What local/admin/commands/index.ts registers. */
export const CARRIER_COMMANDS = [simulateCall, simulateSmsCommand, simulateVoicemailCommand];
