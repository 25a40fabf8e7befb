import { excerpt } from '../../../shared/excerpt';

/**
 * The words for Twilio's messaging error codes a text most often fails with, as Twilio's error
 * dictionary titles them. Twilio's status callback carries the code only (`ErrorCode`), so the
 * message.failed event says what the code means from here; a message Twilio does send
 * (`ErrorMessage`, `ChannelStatusMessage`, or the REST answer's `message`) wins.
 */
const TWILIO_MESSAGING_ERRORS: Record<number, string> = {
  21211: "Invalid 'To' phone number",
  21408: "Permission to send an SMS has not been enabled for the region indicated by the 'To' number",
  21610: 'Attempt to send to unsubscribed recipient',
  21612: "The 'To' phone number is not currently reachable via SMS",
  21614: "'To' number is not a valid mobile number",
  30001: 'Queue overflow',
  30002: 'Account suspended',
  30003: 'Unreachable destination handset',
  30004: 'Message blocked',
  30005: 'Unknown destination handset',
  30006: 'Landline or unreachable carrier',
  30007: 'Message filtered',
  30008: 'Unknown error',
  30009: 'Missing segment',
  30010: 'Message price exceeds max price',
  30034: 'Message from an unregistered number',
};

/** Longest carrier message kept on a text: enough for Twilio's sentences, never a page. */
const MAX_CARRIER_MESSAGE_CHARS = 200;

/** Printable, one line, bounded: the carrier's text is shown to integrators, never interpreted. */
const tidy = (text: string): string => excerpt(text, MAX_CARRIER_MESSAGE_CHARS);

/** What the carrier said about a failure: its own words when it sent any, else the title of its code, else nothing. */
export function twilioErrorMessage(code: number | undefined, words?: unknown): string | undefined {
  if (typeof words === 'string' && tidy(words) !== '') return tidy(words);
  return code === undefined ? undefined : TWILIO_MESSAGING_ERRORS[code];
}
