import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ValidationError } from '../../../shared/errors';
import { isLoopback, refusalReason } from './ip-ranges';

/**
 * The SSRF guard. A delivery URL is checked twice: when it is registered (scheme, approved
 * host, IP literals) and on every attempt (the host is resolved and every address it resolves
 * to is checked; the request then connects to the address that was checked, so a DNS answer
 * that changes between check and connect cannot redirect it).
 */
export type TargetOptions = {
  /** Local development only: allows http and loopback addresses. Never set in AWS. */
  allowInsecureTargets?: boolean;
};

export type LookupAll = (hostname: string) => Promise<{ address: string; family: number }[]>;

export type ResolvedTarget = { url: URL; hostname: string; address: string; family: 4 | 6 };

/** A target the guard refuses; a failed attempt, never retried into a different answer. */
export class TargetRefusedError extends Error {}

/** The host did not resolve within the attempt's time: a failed attempt, like a receiver that does not answer. */
export class ResolutionTimeoutError extends Error {}

/** The URL's host as a bare name or address: brackets of IPv6 literals and a final dot removed. */
export const bareHost = (url: URL): string =>
  url.hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();

/**
 * Checks a target URL against the rules that do not need DNS. The WHATWG URL parser has
 * already normalised decimal, hex and octal IPv4 forms (`http://2130706433/`, `http://0x7f.1/`
 * are 127.0.0.1), so IP literals are checked in their canonical form.
 */
export function checkTargetUrl(raw: string, approvedHosts: string[], options: TargetOptions = {}): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ValidationError('url: must be an absolute URL');
  }
  const allowedSchemes = options.allowInsecureTargets ? ['https:', 'http:'] : ['https:'];
  if (!allowedSchemes.includes(url.protocol)) throw new ValidationError('url: must use https');
  if (url.username || url.password) throw new ValidationError('url: must not contain credentials');
  const host = bareHost(url);
  const approved = approvedHosts.map((h) => h.toLowerCase().replace(/\.$/, ''));
  if (!approved.includes(host)) throw new ValidationError(`url: host "${host}" is not approved for this organization`);
  if (isIP(host)) {
    try {
      refuseAddress(host, host, options);
    } catch (err) {
      throw new ValidationError(`url: ${(err as Error).message}`);
    }
  }
  url.hash = '';
  return url;
}

function refuseAddress(host: string, address: string, options: TargetOptions): void {
  if (options.allowInsecureTargets && isLoopback(address)) return;
  const reason = refusalReason(address);
  if (reason) {
    const where = host === address ? address : `${host} resolves to ${address}, which`;
    throw new TargetRefusedError(`${where} is refused: ${reason} address`);
  }
}

const systemLookup: LookupAll = (hostname) => dnsLookup(hostname, { all: true });

/**
 * The lookup, given up on (getaddrinfo cannot be cancelled; its late answer is dropped) once it
 * outlasts `timeoutMs`: resolving is part of the attempt, and a slow resolver must not stretch an
 * attempt past its 10 s, nor past the claim that guards it (deliver.ts, `claimStaleAfterMs`).
 */
async function lookupWithin(lookup: LookupAll, hostname: string, timeoutMs: number | undefined) {
  if (timeoutMs === undefined) return lookup(hostname);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new ResolutionTimeoutError(`timeout: ${hostname} did not resolve within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([lookup(hostname), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolves the host (within `timeoutMs` when given) and checks every address; the first one is
 * the address to connect to, and the only one the connection may use (http-post.ts pins it).
 */
export async function resolveTarget(
  url: URL,
  options: TargetOptions & { lookup?: LookupAll; timeoutMs?: number } = {},
): Promise<ResolvedTarget> {
  const hostname = bareHost(url);
  const literal = isIP(hostname);
  const addresses = literal
    ? [{ address: hostname, family: literal }]
    : await lookupWithin(options.lookup ?? systemLookup, hostname, options.timeoutMs);
  if (addresses.length === 0) throw new TargetRefusedError(`${hostname} has no address`);
  // Any refused address refuses the host: a name that also points inside is not a public target.
  for (const { address } of addresses) refuseAddress(hostname, address, options);
  const [first] = addresses;
  return { url, hostname, address: first.address, family: first.family === 6 ? 6 : 4 };
}
