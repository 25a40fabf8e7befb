import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Twilio's request signature (`X-Twilio-Signature`): base64 HMAC-SHA1, keyed with the account's
 * auth token, of the full URL Twilio requested followed by every POST parameter's name and value,
 * sorted by name (byte order; a repeated name is sorted by value). No Lambda types here: the
 * handler wrapper, the tests and the operator CLI (which signs simulated callbacks) share it.
 */
export type FormPair = readonly [name: string, value: string];

/** Code-unit order, which for the ASCII names Twilio uses is the byte order its docs require. */
const byNameThenValue = (a: FormPair, b: FormPair): number =>
  a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;

export function computeTwilioSignature(
  url: string,
  params: Iterable<FormPair> | Record<string, string>,
  authToken: string,
): string {
  const pairs: FormPair[] = Symbol.iterator in params ? [...(params as Iterable<FormPair>)] : Object.entries(params);
  const data = [...pairs].sort(byNameThenValue).reduce((acc, [name, value]) => acc + name + value, url);
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

export type SignedRequest = {
  /** The URL exactly as Twilio requested it: public scheme, host, path and query string. */
  url: string;
  params: Iterable<FormPair> | Record<string, string>;
  /** The header's value; undefined when the header is missing. */
  signature: string | undefined;
  authToken: string;
};

/** Constant-time over equal lengths; a missing or differently sized signature is simply false. */
export function verifyTwilioSignature({ url, params, signature, authToken }: SignedRequest): boolean {
  if (!signature) return false;
  const expected = Buffer.from(computeTwilioSignature(url, params, authToken), 'utf8');
  const given = Buffer.from(signature, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}
