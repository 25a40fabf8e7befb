import * as z from 'zod/mini';
import '../../../shared/schemas/zod-english';

/**
 * The form fields of each Twilio callback this service reads, as zod schemas: the handler
 * wrapper refuses a signed request missing what its kind needs with 400 naming the field, and
 * the ingestion functions get typed values. Fields Twilio adds are ignored (and still signed).
 */
const sid = z.string().check(z.regex(/^[A-Za-z0-9]{2,64}$/, 'must be a provider sid'));
const text = z.string();
/** Whole seconds as Twilio sends them ("42"). */
const seconds = z.pipe(z.string().check(z.regex(/^\d+$/, 'must be whole seconds')), z.transform(Number));

export const VoiceStatusParams = z.object({
  CallSid: sid,
  ParentCallSid: z.optional(sid),
  CallStatus: z.string().check(z.minLength(1)),
  Direction: z._default(text, ''),
  From: z._default(text, ''),
  To: z._default(text, ''),
  CallDuration: z.optional(seconds),
  /** RFC 2822, e.g. "Sat, 21 Nov 2026 10:00:05 +0000": when the event happened at Twilio. */
  Timestamp: z.optional(text),
  SequenceNumber: z.optional(text),
});
export type VoiceStatusParams = z.output<typeof VoiceStatusParams>;

/** A recording status callback, or a `<Record action>` request (no status, but From and To). */
export const RecordingParams = z.object({
  CallSid: sid,
  RecordingSid: sid,
  RecordingStatus: z.optional(text),
  RecordingDuration: z.optional(seconds),
  RecordingStartTime: z.optional(text),
  From: z.optional(text),
  To: z.optional(text),
});
export type RecordingParams = z.output<typeof RecordingParams>;

export const TranscriptionParams = z.object({
  CallSid: sid,
  RecordingSid: z.optional(sid),
  TranscriptionStatus: z.string().check(z.minLength(1)),
  TranscriptionText: z.optional(text),
  From: z.optional(text),
  To: z.optional(text),
});
export type TranscriptionParams = z.output<typeof TranscriptionParams>;

/** Twilio sends both names; older integrations only `SmsSid` / `SmsStatus`. */
const messageSidOf = <T extends { MessageSid?: string; SmsSid?: string }>(p: T) => p.MessageSid ?? p.SmsSid;
// The field is named once, by whoever reports the issue (its path), never in the message too.
const refineSid = { message: 'is required (Twilio sends it as MessageSid or SmsSid)', path: ['MessageSid'] };
const refineStatus = {
  message: 'is required (Twilio sends it as MessageStatus or SmsStatus)',
  path: ['MessageStatus'],
};

const smsInboundFields = z
  .object({
    MessageSid: z.optional(sid),
    SmsSid: z.optional(sid),
    From: z.string().check(z.minLength(1)),
    To: z.string().check(z.minLength(1)),
    Body: z._default(text, ''),
    /** Advanced Opt-Out on a Messaging Service: STOP, START or HELP, custom keywords included. */
    OptOutType: z.optional(text),
  })
  .check(z.refine((p) => messageSidOf(p) !== undefined, refineSid));

export const SmsInboundParams = z.pipe(
  smsInboundFields,
  z.transform((p: z.output<typeof smsInboundFields>) => ({
    messageSid: messageSidOf(p)!,
    from: p.From,
    to: p.To,
    body: p.Body,
    optOutType: p.OptOutType,
  })),
);
export type SmsInboundParams = z.output<typeof SmsInboundParams>;

const smsStatusFields = z
  .object({
    MessageSid: z.optional(sid),
    SmsSid: z.optional(sid),
    MessageStatus: z.optional(text),
    SmsStatus: z.optional(text),
    From: z.optional(text),
    To: z.optional(text),
    /** Twilio's error code on failed and undelivered texts, e.g. "21610" (the recipient opted out). */
    ErrorCode: z.optional(text),
    /** Twilio's words for the error, when it sends any (some channels: ChannelStatusMessage). */
    ErrorMessage: z.optional(text),
    ChannelStatusMessage: z.optional(text),
    /** Our message id, from the StatusCallback URL each send gives Twilio. */
    messageId: z.optional(z.uuid()),
  })
  .check(z.refine((p) => messageSidOf(p) !== undefined, refineSid))
  .check(z.refine((p) => (p.MessageStatus ?? p.SmsStatus) !== undefined, refineStatus));

export const SmsStatusParams = z.pipe(
  smsStatusFields,
  z.transform((p: z.output<typeof smsStatusFields>) => ({
    messageSid: messageSidOf(p)!,
    status: (p.MessageStatus ?? p.SmsStatus)!,
    from: p.From,
    to: p.To,
    errorCode: p.ErrorCode,
    errorMessage: p.ErrorMessage ?? p.ChannelStatusMessage,
    messageId: p.messageId,
  })),
);
export type SmsStatusParams = z.output<typeof SmsStatusParams>;
