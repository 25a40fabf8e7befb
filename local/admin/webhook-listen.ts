import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buffer } from 'node:stream/consumers';
import { addWebhookEndpoint, removeWebhookEndpoint } from '../../lambdas/contexts/webhooks/endpoints';
import { getTenant, updateTenant } from '../../lambdas/contexts/tenants/tenants';
import type { CommandContext } from './registry';

/**
 * `webhook listen --tenant <id> --forward-to <url>`: an organization's events, forwarded to a
 * URL on the developer's machine, like `stripe listen`. It registers a temporary endpoint on a
 * receiver of its own on 127.0.0.1, forwards every delivery (headers and raw body, so the
 * signature still verifies with the secret it prints), answers the sender with the forward's
 * status (a failing handler is retried like any endpoint), and removes the endpoint when stopped.
 * The local runtime only: a deployed stack's sender cannot reach this machine.
 */
export type ListenArgs = { tenant: string; forwardTo: string; events?: string[] };

/** The receiver's own host; approved for the organization, as any webhook host must be. */
const LOOPBACK = '127.0.0.1';
/** Less than the sender's 10 s attempt timeout, so a slow handler is reported here, not only there. */
const FORWARD_TIMEOUT_MS = 9_000;
/** Hop-by-hop and length headers are the forward's own; everything else (the signatures) is passed on. */
const NOT_FORWARDED = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);

async function forward(
  forwardTo: string,
  req: IncomingMessage,
  body: Buffer,
): Promise<{ status: number; error?: string }> {
  const headers = Object.entries(req.headers).filter(([name]) => !NOT_FORWARDED.has(name));
  try {
    const response = await fetch(forwardTo, {
      method: 'POST',
      headers: headers.map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : (value ?? '')]),
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    await response.arrayBuffer(); // drain, so the connection is reused
    return { status: response.status };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    return {
      status: 502,
      error: e.name === 'TimeoutError' ? `no answer within ${FORWARD_TIMEOUT_MS} ms` : (e.cause?.code ?? e.message),
    };
  }
}

function startForwarder(
  forwardTo: string,
  emit: (document: unknown) => void,
  count: { forwarded: number },
): Promise<Server> {
  const server = createServer((req, res) => {
    void (async () => {
      const body = await buffer(req);
      const outcome = await forward(forwardTo, req, body);
      count.forwarded += 1;
      emit({
        event: req.headers['x-service-event'] ?? null,
        deliveryId: req.headers['x-service-delivery'] ?? null,
        forwardedTo: forwardTo,
        status: outcome.status,
        ...(outcome.error && { error: outcome.error }),
      });
      res.writeHead(outcome.status >= 200 && outcome.status < 300 ? 204 : 502).end();
    })().catch(() => res.writeHead(502).end());
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => resolve(server));
  });
}

export async function webhookListen(args: ListenArgs, { runtime, emit, signal }: CommandContext) {
  if (!runtime)
    throw new Error(
      'webhook listen works with a running local runtime only: a deployed stack cannot deliver to this machine',
    );
  if (!runtime.allowHttpWebhooks) {
    throw new Error(
      'the local runtime delivers to http://127.0.0.1 only when started with --allow-http-webhooks: restart it with ' +
        '`npm start -- --allow-http-webhooks`',
    );
  }
  const tenant = await getTenant(args.tenant);
  if (!tenant) throw new Error(`No organization with id ${args.tenant}`);
  const approved = tenant.approvedHosts.includes(LOOPBACK);
  if (!approved) await updateTenant(tenant.id, { approveHosts: [LOOPBACK] });

  const count = { forwarded: 0 };
  const server = await startForwarder(args.forwardTo, emit, count);
  try {
    const { port } = server.address() as AddressInfo;
    const endpoint = await addWebhookEndpoint(
      tenant.id,
      { url: `http://${LOOPBACK}:${port}/`, events: args.events },
      { allowInsecureTargets: true },
    );
    try {
      emit({
        listening: {
          tenantId: tenant.id,
          endpointId: endpoint.id,
          events: endpoint.events,
          forwardTo: args.forwardTo,
          secret: endpoint.secret,
        },
        ...(!approved && { approvedHost: LOOPBACK }),
      });
      if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    } finally {
      await removeWebhookEndpoint(endpoint.id).catch(() => undefined);
    }
    return { stopped: { endpointId: endpoint.id, forwarded: count.forwarded, removed: true } };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}
