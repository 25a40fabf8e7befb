import { createHmac } from 'node:crypto';

/**
 * Twilio's request signature, written from Twilio's documentation rather than taken from the
 * service, so the end-to-end tests do not trust the code they test: base64 HMAC-SHA1, keyed with
 * the auth token, of the full URL followed by every POST field's name and value, sorted by name.
 */
export function twilioSignature(url: string, params: Record<string, string>, authToken: string): string {
  const data = Object.keys(params)
    .sort()
    .reduce((acc, name) => acc + name + params[name], url);
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}

export type CallbackAnswer = { status: number; contentType: string | null; body: string };

/**
 * POSTs a form as Twilio does, to `runtimeRoot + pathAndQuery`. The signature covers
 * `signedRoot + pathAndQuery` (the public URL the provider was configured with); `signature`
 * overrides it, `null` leaves the header out.
 */
export async function postCallback(
  target: { runtimeRoot: string; signedRoot: string; authToken: string },
  pathAndQuery: string,
  params: Record<string, string>,
  signature?: string | null,
): Promise<CallbackAnswer> {
  const header = signature === undefined ? twilioSignature(`${target.signedRoot}${pathAndQuery}`, params, target.authToken) : signature;
  const response = await fetch(`${target.runtimeRoot}${pathAndQuery}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...(header !== null && { 'X-Twilio-Signature': header }) },
    body: new URLSearchParams(params).toString(),
    redirect: 'manual',
  });
  return { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() };
}
