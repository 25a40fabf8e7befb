import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The local runtime's control plane, as API Gateway has one beside its stages: the operator CLI
 * flushes the runtime's authorizer cache through it, as it calls FlushStageAuthorizersCache on a
 * deployed stage, so revoking a key or taking API access away applies at once on the laptop too.
 * A listener of its own on 127.0.0.1 (never the API's port, whose paths are the API's), answering
 * only a caller that shows the token runtime.json holds (a file only its owner can read).
 */
export type RuntimeControlAddress = { url: string; token: string };

export type RuntimeControl = RuntimeControlAddress & { stop: () => Promise<void> };

export type RuntimeControlActions = {
  /** Drops every cached authorizer decision; returns how many there were. */
  flushAuthorizerCache: () => number;
};

export const FLUSH_AUTHORIZER_CACHE_PATH = '/authorizer-cache/flush';

function holdsToken(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header ?? '');
  const expected = Buffer.from(`Bearer ${token}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export async function startRuntimeControl(actions: RuntimeControlActions): Promise<RuntimeControl> {
  const token = randomBytes(32).toString('base64url');
  const server: Server = createServer((req, res) => {
    req.resume();
    const answer = (status: number, body: unknown) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    if (!holdsToken(req.headers.authorization, token)) return answer(401, { error: 'the token of runtime.json is required', code: 'unauthorized' });
    if (req.method !== 'POST' || req.url !== FLUSH_AUTHORIZER_CACHE_PATH) return answer(404, { error: 'no such control operation', code: 'not_found' });
    return answer(200, { flushed: actions.flushAuthorizerCache() });
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

/** The CLI's side: asks the running runtime to flush its authorizer cache; resolves with how many decisions it dropped. */
export async function requestAuthorizerCacheFlush({ url, token }: RuntimeControlAddress): Promise<number> {
  const response = await fetch(`${url}${FLUSH_AUTHORIZER_CACHE_PATH}`, { method: 'POST', headers: { Authorization: `Bearer ${token}` } });
  const body = (await response.json()) as { flushed?: number; error?: string };
  if (!response.ok) throw new Error(`the local runtime refused to flush its authorizer cache: ${response.status} ${body.error ?? ''}`.trim());
  return body.flushed ?? 0;
}
