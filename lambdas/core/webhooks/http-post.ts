import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { ResolvedTarget } from './ssrf';

/**
 * One HTTP attempt. Connects to the address the SSRF guard checked (a `lookup` that answers
 * with that address only) while keeping the original host for the Host header, TLS SNI and the
 * certificate check. Node never follows redirects on its own, so a 3xx is just a failed attempt.
 */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 10_000;
/** How much of a failing response's body the delivery log keeps. */
export const ERROR_EXCERPT_CHARS = 200;
const MAX_BODY_BYTES_READ = 4096;

export type AttemptOutcome = { ok: true; status: number } | { ok: false; status?: number; error: string };

function pinnedLookup(target: ResolvedTarget): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    // Node 20+ asks for all addresses (happy eyeballs); older call sites ask for one.
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as LookupFunction;
}

/** Printable, single-line, short: the log shows it, and a receiver's page is not ours to keep. */
export const excerpt = (text: string, max = ERROR_EXCERPT_CHARS): string =>
  [...text]
    .map((char) => (char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f ? ' ' : char))
    .join('')
    .replace(/ {2,}/g, ' ')
    .trim()
    .slice(0, max);

/** `HTTP <status>[: <start of the body>]`, at most ERROR_EXCERPT_CHARS in all. */
function describeHttpFailure(status: number, body: string): string {
  const what = status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`;
  return excerpt(body.trim() ? `${what}: ${body}` : what);
}

export function postPinned(target: ResolvedTarget, headers: Record<string, string>, body: string, timeoutMs = DEFAULT_ATTEMPT_TIMEOUT_MS): Promise<AttemptOutcome> {
  const secure = target.url.protocol === 'https:';
  return new Promise((resolve) => {
    let settled = false;
    let status: number | undefined;
    let received = '';
    const finish = (outcome: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(outcome);
    };
    const request = (secure ? https : http).request({
      method: 'POST',
      hostname: target.hostname,
      port: target.url.port || (secure ? 443 : 80),
      path: `${target.url.pathname}${target.url.search}`,
      headers: { ...headers, 'Content-Length': String(Buffer.byteLength(body)) },
      lookup: pinnedLookup(target),
      // A fresh connection per attempt: a pooled socket would bypass the per-attempt check.
      agent: false,
      // SNI carries names only; for an IP literal Node verifies the certificate's IP entries.
      ...(secure && !isIP(target.hostname) && { servername: target.hostname }),
    });
    const timer = setTimeout(() => {
      finish(
        status === undefined
          ? { ok: false, error: `timeout: no response within ${timeoutMs} ms` }
          : { ok: false, status, error: describeHttpFailure(status, received) },
      );
    }, timeoutMs);
    request.on('response', (response) => {
      status = response.statusCode ?? 0;
      if (status >= 200 && status < 300) {
        finish({ ok: true, status });
        return;
      }
      const failedStatus = status;
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        received += chunk;
        if (received.length >= MAX_BODY_BYTES_READ) finish({ ok: false, status: failedStatus, error: describeHttpFailure(failedStatus, received) });
      });
      response.on('end', () => finish({ ok: false, status: failedStatus, error: describeHttpFailure(failedStatus, received) }));
      response.on('error', () => finish({ ok: false, status: failedStatus, error: describeHttpFailure(failedStatus, received) }));
    });
    request.on('error', (err: NodeJS.ErrnoException) => {
      finish({ ok: false, error: excerpt(`network error: ${err.code ?? err.message}`) });
    });
    request.end(body);
  });
}
