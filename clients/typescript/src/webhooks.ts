import { createHmac, timingSafeEqual } from 'node:crypto';
import type { webhooks } from './schema';

/**
 * Verifying a webhook delivery on the receiving side. Depends on `node:crypto` only, so it can be
 * copied into a project that does not install the package.
 *
 * Every delivery is signed twice, with the same secret (`whsec_...`) at the same moment:
 * - the service's own headers (its contract): `X-Service-Signature` is lowercase hex HMAC-SHA256,
 *   keyed with the secret string exactly as issued, of `${X-Service-Timestamp}.${rawBody}`, the
 *   timestamp in milliseconds; the deprecated `X-Legacy-*` names carry the same values;
 * - Standard Webhooks' headers: `webhook-signature` is `v1,<base64 HMAC-SHA256>`, keyed with the
 *   base64-decoded part of the secret after `whsec_`, of `${webhook-id}.${webhook-timestamp}.${rawBody}`,
 *   the timestamp in seconds. `webhook-id` is `X-Service-Delivery` (the same on every retry of a
 *   delivery), `webhook-timestamp` is `X-Service-Timestamp` in whole seconds. The header may list
 *   several signatures separated by spaces (one per secret while a secret is rotated); one match is
 *   enough.
 *
 * `Webhook` (the Standard Webhooks libraries' shape) checks the Standard Webhooks headers when they
 * are present, since they sign the delivery id too, and the service's headers otherwise (a proxy
 * that forwards only `X-*` headers). `verifyDelivery` checks the service's headers only.
 */
export const TIMESTAMP_TOLERANCE_MS = 5 * 60 * 1000;
const SECRET_PREFIX = 'whsec_';

/** Every event a delivery can carry, as the OpenAPI document's `webhooks` section describes it. */
export type WebhookEvent = {
  [Type in keyof webhooks]: NonNullable<webhooks[Type]['post']>['requestBody'] extends infer Body
    ? NonNullable<Body> extends { content: { 'application/json': infer Event } }
      ? Event
      : never
    : never;
}[keyof webhooks];

/** The event of one type, e.g. `WebhookEventOf<'message.failed'>`. */
export type WebhookEventOf<Type extends WebhookEvent['type']> = Extract<WebhookEvent, { type: Type }>;

/** What an event is about, by type: the resource whose `sequence` orders its events. */
export type EventResource = { type: 'call' | 'message' | 'voicemail' | 'contact' | 'consent'; id: string };

/**
 * The resource an event is about (`webhook.test` is about none): with `event.sequence`, the key of
 * a receiver's "newest seen" record, so an event that arrives after a newer one about the same
 * resource can be dropped (docs/api.md, "Order and stale events").
 */
export function eventResource(event: WebhookEvent): EventResource | undefined {
  const data = event.data as {
    call?: { id: string };
    message?: { id: string };
    voicemail?: { id: string };
    contact?: { id: string };
    consent?: { number: string };
  };
  if (data.call) return { type: 'call', id: data.call.id };
  if (data.message) return { type: 'message', id: data.message.id };
  if (data.voicemail) return { type: 'voicemail', id: data.voicemail.id };
  // contact.created, contact.updated and contact.deleted share one sequence per contact.
  if (data.contact) return { type: 'contact', id: data.contact.id };
  // consent.changed is about a number, whichever contact holds it.
  if (data.consent) return { type: 'consent', id: data.consent.number };
  return undefined;
}

export type VerifyFailure = 'missing_headers' | 'malformed_timestamp' | 'bad_signature' | 'stale_timestamp';
export type VerifyResult = { ok: true } | { ok: false; reason: VerifyFailure };

/** Node's `req.headers`, a plain object in any letter case, or a Fetch `Headers`. */
export type HeaderSource = Record<string, string | string[] | undefined> | { get(name: string): string | null };

/** One secret, or the old and the new one while an endpoint's secret is rotated. */
export type Secrets = string | readonly string[];

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

const secretList = (secrets: Secrets): readonly string[] => (typeof secrets === 'string' ? [secrets] : secrets);

/** Constant-time comparison; a length mismatch is simply a wrong signature. */
function sameText(received: string, expected: string): boolean {
  const [a, b] = [Buffer.from(received, 'utf8'), Buffer.from(expected, 'utf8')];
  return a.length === b.length && timingSafeEqual(a, b);
}

