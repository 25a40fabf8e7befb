import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { excerpt as printableExcerpt } from '../../shared/excerpt';
import type { ResolvedTarget } from './internal/ssrf';

/**
 * One HTTP attempt, over a connection to the address the SSRF guard checked for this very
 * attempt, kept alive for the next attempt that checks out the same way.
 *
 * The guard resolves the host and checks every address on every attempt, within the attempt's
 * deadline (deliver.ts: the post gets what the lookup left of it). The
 * request must then reach that checked address only, so a DNS answer that changes between check
 * and connect cannot redirect it; the original host still goes in the Host header, TLS SNI and
 * the certificate check. Connections come from one keep-alive agent per checked connection,
 * keyed by scheme, host name, port and checked address (+ family), whose `lookup` answers with
 * that address alone: every socket an agent opens goes to its address, and a pooled socket is
 * only ever handed to an attempt whose own check produced the same key. A DNS answer that
 * changes is another key, so a new connection to the newly checked address. Reuse saves a TCP
 * and TLS handshake per delivery (CPU in the sender Lambda, and latency).
 *
 * Node never follows redirects on its own, so a 3xx is just a failed attempt.
 */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 10_000;
/** How much of a failing response's body the delivery log keeps. */
export const ERROR_EXCERPT_CHARS = 200;
const MAX_BODY_BYTES_READ = 4096;
/** Idle connections kept per checked target: one batch's worth. */
const MAX_FREE_SOCKETS_PER_TARGET = 10;
/**
 * An idle connection is closed after this, before common server keep-alive timeouts (Node's
 * server default is 5 s; Node also honours a shorter `Keep-Alive: timeout=` hint), so the sender
 * does not reuse a socket the receiver is about to close.
 */
const FREE_SOCKET_TIMEOUT_MS = 4_000;
/** Agents kept, least recently used dropped first: one per (target, checked address). */
const MAX_AGENTS = 256;
/** A 2xx body is read to the end so its socket can be reused, up to this; past it, closed. */
const MAX_SUCCESS_BODY_BYTES = 64 * 1024;

export type AttemptOutcome =
  | { ok: true; status: number }
  | { ok: false; status?: number; error: string; retryAfter?: string };

/** Answers whose `Retry-After` the sender honours: the receiver asks for time (rate limited, unavailable). */
const RETRY_AFTER_STATUSES = new Set([429, 503]);

function pinnedLookup(target: ResolvedTarget): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    // Node 20+ asks for all addresses (happy eyeballs); older call sites ask for one.
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as LookupFunction;
}

/** Map order is use order: the first entry is the least recently used. */
const agents = new Map<string, http.Agent>();

/** Closes the agent's idle sockets; sockets in use are untouched. */
function destroyFreeSockets(agent: http.Agent): void {
  for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
}

/** Takes an agent out of use without failing its in-flight attempts: their sockets close when done. */
function retire(agent: http.Agent): void {
  agent.maxFreeSockets = 0;
  destroyFreeSockets(agent);
}

function agentFor(target: ResolvedTarget, secure: boolean, port: number): http.Agent {
  const key = JSON.stringify([target.url.protocol, target.hostname, port, target.address, target.family]);
  let agent = agents.get(key);
  if (agent) agents.delete(key);
  else {
    const options: http.AgentOptions = {
      keepAlive: true,
      // No cap on sockets in use (Node's default): an attempt never waits for a socket, so its
      // deadline only ever measures the receiver. The sender Lambda has at most a batch of 10 in flight.
      maxFreeSockets: MAX_FREE_SOCKETS_PER_TARGET,
      // Node applies this as the idle timeout of pooled sockets. On a socket in use it only
      // emits 'timeout', which nothing here listens to: the attempt has its own deadline.
      timeout: FREE_SOCKET_TIMEOUT_MS,
      // On the agent, not the request: an agent's options override a request's, so no socket
      // of this agent can connect anywhere but the checked address.
      lookup: pinnedLookup(target),
    };
    // SNI carries names only; for an IP literal Node verifies the certificate's IP entries.
    agent = secure
      ? new https.Agent({ ...options, ...(!isIP(target.hostname) && { servername: target.hostname }) })
      : new http.Agent(options);
  }
  agents.set(key, agent);
  if (agents.size > MAX_AGENTS) {
    const [oldestKey, oldest] = agents.entries().next().value as [string, http.Agent];
    agents.delete(oldestKey);
    retire(oldest);
  }
  return agent;
}

/** Printable, single-line, short: the log shows it, and a receiver's page is not ours to keep. */
export const excerpt = (text: string, max = ERROR_EXCERPT_CHARS): string => printableExcerpt(text, max);

