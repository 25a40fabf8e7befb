import type { z } from 'zod/mini';
import { NotFoundError, ValidationError } from '../../shared/errors';
import { findCallByProviderSid, upsertCallByProviderSid } from '../calls/calls';
import type { Call } from '../calls/schemas';
import {
  attachCallToVoicemail,
  recordVoicemailRecording,
  recordVoicemailTranscript,
  type VoicemailParties,
} from '../calls/voicemails';
import { recordConsentChange } from '../contacts/consent-copies';
import { cancelScheduledTextsTo } from '../texting/scheduled-changes';
import { recordMessageSid, updateMessageStatus } from '../texting/delivery-status';
import { receiveInboundMessage } from '../texting/receiving';
import {
  RecordingParams,
  SmsInboundParams,
  SmsStatusParams,
  TranscriptionParams,
  VoiceStatusParams,
} from './internal/callback-params';
import { deliveryStatusOfTwilio, isOptedOutCode } from './internal/twilio';
import { twilioErrorMessage } from './internal/twilio-errors';
import { callChangeOfLeg, eventTime, rootCallSidOf, voiceClues } from './internal/voice-legs';
import type { Organization, OrganizationClues } from './organization';
import { CARRIER_OPT_OUT_SOURCE } from '../consent/sources';

/**
 * Each callback kind: its fields, where its organization is found, and what it changes. The
 * handler wrapper (lambdas/handlers/carrier/callback-handler.ts) verifies the signature first and calls
 * these; the operator CLI's simulations go through the very same objects.
 */
export type Outcome = { handled: true } | { handled: false; reason: string };

export type CallbackKind<P> = {
  params: z.ZodMiniType<P>;
  clues: (params: P, tenantHint: string | undefined) => OrganizationClues;
  ingest: (params: P, organization: Organization, receivedAt: Date) => Promise<Outcome>;
};

const HANDLED: Outcome = { handled: true };
/** Reasons are logged: they never carry a body, a number or a credential. */
const ignored = (reason: string): Outcome => ({ handled: false, reason });

export const voiceStatusCallback: CallbackKind<VoiceStatusParams> = {
  params: VoiceStatusParams,
  clues: voiceClues,
  async ingest(p, organization, receivedAt) {
    const change = callChangeOfLeg(p, organization.orgNumbers, receivedAt);
    const providerCallSid = rootCallSidOf(p);
    const { callId, created } = await upsertCallByProviderSid(organization.tenantId, providerCallSid, change);
    if (created) {
      // A voicemail recorded before its call was known waits for the call's numbers (voicemails.ts).
      const { fromNumber, toNumber } = change.classification;
      await attachCallToVoicemail(organization.tenantId, providerCallSid, { fromNumber, toNumber, callId });
    }
    return HANDLED;
  },
};

/** Recording and transcription callbacks name the call; `<Record action>` requests also its numbers. */
const recordedCallClues = (
  p: { CallSid: string; From?: string; To?: string },
  tenantHint: string | undefined,
): OrganizationClues => ({
  // A voicemail is left on an inbound call: `To` is the organization's number, `From` the caller's.
  ownNumbers: p.To ? [p.To] : [],
  legNumbers: [p.To, p.From].filter((n): n is string => n !== undefined),
  callSid: p.CallSid,
  callFirst: true,
  tenantHint,
});

const partiesOf = (call: Call | undefined, p: { From?: string; To?: string }): VoicemailParties | undefined =>
  call
    ? { fromNumber: call.fromNumber, toNumber: call.toNumber, callId: call.id }
    : p.From && p.To
      ? { fromNumber: p.From, toNumber: p.To, callId: null }
      : undefined;

/**
 * After writing a voicemail that knew no numbers, look for the call once more: the call may have
 * been created meanwhile, after its own callback looked for this row. One of the two sides
 * always sees the other, so the voicemail cannot be left waiting.
 */
async function attachIfCallAppeared(
  tenantId: string,
  providerCallSid: string,
  parties: VoicemailParties | undefined,
): Promise<void> {
  if (parties) return;
  const call = await findCallByProviderSid(tenantId, providerCallSid);
  if (call)
    await attachCallToVoicemail(tenantId, providerCallSid, {
      fromNumber: call.fromNumber,
      toNumber: call.toNumber,
      callId: call.id,
    });
}

