import http, { type IncomingHttpHeaders } from 'node:http';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { createTestTable } from '../support/table';
import { createTenant, updateTenant } from '../../lambdas/contexts/tenants/tenants';
import { uuidv7 } from '../../lambdas/shared/ids';
import { addWebhookEndpoint, type WebhookEndpoint } from '../../lambdas/contexts/webhooks/endpoints';
import { getDelivery, insertDelivery, newDelivery } from '../../lambdas/contexts/webhooks/deliveries';
import { MAX_QUEUE_DELAY_MS } from '../../lambdas/contexts/webhooks/backoff';
import { postPinned } from '../../lambdas/contexts/webhooks/http-post';
import type { DeliveryMessage, DeliveryQueue } from '../../lambdas/contexts/webhooks/queue';
import { resolveTarget } from '../../lambdas/contexts/webhooks/internal/ssrf';
import { verifyDelivery } from '../../clients/typescript/src/webhooks';
import { processDeliveryMessage, type SenderDeps } from '../../lambdas/contexts/webhooks/deliver';

type Reply = { status: number; body?: string; headers?: Record<string, string>; afterMs?: number } | 'hang';
type Received = { path: string; headers: IncomingHttpHeaders; body: string };

/** A receiver on 127.0.0.1 that answers with the scripted replies in order, then 204. */
function startReceiver() {
  const received: Received[] = [];
  const replies: Reply[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body });
      const reply = replies.shift() ?? { status: 204 };
      if (reply === 'hang') return;
      setTimeout(() => res.writeHead(reply.status, reply.headers).end(reply.body), reply.afterMs ?? 0);
    });
  });
  return new Promise<{ url: string; received: Received[]; replies: Reply[]; close: () => Promise<void> }>((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        received,
        replies,
        close: () => {
          server.closeAllConnections();
          return new Promise((done) => server.close(() => done()));
        },
      });
    });
  });
}

/** A queue that only records what the sender hands it, so each attempt is driven by the test. */
function captureQueue() {
  const sent: { message: DeliveryMessage; delayMs: number }[] = [];
  const queue: DeliveryQueue = {
    send: async (message, delayMs) => {
      sent.push({ message: structuredClone(message), delayMs });
    },
  };
  return { queue, sent };
}

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let tenantId: string;
let endpoint: WebhookEndpoint;

beforeAll(async () => {
  await createTestTable();
  receiver = await startReceiver();
  tenantId = (await createTenant({ name: 'Sender Org' })).id;
  await updateTenant(tenantId, { approveHosts: ['127.0.0.1'] });
  endpoint = await addWebhookEndpoint(tenantId, { url: `${receiver.url}/hook` }, { allowInsecureTargets: true });
});

afterAll(() => receiver.close());

beforeEach(() => {
  receiver.received.length = 0;
  receiver.replies.length = 0;
});

async function pendingDelivery(target: Pick<WebhookEndpoint, 'id'> = endpoint): Promise<DeliveryMessage> {
  const eventId = uuidv7();
  const body = JSON.stringify({ id: eventId, type: 'call.completed', createdAt: new Date().toISOString(), data: { call: { id: 'c' } } });
  const delivery = newDelivery({ id: uuidv7(), tenantId, endpointId: target.id, event: 'call.completed', eventId, body }, new Date());
  await insertDelivery(delivery);
  return { deliveryId: delivery.id, tenantId, endpointId: target.id, cycle: 1, attempt: 1, body };
}

const deps = (queue: DeliveryQueue, extra: Partial<SenderDeps> = {}): SenderDeps => ({
  queue,
  allowInsecureTargets: true,
  timeoutMs: 300,
  backoffBaseMs: 1000,
  ...extra,
});

describe('a successful attempt', () => {
  it('posts the frozen body with verifiable headers and records success', async () => {
    // Prepare
    const { queue, sent } = captureQueue();
    const message = await pendingDelivery();

    // Act
    const result = await processDeliveryMessage(message, deps(queue));

    // Assess
    expect(result).toBe('succeeded');
    expect(receiver.received).toHaveLength(1);
    const [request] = receiver.received;
    expect(request.path).toBe('/hook');
    expect(request.body).toBe(message.body);
    expect(request.headers).toMatchObject({
      'content-type': 'application/json',
      'x-service-event': 'call.completed',
      'x-service-delivery': message.deliveryId,
      'x-legacy-delivery': message.deliveryId,
      'webhook-id': message.deliveryId,
    });
    expect(verifyDelivery(request.headers, request.body, endpoint.secret)).toEqual({ ok: true });
    expect(sent).toEqual([]);
    expect(await getDelivery(tenantId, endpoint.id, message.deliveryId)).toMatchObject({ status: 'succeeded', attempts: 1, nextRetryAt: null });
  });

  it('ignores a duplicate of a message already delivered', async () => {
    const { queue } = captureQueue();
    const message = await pendingDelivery();
    await processDeliveryMessage(message, deps(queue));

    const again = await processDeliveryMessage(message, deps(queue));

    expect(again).toBe('stale');
    expect(receiver.received).toHaveLength(1);
  });
});