const toMs = (now: number | Date): number => (typeof now === 'number' ? now : now.getTime());

/** The signature check, then the age check: a timestamp is refused five minutes or more from `now`. */
function decide(timestampMs: number, signed: boolean, now: number | Date): VerifyResult {
  if (!signed) return { ok: false, reason: 'bad_signature' };
  if (Math.abs(toMs(now) - timestampMs) >= TIMESTAMP_TOLERANCE_MS) return { ok: false, reason: 'stale_timestamp' };
  return { ok: true };
}

/**
 * The service's scheme (`X-Service-*`, or the deprecated `X-Legacy-*` names while they are sent).
 * @param rawBody the body exactly as received, before any JSON parsing (re-serialising changes the bytes)
 * @param secret the endpoint's secret exactly as issued (`whsec_...`), or several while rotating
 * @param now the receiver's clock (default now)
 */
export function verifyDelivery(
  headers: HeaderSource,
  rawBody: string | Uint8Array,
  secret: Secrets,
  now: number | Date = Date.now(),
): VerifyResult {
  const timestamp = header(headers, 'X-Service-Timestamp') ?? header(headers, 'X-Legacy-Timestamp');
  const signature = header(headers, 'X-Service-Signature') ?? header(headers, 'X-Legacy-Signature');
  if (!timestamp || !signature) return { ok: false, reason: 'missing_headers' };
  // Signed as the string it was sent as; parsed only for the age check.
  if (!/^\d{1,16}$/.test(timestamp)) return { ok: false, reason: 'malformed_timestamp' };
  const signed = secretList(secret).some((key) =>
    sameText(
      signature,
      createHmac('sha256', Buffer.from(key, 'utf8')).update(`${timestamp}.`, 'utf8').update(rawBody).digest('hex'),
    ),
  );
  return decide(Number(timestamp), signed, now);
}

/** Standard Webhooks' scheme (`webhook-id`, `webhook-timestamp` in seconds, `webhook-signature`). */
export function verifyStandardWebhook(
  headers: HeaderSource,
  rawBody: string | Uint8Array,
  secret: Secrets,
  now: number | Date = Date.now(),
): VerifyResult {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) return { ok: false, reason: 'missing_headers' };
  if (!/^\d{1,13}$/.test(timestamp)) return { ok: false, reason: 'malformed_timestamp' };
  const offered = signatures
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => entry.slice(3));
  const signed = secretList(secret).some((key) => {
    const bytes = Buffer.from(key.startsWith(SECRET_PREFIX) ? key.slice(SECRET_PREFIX.length) : key, 'base64');
    const expected = createHmac('sha256', bytes).update(`${id}.${timestamp}.`, 'utf8').update(rawBody).digest('base64');
    return offered.some((signature) => sameText(signature, expected));
  });
  return decide(Number(timestamp) * 1000, signed, now);
}

export class WebhookVerificationError extends Error {
  constructor(readonly reason: VerifyFailure) {
    super(`Webhook verification failed: ${reason}`);
    this.name = 'WebhookVerificationError';
  }
}

/**
 * Verifies deliveries and returns their events, like the Standard Webhooks libraries'
 * `new Webhook(secret).verify(payload, headers)`.
 */
export class Webhook {
  constructor(private readonly secret: Secrets) {}

  /** The event, typed; throws `WebhookVerificationError` unless the delivery is genuine and fresh. */
  verify(rawBody: string | Uint8Array, headers: HeaderSource, now: number | Date = Date.now()): WebhookEvent {
    const result = header(headers, 'webhook-signature')
      ? verifyStandardWebhook(headers, rawBody, this.secret, now)
      : verifyDelivery(headers, rawBody, this.secret, now);
    if (!result.ok) throw new WebhookVerificationError(result.reason);
    return JSON.parse(typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8')) as WebhookEvent;
  }
}

/** The delivery's id, the same on every retry: the key to ignore a delivery seen before. */
export const deliveryId = (headers: HeaderSource): string | undefined =>
  header(headers, 'webhook-id') ?? header(headers, 'X-Service-Delivery') ?? header(headers, 'X-Legacy-Delivery');