export const recordingCallback: CallbackKind<RecordingParams> = {
  params: RecordingParams,
  clues: recordedCallClues,
  async ingest(p, { tenantId }, receivedAt) {
    const status = p.RecordingStatus?.toLowerCase();
    if (status !== undefined && status !== 'completed') return ignored(`recording status ${status}`);
    const parties = partiesOf(await findCallByProviderSid(tenantId, p.CallSid), p);
    await recordVoicemailRecording(tenantId, {
      providerCallSid: p.CallSid,
      recordingSid: p.RecordingSid,
      durationSec: p.RecordingDuration ?? null,
      createdAt: eventTime(p.RecordingStartTime, receivedAt),
      parties,
    });
    await attachIfCallAppeared(tenantId, p.CallSid, parties);
    return HANDLED;
  },
};

export const transcriptionCallback: CallbackKind<TranscriptionParams> = {
  params: TranscriptionParams,
  clues: recordedCallClues,
  async ingest(p, { tenantId }, receivedAt) {
    const status = p.TranscriptionStatus.toLowerCase();
    if (status !== 'completed' || p.TranscriptionText === undefined) return ignored(`transcription status ${status}`);
    const parties = partiesOf(await findCallByProviderSid(tenantId, p.CallSid), p);
    await recordVoicemailTranscript(tenantId, {
      providerCallSid: p.CallSid,
      transcript: p.TranscriptionText,
      receivedAt,
      parties,
    });
    await attachIfCallAppeared(tenantId, p.CallSid, parties);
    return HANDLED;
  },
};

export const smsInboundCallback: CallbackKind<SmsInboundParams> = {
  params: SmsInboundParams,
  clues: (p, tenantHint) => ({ ownNumbers: [p.to], legNumbers: [p.from, p.to], tenantHint }),
  async ingest(p, { tenantId }, receivedAt) {
    try {
      // Idempotent per MessageSid: Twilio's retries store nothing twice (texting/receiving.ts).
      await receiveInboundMessage(tenantId, {
        from: p.from,
        to: p.to,
        body: p.body,
        messageSid: p.messageSid,
        receivedAt,
        optOutType: p.optOutType,
      });
      return HANDLED;
    } catch (err) {
      // A sender that is no phone number (alphanumeric ids, short codes): a retry cannot help.
      if (err instanceof ValidationError) return ignored('sender is not an E.164 number');
      throw err;
    }
  },
};

export const smsStatusCallback: CallbackKind<SmsStatusParams> = {
  params: SmsStatusParams,
  clues: (p, tenantHint) => ({
    ownNumbers: p.from ? [p.from] : [],
    legNumbers: [p.from, p.to].filter((n): n is string => !!n),
    tenantHint,
  }),
  async ingest(p, { tenantId }, receivedAt) {
    const status = deliveryStatusOfTwilio(p.status.toLowerCase());
    const optedOut = isOptedOutCode(p.errorCode);
    if (optedOut && p.to) {
      // The carrier refused the text because the recipient opted out (a STOP we never received).
      await recordConsentChange(tenantId, p.to, {
        status: 'opted_out',
        source: CARRIER_OPT_OUT_SOURCE,
        at: receivedAt,
        note: `Carrier refused a send (error ${p.errorCode})`,
      });
      // An opt-out cancels what is scheduled to the number at once, whoever reports it.
      await cancelScheduledTextsTo(tenantId, p.to, 'opted_out');
    }
    // Our id from the URL finds the message even when the send's answer (the sid) was lost.
    const ref = p.messageId ? { messageId: p.messageId, messageSid: p.messageSid } : { messageSid: p.messageSid };
    try {
      if (!status) {
        // Says nothing new about delivery (accepted, queued, sending...), but it names the sid.
        if (p.messageId) await recordMessageSid(tenantId, p.messageId, p.messageSid);
        return ignored(`message status ${p.status.toLowerCase()} says nothing new`);
      }
      const errorCode = p.errorCode && /^\d+$/.test(p.errorCode) ? Number(p.errorCode) : undefined;
      // The callback's arrival is when the carrier reported the status (Twilio's callback has no time of its own).
      const failure = {
        failureReason: optedOut ? 'recipient_opted_out' : 'carrier_failed',
        carrierCode: errorCode,
        carrierMessage: twilioErrorMessage(errorCode, p.errorMessage),
      } as const;
      await updateMessageStatus(tenantId, ref, status, { reportedAt: receivedAt, ...(status === 'failed' && failure) });
      return HANDLED;
    } catch (err) {
      // Not ours (sent outside the service) or its sid is not recorded yet: nothing to move.
      if (err instanceof NotFoundError) return ignored('no message with this sid');
      throw err;
    }
  },
};