describe('failed attempts', () => {
  it('records the status and a short excerpt, and queues the next attempt after the backoff', async () => {
    const { queue, sent } = captureQueue();
    const message = await pendingDelivery();
    receiver.replies.push({ status: 500, body: `boom\n${'x'.repeat(1000)}` });

    const result = await processDeliveryMessage(message, deps(queue));

    expect(result).toBe('retrying');
    expect(sent).toEqual([{ message: { ...message, attempt: 2 }, delayMs: 1000 }]);
    const row = (await getDelivery(tenantId, endpoint.id, message.deliveryId))!;
    expect(row).toMatchObject({ status: 'pending', attempts: 1 });
    expect(row.lastError).toMatch(/^HTTP 500: boom x+$/);
    expect(row.lastError!.length).toBeLessThanOrEqual(200);
    expect(Date.parse(row.nextRetryAt!)).toBeGreaterThan(Date.parse(row.createdAt));
  });

  it('does not follow a redirect', async () => {
    const { queue } = captureQueue();
    const message = await pendingDelivery();
    receiver.replies.push({ status: 302, headers: { Location: `${receiver.url}/elsewhere` } });

    await processDeliveryMessage(message, deps(queue));

    expect(receiver.received.map((r) => r.path)).toEqual(['/hook']);
    expect((await getDelivery(tenantId, endpoint.id, message.deliveryId))!.lastError).toBe('HTTP 302 (redirects are not followed)');
  });

  it('gives up on a receiver that does not answer within the timeout', async () => {
    const { queue, sent } = captureQueue();
    const message = await pendingDelivery();
    receiver.replies.push('hang');

    const result = await processDeliveryMessage(message, deps(queue, { timeoutMs: 200 }));

    expect(result).toBe('retrying');
    expect(sent).toHaveLength(1);
    expect((await getDelivery(tenantId, endpoint.id, message.deliveryId))!.lastError).toBe('timeout: no response within 200 ms');
  });

  it('recovers on a later attempt, with the same delivery id and a fresh signature each time', async () => {
    const { queue, sent } = captureQueue();
    let message = await pendingDelivery();
    receiver.replies.push({ status: 503 }, { status: 500 });

    const results = [];
    for (let i = 0; i < 3; i += 1) {
      results.push(await processDeliveryMessage(message, deps(queue)));
      if (sent.length > i) message = sent[i].message;
    }

    expect(results).toEqual(['retrying', 'retrying', 'succeeded']);
    expect(new Set(receiver.received.map((r) => r.headers['x-service-delivery']))).toEqual(new Set([message.deliveryId]));
    for (const request of receiver.received) expect(verifyDelivery(request.headers, request.body, endpoint.secret).ok).toBe(true);
    expect(await getDelivery(tenantId, endpoint.id, message.deliveryId)).toMatchObject({
      status: 'succeeded',
      attempts: 3,
      lastError: 'HTTP 500', // the last failure stays visible after the success
    });
  });

  it('fails the delivery after the 8th attempt, having waited 1, 2, 4 ... 60 x the base', async () => {
    const { queue, sent } = captureQueue();
    let message = await pendingDelivery();
    receiver.replies.push(...Array.from({ length: 8 }, () => ({ status: 500 })));

    const results = [];
    for (let attempt = 1; attempt <= 8; attempt += 1) {
      results.push(await processDeliveryMessage(message, deps(queue)));
      message = sent[sent.length - 1].message;
    }

    expect(results).toEqual([...Array(7).fill('retrying'), 'failed']);
    expect(sent.map((s) => s.delayMs)).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000]);
    expect(await getDelivery(tenantId, endpoint.id, message.deliveryId)).toMatchObject({ status: 'failed', attempts: 8, nextRetryAt: null });
  });

  it('carries a wait over 15 minutes as hops with a not-before time', async () => {
    const { queue, sent } = captureQueue();
    const message = await pendingDelivery();
    receiver.replies.push({ status: 500 });

    await processDeliveryMessage(message, deps(queue, { backoffBaseMs: 1_000_000 }));
    const hop = sent[0];
    // The queue hands the message back 15 minutes later.
    const deferred = await processDeliveryMessage(hop.message, deps(queue, { now: () => Date.now() + MAX_QUEUE_DELAY_MS }));

    expect(hop.delayMs).toBe(MAX_QUEUE_DELAY_MS);
    expect(hop.message.notBefore).toBe(Date.parse((await getDelivery(tenantId, endpoint.id, message.deliveryId))!.nextRetryAt!));
    expect(deferred).toBe('deferred');
    expect(sent[1].message.notBefore).toBeUndefined(); // the remaining ~100 s fit in one hop
    expect(sent[1].delayMs).toBeLessThanOrEqual(100_000);
    expect(receiver.received).toHaveLength(1);
  });
});

