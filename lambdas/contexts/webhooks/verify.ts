import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Verifying a delivery on the receiving side (spec section 6, "Verifying a delivery").
 * Self-contained on purpose: it depends on `node:crypto` only, so integrators can copy this file.
 *
 * @example
 * // Express: keep the raw bytes; a re-serialised JSON body does not reproduce them.
 * app.post('/hooks', express.raw({ type: 'application/json' }), (req, res) => {
 *   const result = verifyDelivery(req.headers, req.body, process.env.SIGNING_SECRET!);
 *   if (!result.ok) return res.status(401).send(result.reason);
 *   const event = JSON.parse(req.body.toString('utf8'));
 *   // X-Service-Delivery is the same on every retry: use it to ignore a delivery seen before.
 *   res.sendStatus(204);
 * });
 */
export const TIMESTAMP_TOLERANCE_MS = 5 * 60 * 1000;

export type VerifyFailure = 'missing_headers' | 'malformed_timestamp' | 'bad_signature' | 'stale_timestamp';
export type VerifyResult = { ok: true } | { ok: false; reason: VerifyFailure };

/** Node's `req.headers`, a plain object in any letter case, or a Fetch `Headers`. */
export type HeaderSource = Record<string, string | string[] | undefined> | { get(name: string): string | null };

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === wanted) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

/** The X-Service-* value, or the deprecated X-Legacy-* one while senders still send both. */
const read = (headers: HeaderSource, field: 'Timestamp' | 'Signature') =>
  header(headers, `X-Service-${field}`) ?? header(headers, `X-Legacy-${field}`);

/**
 * Checks a delivery's signature and freshness.
 * @param headers the request headers as received
 * @param rawBody the request body exactly as received (string or bytes), before any JSON parsing
 * @param secret the endpoint's signing secret, exactly as issued (`whsec_...`); while you switch
 *   to a rotated secret, both (`[newSecret, oldSecret]`): a delivery signed with either passes
 * @param now the receiver's clock (default: now); deliveries 5 minutes or more away are refused
 */
export function verifyDelivery(
  headers: HeaderSource,
  rawBody: string | Uint8Array,
  secret: string | readonly string[],
  now: number | Date = Date.now(),
): VerifyResult {
  const timestamp = read(headers, 'Timestamp');
  const signature = read(headers, 'Signature');
  if (!timestamp || !signature) return { ok: false, reason: 'missing_headers' };
  // The timestamp is signed as the string it was sent as; it is parsed only for the age check.
  if (!/^\d{1,16}$/.test(timestamp)) return { ok: false, reason: 'malformed_timestamp' };

  const received = Buffer.from(signature, 'utf8');
  const matches = (candidate: string): boolean => {
    const expected = Buffer.from(
      createHmac('sha256', Buffer.from(candidate, 'utf8')).update(`${timestamp}.`, 'utf8').update(rawBody).digest('hex'),
      'utf8',
    );
    // timingSafeEqual throws on unequal lengths; a length mismatch is simply a wrong signature.
    return received.length === expected.length && timingSafeEqual(received, expected);
  };
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (!secrets.some(matches)) return { ok: false, reason: 'bad_signature' };

  const nowMs = typeof now === 'number' ? now : now.getTime();
  if (Math.abs(nowMs - Number(timestamp)) >= TIMESTAMP_TOLERANCE_MS) return { ok: false, reason: 'stale_timestamp' };
  return { ok: true };
}