/** `HTTP <status>[: <start of the body>]`, at most ERROR_EXCERPT_CHARS in all. */
function describeHttpFailure(status: number, body: string): string {
  const what = status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`;
  return excerpt(body.trim() ? `${what}: ${body}` : what);
}

/**
 * A pooled socket the receiver closed as we sent (its idle timeout, or a Lambda environment
 * thawed after a freeze): the request never reached a handler, or got no response.
 */
const isStaleSocketError = (request: http.ClientRequest, err: NodeJS.ErrnoException): boolean =>
  request.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE');

/**
 * Posts within `timeoutMs`: what is left of the attempt's `attemptMs` (the sender resolved the
 * host first, within the same deadline); a timeout is reported against the whole attempt.
 */
export function postPinned(
  target: ResolvedTarget,
  headers: Record<string, string>,
  body: string,
  timeoutMs = DEFAULT_ATTEMPT_TIMEOUT_MS,
  attemptMs = timeoutMs,
): Promise<AttemptOutcome> {
  return new Promise((resolve) => new PinnedPost(target, headers, body, attemptMs, resolve).start(timeoutMs));
}

/** One attempt's state: its request (a second one after a stale pooled socket), what came back, its deadline. */
class PinnedPost {
  private readonly secure: boolean;
  private readonly port: number;
  private readonly agent: http.Agent;
  private settled = false;
  private status: number | undefined;
  private received = '';
  private retried = false;
  private request!: http.ClientRequest;
  private timer!: NodeJS.Timeout;

  constructor(
    private readonly target: ResolvedTarget,
    private readonly headers: Record<string, string>,
    private readonly body: string,
    private readonly attemptMs: number,
    private readonly resolve: (outcome: AttemptOutcome) => void,
  ) {
    this.secure = target.url.protocol === 'https:';
    this.port = Number(target.url.port) || (this.secure ? 443 : 80);
    this.agent = agentFor(target, this.secure, this.port);
  }

  start(timeoutMs: number): void {
    this.timer = setTimeout(() => this.onDeadline(), timeoutMs);
    this.send();
  }

  private finish(outcome: AttemptOutcome): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    // A failed attempt's socket is closed, never pooled: it may be mid-response, and after a
    // complete one (Node releases the socket only after the 'end' handlers) it is simply not kept.
    this.request.destroy();
    this.request.socket?.destroy();
    this.resolve(outcome);
  }

  private send(): void {
    const { target, body } = this;
    this.request = (this.secure ? https : http).request({
      method: 'POST',
      hostname: target.hostname,
      port: this.port,
      path: `${target.url.pathname}${target.url.search}`,
      headers: { ...this.headers, 'Content-Length': String(Buffer.byteLength(body)) },
      // The agent of this checked connection (see the module comment): its sockets all go to
      // target.address, which was checked for this attempt; a socket is reused only then.
      agent: this.agent,
    });
    const current = this.request;
    current.on('response', (response) => this.onResponse(current, response));
    current.on('error', (err: NodeJS.ErrnoException) => this.onRequestError(current, err));
    current.end(body);
  }

  private onResponse(current: http.ClientRequest, response: http.IncomingMessage): void {
    this.status = response.statusCode ?? 0;
    if (this.status >= 200 && this.status < 300) this.onSuccess(current, response, this.status);
    else this.onFailure(response, this.status);
  }

  private onSuccess(current: http.ClientRequest, response: http.IncomingMessage, status: number): void {
    // Settled, but the socket is not released: the body is read to its end so Node can
    // return the socket to the pool; the attempt's deadline still closes it if it never ends.
    this.settled = true;
    this.resolve({ ok: true, status });
    let drained = 0;
    response.on('data', (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > MAX_SUCCESS_BODY_BYTES) current.destroy();
    });
    // Ended, or closed half-read (the socket then goes too): nothing left for the deadline.
    response.on('close', () => clearTimeout(this.timer));
    response.on('error', () => undefined);
  }

  private onFailure(response: http.IncomingMessage, failedStatus: number): void {
    const retryAfter = response.headers['retry-after'];
    const failed = (): AttemptOutcome => ({
      ok: false,
      status: failedStatus,
      error: describeHttpFailure(failedStatus, this.received),
      ...(RETRY_AFTER_STATUSES.has(failedStatus) && typeof retryAfter === 'string' && { retryAfter }),
    });
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      this.received += chunk;
      if (this.received.length >= MAX_BODY_BYTES_READ) this.finish(failed());
    });
    response.on('end', () => this.finish(failed()));
    response.on('error', () => this.finish(failed()));
  }

  private onRequestError(current: http.ClientRequest, err: NodeJS.ErrnoException): void {
    if (this.settled) return;
    // Node's documented pattern for a reused socket reset under us: once, on a new
    // connection to the same checked address. Safe to resend: no response came, delivery is
    // at least once and receivers dedupe by the delivery id, which every resend carries.
    if (!this.retried && this.status === undefined && isStaleSocketError(current, err)) {
      this.retried = true;
      // Its idle siblings waited as long or longer: closed, so the agent opens a new socket.
      destroyFreeSockets(this.agent);
      this.send();
      return;
    }
    this.finish({ ok: false, error: excerpt(`network error: ${err.code ?? err.message}`) });
  }

  private onDeadline(): void {
    // A success whose body has not ended: its socket is closed, never pooled half-read.
    if (this.settled) {
      this.request.destroy();
      return;
    }
    this.finish(
      this.status === undefined
        ? { ok: false, error: `timeout: no response within ${this.attemptMs} ms` }
        : { ok: false, status: this.status, error: describeHttpFailure(this.status, this.received) },
    );
  }
}
