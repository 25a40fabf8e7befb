import { createHmac, randomBytes } from 'node:crypto';

/**
 * Endpoint secrets and delivery signatures.
 *
 * A secret is `whsec_` + base64 of 32 random bytes, the Standard Webhooks format, shown to the
 * integrator once. Two signatures are made from it:
 * - `X-Service-Signature` (the spec's scheme): HMAC-SHA256 keyed with the secret string exactly
 *   as shown (its UTF-8 bytes, `whsec_` included) over `${X-Service-Timestamp}.${rawBody}`,
 *   lowercase hex. An integrator following the spec passes the string they were given to their
 *   HMAC function and it works.
 * - `webhook-signature` (Standard Webhooks): keyed with the base64-decoded bytes after `whsec_`,
 *   over `${webhook-id}.${webhook-timestamp}.${rawBody}`, as `v1,<base64>`, so the standard's
 *   libraries verify deliveries with the same secret string.
 *
 * While a rotated-out secret is in its grace period (`webhook rotate-secret`), `webhook-signature`
 * carries both signatures, new first, space-separated as the standard defines, so a receiver
 * holding either secret verifies. The spec's headers hold exactly one signature: they keep the
 * OLD secret's until the grace period ends, so a receiver that has not switched yet keeps working
 * and one that switches early holds both secrets meanwhile (the client package's `Webhook` takes a list).
 */
export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

export const USER_AGENT = 'CallContactTextService-Webhooks/1.0';

export const generateSecret = (): string => `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;

/** The spec's signature: lowercase hex HMAC-SHA256 of `${timestamp}.${body}`, keyed by the secret string. */
export const serviceSignature = (secret: string, timestamp: string, body: string): string =>
  createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.${body}`, 'utf8').digest('hex');

/** Standard Webhooks v1 signature; the key is the base64 part of the secret, decoded. */
export function standardWebhooksSignature(secret: string, id: string, seconds: string, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${seconds}.${body}`, 'utf8').digest('base64')}`;
}

export type SignInput = {
  secret: string;
  /** The rotated-out secret while its grace period runs. */
  previousSecret?: string;
  deliveryId: string;
  eventType: string;
  body: string;
  nowMs: number;
};

/**
 * Every header of one attempt. The timestamp is taken per attempt (a retry is signed afresh);
 * the delivery id is the same on every retry, so receivers can use it as an idempotency key.
 */
export function deliveryHeaders({
  secret,
  previousSecret,
  deliveryId,
  eventType,
  body,
  nowMs,
}: SignInput): Record<string, string> {
  const timestamp = String(Math.trunc(nowMs));
  const seconds = String(Math.floor(nowMs / 1000));
  const signature = serviceSignature(previousSecret ?? secret, timestamp, body);
  const standardSignatures = [secret, ...(previousSecret ? [previousSecret] : [])].map((s) =>
    standardWebhooksSignature(s, deliveryId, seconds, body),
  );
  return {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    'X-Service-Event': eventType,
    'X-Service-Timestamp': timestamp,
    'X-Service-Signature': signature,
    'X-Service-Delivery': deliveryId,
    // Deprecated names, identical values; removed 12 months after the rename (spec section 9).
    'X-Legacy-Event': eventType,
    'X-Legacy-Timestamp': timestamp,
    'X-Legacy-Signature': signature,
    'X-Legacy-Delivery': deliveryId,
    'webhook-id': deliveryId,
    'webhook-timestamp': seconds,
    'webhook-signature': standardSignatures.join(' '),
  };
}
