import * as z from 'zod';

/**
 * The form fields of each Twilio callback this service reads, as zod schemas: the handler
 * wrapper refuses a signed request missing what its kind needs with 400 naming the field, and
 * the ingestion functions get typed values. Fields Twilio adds are ignored (and still signed).
 */
const sid = z.string().regex(/^[A-Za-z0-9]{2,64}$/, 'must be a provider sid');
const text = z.string();
/** Whole seconds as Twilio sends them ("42"). */
const seconds = z
  .string()
  .regex(/^\d+$/, 'must be whole seconds')
  .transform(Number);

export const VoiceStatusParams = z.object({
  CallSid: sid,
  ParentCallSid: sid.optional(),
  CallStatus: z.string().min(1),
  Direction: text.default(''),
  From: text.default(''),
  To: text.default(''),
  CallDuration: seconds.optional(),
  /** RFC 2822, e.g. "Sat, 21 Nov 2026 10:00:05 +0000": when the event happened at Twilio. */
  Timestamp: text.optional(),
  SequenceNumber: text.optional(),
});
export type VoiceStatusParams = z.output<typeof VoiceStatusParams>;

/** A recording status callback, or a `<Record action>` request (no status, but From and To). */
export const RecordingParams = z.object({
  CallSid: sid,
  RecordingSid: sid,
  RecordingStatus: text.optional(),
  RecordingDuration: seconds.optional(),
  RecordingStartTime: text.optional(),
  From: text.optional(),
  To: text.optional(),
});
export type RecordingParams = z.output<typeof RecordingParams>;

export const TranscriptionParams = z.object({
  CallSid: sid,
  RecordingSid: sid.optional(),
  TranscriptionStatus: z.string().min(1),
  TranscriptionText: text.optional(),
  From: text.optional(),
  To: text.optional(),
});
export type TranscriptionParams = z.output<typeof TranscriptionParams>;

/** Twilio sends both names; older integrations only `SmsSid` / `SmsStatus`. */
const messageSidOf = <T extends { MessageSid?: string; SmsSid?: string }>(p: T) => p.MessageSid ?? p.SmsSid;
const refineSid = { message: 'MessageSid: is required', path: ['MessageSid'] };

export const SmsInboundParams = z
  .object({ MessageSid: sid.optional(), SmsSid: sid.optional(), From: z.string().min(1), To: z.string().min(1), Body: text.default('') })
  .refine((p) => messageSidOf(p) !== undefined, refineSid)
  .transform((p) => ({ messageSid: messageSidOf(p)!, from: p.From, to: p.To, body: p.Body }));
export type SmsInboundParams = z.output<typeof SmsInboundParams>;

export const SmsStatusParams = z
  .object({
    MessageSid: sid.optional(),
    SmsSid: sid.optional(),
    MessageStatus: text.optional(),
    SmsStatus: text.optional(),
    From: text.optional(),
    To: text.optional(),
  })
  .refine((p) => messageSidOf(p) !== undefined, refineSid)
  .refine((p) => (p.MessageStatus ?? p.SmsStatus) !== undefined, { message: 'MessageStatus: is required', path: ['MessageStatus'] })
  .transform((p) => ({ messageSid: messageSidOf(p)!, status: (p.MessageStatus ?? p.SmsStatus)!, from: p.From, to: p.To }));
export type SmsStatusParams = z.output<typeof SmsStatusParams>;
