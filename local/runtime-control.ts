import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AuthorizerCache } from './authorizer-cache';

/**
 * The local runtime's control plane, as API Gateway has one beside its stages: the operator CLI
 * flushes the runtime's authorizer cache through it, as it calls FlushStageAuthorizersCache on a
 * deployed stage, and waits there for the decisions under way, as it waits out the authorizer's
 * timeout on a stage, so revoking a key or taking API access away applies at once on the laptop too.
 * A listener of its own on 127.0.0.1 (never the API's port, whose paths are the API's), answering
 * only a caller that shows the token runtime.json holds (a file only its owner can read).
 */
export type RuntimeControlAddress = { url: string; token: string };

export type RuntimeControl = RuntimeControlAddress & { stop: () => Promise<void> };

export type RuntimeControlActions = {
  /** Drops every cached authorizer decision; returns how many there were. */
  flushAuthorizerCache: () => number;
  /**
   * Resolves once every authorizer decision under way at the call has ended (each within the
   * authorizer's timeout), with how many there were: the wait between the CLI's two flushes.
   */
  settleAuthorizerDecisions: () => Promise<number>;
};

/**
 * The actions on the runtime's authorizer cache, each announced on the console: the operator sees
 * the CLI's flushes, and a test can act while the CLI waits for a decision under way.
 */
export function authorizerCacheActions(
  cache: Pick<AuthorizerCache<unknown>, 'flush' | 'settle' | 'inFlight'>,
  print: (line: string) => void,
): RuntimeControlActions {
  const decisions = (n: number) => `${n} decision${n === 1 ? '' : 's'}`;
  return {
    flushAuthorizerCache() {
      const dropped = cache.flush();
      print(`Authorizer cache flushed by the operator CLI: ${decisions(dropped)} dropped`);
      return dropped;
    },
    settleAuthorizerDecisions() {
      print(`Authorizer cache: waiting for ${decisions(cache.inFlight())} under way to end`);
      return cache.settle();
    },
  };
}

export const FLUSH_AUTHORIZER_CACHE_PATH = '/authorizer-cache/flush';
export const SETTLE_AUTHORIZER_DECISIONS_PATH = '/authorizer-cache/settle';

function holdsToken(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header ?? '');
  const expected = Buffer.from(`Bearer ${token}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export async function startRuntimeControl(actions: RuntimeControlActions): Promise<RuntimeControl> {
  const token = randomBytes(32).toString('base64url');
  const server: Server = createServer((req, res) => {
    req.resume();
    const answer = (status: number, body: unknown) =>
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    if (!holdsToken(req.headers.authorization, token))
      return answer(401, { error: 'the token of runtime.json is required', code: 'unauthorized' });
    if (req.method === 'POST' && req.url === FLUSH_AUTHORIZER_CACHE_PATH)
      return answer(200, { flushed: actions.flushAuthorizerCache() });
    if (req.method === 'POST' && req.url === SETTLE_AUTHORIZER_DECISIONS_PATH) {
      return void actions.settleAuthorizerDecisions().then((settled) => answer(200, { settled }));
    }
    return answer(404, { error: 'no such control operation', code: 'not_found' });
  });
  await new Promise<void>((listening, failed) => {
    server.once('error', failed);
    server.listen(0, '127.0.0.1', () => listening());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    stop: () =>
      new Promise<void>((closed) => {
        server.close(() => closed());
        server.closeAllConnections();
      }),
  };
}

async function post(
  operation: string,
  path: string,
  { url, token }: RuntimeControlAddress,
): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
  const body = (await response.json()) as Record<string, unknown>;
  if (!response.ok)
    throw new Error(`the local runtime refused to ${operation}: ${response.status} ${String(body.error ?? '')}`.trim());
  return body;
}

/**
 * The CLI's side: asks the running runtime to flush its authorizer cache; resolves with how many decisions it dropped.
 */
export async function requestAuthorizerCacheFlush(address: RuntimeControlAddress): Promise<number> {
  const body = await post('flush its authorizer cache', FLUSH_AUTHORIZER_CACHE_PATH, address);
  return Number(body.flushed ?? 0);
}

/**
 * The CLI's side: resolves once the authorizer decisions under way in the runtime have ended, with how many there were.
 */
export async function requestAuthorizerDecisionsSettled(address: RuntimeControlAddress): Promise<number> {
  const body = await post('wait for its authorizer decisions under way', SETTLE_AUTHORIZER_DECISIONS_PATH, address);
  return Number(body.settled ?? 0);
}
