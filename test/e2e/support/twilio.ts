import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import {
  isRetried,
  requestedUrlOf,
  retryPolicyOf,
  type AttemptFailure,
} from '../../support/twilio-connection-overrides';

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
  const header =
    signature === undefined
      ? twilioSignature(`${target.signedRoot}${pathAndQuery}`, params, target.authToken)
      : signature;
  const response = await fetch(`${target.runtimeRoot}${pathAndQuery}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      ...(header !== null && { 'X-Twilio-Signature': header }),
    },
    body: new URLSearchParams(params).toString(),
    redirect: 'manual',
  });
  return { status: response.status, contentType: response.headers.get('content-type'), body: await response.text() };
}

export type TwilioDelivery = {
  /** Whether an attempt got a 2xx before the retries ran out. */
  delivered: boolean;
  /** The status of every attempt, in order (0: no answer). */
  statuses: number[];
};

/** One POST over a socket bound to `localAddress` (any of 127.0.0.0/8 on Linux), as a distinct client. */
export function postFrom(
  localAddress: string,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: string }> {
  return new Promise((done, fail) => {
    const request = httpRequest(
      url,
      { method: 'POST', localAddress, headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          done({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', fail);
      },
    );
    request.on('error', fail);
    request.end(body);
  });
}

/**
 * A callback as Twilio delivers it from one of its addresses: signed over the URL without its
 * fragment, retried as the fragment's connection overrides ask (test/support/twilio-connection-overrides.ts),
 * `retryPauseMs` times the attempt number apart, all within the overrides' total time.
 */
export async function deliverAsTwilio(
  target: { runtimeRoot: string; signedRoot: string; authToken: string },
  pathQueryAndFragment: string,
  params: Record<string, string>,
  options: { localAddress: string; retryPauseMs: number },
): Promise<TwilioDelivery> {
  const policy = retryPolicyOf(pathQueryAndFragment);
  const pathAndQuery = requestedUrlOf(pathQueryAndFragment);
  const headers = {
    'Content-Type': 'application/x-www-form-urlencoded',
    'X-Twilio-Signature': twilioSignature(`${target.signedRoot}${pathAndQuery}`, params, target.authToken),
  };
  const deadline = Date.now() + policy.totalMs;
  const statuses: number[] = [];
  for (let attempt = 0; attempt <= policy.retries && Date.now() < deadline; attempt += 1) {
    let failure: AttemptFailure;
    try {
      const answer = await postFrom(
        options.localAddress,
        `${target.runtimeRoot}${pathAndQuery}`,
        headers,
        new URLSearchParams(params).toString(),
      );
      statuses.push(answer.status);
      if (answer.status >= 200 && answer.status < 300) return { delivered: true, statuses };
      failure = { kind: 'status', status: answer.status };
    } catch {
      statuses.push(0);
      failure = { kind: 'connect' };
    }
    if (!isRetried(policy, failure)) break;
    await new Promise((wake) => setTimeout(wake, options.retryPauseMs * (attempt + 1)));
  }
  return { delivered: false, statuses };
}
