/**
 * What keeps Twilio's genuine callbacks flowing while someone floods the callback URLs
 * (docs/decisions.md, "Carrier callbacks under a flood"). Three layers, each in front of the
 * next, so a forged request is stopped by the cheapest one that can tell:
 *
 * 1. The shape of X-Twilio-Signature, checked at the edge (WAF in AWS, the local runtime's gate):
 *    an unsigned request is refused before it reaches API Gateway's throttle or a function.
 * 2. A limit per client address on the callback paths, separate from the API's per-network limit
 *    (Twilio's addresses post every organization's callbacks): a single address sending forged
 *    signatures is cut off without touching anyone else's budget.
 * 3. The throttle of each callback method (the callbacks' own, shared with no API route), then the
 *    function, which verifies the HMAC before it reads anything.
 *
 * What still gets through (forged well-formed signatures from many addresses) can use up the
 * throttle for as long as it lasts; Twilio then retries each refused callback, because every
 * callback URL the service hands out carries Twilio's connection overrides below.
 */

/** The header Twilio signs requests with (API Gateway and WAF compare header names case-insensitively). */
export const TWILIO_SIGNATURE_HEADER = 'x-twilio-signature';

/**
 * base64 of an HMAC-SHA1 digest (20 bytes): 27 characters and one `=`. The only signature the
 * callback functions verify (the account's auth token; Twilio's optional SHA-256 webhook signing
 * is not configured by this service), so anything else cannot verify and is refused at the edge.
 */
export const TWILIO_SIGNATURE_PATTERN = '^[A-Za-z0-9+/]{27}=$';

const signatureShape = new RegExp(TWILIO_SIGNATURE_PATTERN);

export function hasTwilioSignatureShape(value: string | undefined): boolean {
  return value !== undefined && signatureShape.test(value);
}

/** Each callback method's throttle for all callers together: requests per second and burst. */
export const DEFAULT_CALLBACK_THROTTLE = { rateLimit: 50, burstLimit: 100 } as const;

/**
 * Callback requests per client address and minute, over all callback paths. Above what one of
 * Twilio's addresses posts for a typical account (their callbacks come from a pool), below what
 * one address would need to use up a method's throttle alone (50/s = 3,000/min).
 */
export const DEFAULT_CALLBACK_LIMIT_PER_ADDRESS = 1_200;

/**
 * Twilio's connection overrides, carried in the URL's fragment, which Twilio reads and does not
 * send (whether it signs it is not documented: `signedCallbackUrls` accepts both): retry a failed callback up to 5
 * times on any failure (`rp=all`: connect or read timeout, 5xx and 4xx, which includes a 429 from
 * the throttle), 2 s to connect, 5 s to answer, 15 s for all attempts (Twilio's maximum).
 * Without them Twilio retries once, and only when it could not connect.
 */
export const CALLBACK_CONNECTION_OVERRIDES = 'ct=2000&rt=5000&tt=15000&rc=5&rp=all';

/** `url` with the connection overrides as its fragment, unless it already has a fragment of its own. */
export function withConnectionOverrides(url: string): string {
  const parsed = new URL(url);
  if (parsed.hash) return parsed.toString();
  parsed.hash = CALLBACK_CONNECTION_OVERRIDES;
  return parsed.toString();
}

/**
 * The URLs a genuine callback's signature may cover. Twilio's documentation says it signs "the
 * full URL" but not whether that includes the fragment it reads the overrides from; if it did and
 * the service checked only the URL without it, every callback of a URL carrying the overrides
 * (each text's StatusCallback, the console URLs docs/deploy.md gives) would be refused. So both
 * forms verify, the fragment only as the service writes it: a signature over any other fragment
 * is refused like any other URL.
 */
export const signedCallbackUrls = (urlWithoutFragment: string): readonly [string, string] => [
  urlWithoutFragment,
  `${urlWithoutFragment}#${CALLBACK_CONNECTION_OVERRIDES}`,
];

/** The contract's Error shape, as the edge answers a refused callback. */
export type CallbackRefusal = { error: string; code: string };

/** 403 at the edge: the same code the function answers for a signature that does not verify. */
export const UNSIGNED_CALLBACK_REFUSAL: CallbackRefusal = {
  error: 'X-Twilio-Signature is missing or is not a signature',
  code: 'invalid_signature',
};

/** 429 at the edge for one address over its callback limit (Twilio retries it: see the overrides). */
export function callbackRateLimitRefusal(limitPerMinutePerAddress: number): CallbackRefusal {
  return {
    error: `Too many callback requests from this address: at most ${limitPerMinutePerAddress} per minute`,
    code: 'rate_limited',
  };
}