describe('the SSRF guard at send time', () => {
  it('refuses an http loopback target without allowInsecureTargets and never connects', async () => {
    const { queue, sent } = captureQueue();
    const message = await pendingDelivery();

    const result = await processDeliveryMessage(message, deps(queue, { allowInsecureTargets: false }));

    expect(result).toBe('retrying');
    expect(sent).toHaveLength(1);
    expect(receiver.received).toHaveLength(0);
    expect((await getDelivery(tenantId, endpoint.id, message.deliveryId))!.lastError).toBe('refused target: url: must use https');
  });

  it('fails a delivery whose endpoint is gone', async () => {
    const { queue } = captureQueue();
    const message = await pendingDelivery({ id: uuidv7() });

    expect(await processDeliveryMessage(message, deps(queue))).toBe('failed');
    expect(await getDelivery(tenantId, message.endpointId, message.deliveryId)).toMatchObject({ status: 'failed', lastError: 'endpoint deleted' });
  });

  describe('with a host name to resolve', () => {
    let named: WebhookEndpoint;
    beforeAll(async () => {
      await updateTenant(tenantId, { approveHosts: ['hooks.example.test'] });
      named = await addWebhookEndpoint(tenantId, { url: `${receiver.url.replace('127.0.0.1', 'hooks.example.test')}/named` }, { allowInsecureTargets: true });
    });
    /** A resolver that answers 127.0.0.1 after `ms`, counting its calls. */
    const slowLookup = (ms: number) => {
      const calls: string[] = [];
      const lookup = async (hostname: string) => {
        calls.push(hostname);
        await new Promise((resolve) => setTimeout(resolve, ms));
        return [{ address: '127.0.0.1', family: 4 }];
      };
      return { lookup, calls };
    };

    it('fails an attempt whose lookup outlasts the timeout, without posting', async () => {
      const { queue, sent } = captureQueue();
      const message = await pendingDelivery(named);
      const { lookup } = slowLookup(900);

      const result = await processDeliveryMessage(message, deps(queue, { timeoutMs: 300, lookup }));

      expect(result).toBe('retrying');
      expect(sent).toHaveLength(1);
      expect(receiver.received).toHaveLength(0);
      expect((await getDelivery(tenantId, named.id, message.deliveryId))!.lastError).toBe('timeout: hooks.example.test did not resolve within 300 ms');
    });

    it('counts the lookup against the attempt: the post gets only what is left of the timeout', async () => {
      const { queue } = captureQueue();
      const message = await pendingDelivery(named);
      const { lookup, calls } = slowLookup(200);
      receiver.replies.push({ status: 204, afterMs: 150 });

      const result = await processDeliveryMessage(message, deps(queue, { timeoutMs: 300, lookup }));

      expect(result).toBe('retrying');
      expect(receiver.received.map((r) => r.path)).toEqual(['/named']);
      expect(calls).toEqual(['hooks.example.test']);
      expect((await getDelivery(tenantId, named.id, message.deliveryId))!.lastError).toBe('timeout: no response within 300 ms');
    });
  });

  it('connects to the checked address while presenting the original host name for TLS', async () => {
    const names: string[] = [];
    const server = tls.createServer({
      SNICallback: (name, done) => {
        names.push(name);
        done(new Error('no certificate in this test'));
      },
    });
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const target = await resolveTarget(new URL(`https://hooks.example.test:${port}/in`), {
      lookup: async () => [{ address: '127.0.0.1', family: 4 }],
      allowInsecureTargets: true,
    });

    const outcome = await postPinned(target, {}, '{}', 2000);
    server.close();

    expect(names).toEqual(['hooks.example.test']);
    expect(outcome).toMatchObject({ ok: false, error: expect.stringMatching(/^network error: /) });
  });
});
