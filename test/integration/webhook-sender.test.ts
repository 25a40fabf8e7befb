import http, { type IncomingHttpHeaders } from 'node:http';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import { createTestTable } from '../support/table';
import { createTenant, updateTenant } from '../../lambdas/contexts/tenants/tenants';
import { uuidv7 } from '../../lambdas/shared/ids';
import {
  addWebhookEndpoint,
  getWebhookEndpoint,
  publicWebhookEndpoint,
  setWebhookEndpointEnabled,
  type WebhookEndpoint,
} from '../../lambdas/contexts/webhooks/endpoints';
import { ENDPOINTS_DISABLED_METRIC } from '../../lambdas/contexts/webhooks/health-metrics';
import { metrics } from '../../lambdas/shared/aws';
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
  const body = JSON.stringify({
    id: eventId,
    type: 'call.completed',
    createdAt: new Date().toISOString(),
    data: { call: { id: 'c' } },
  });
  const delivery = newDelivery(
    { id: uuidv7(), tenantId, endpointId: target.id, event: 'call.completed', eventId, body },
    new Date(),
  );
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
    expect(await getDelivery(tenantId, message.deliveryId)).toMatchObject({
      status: 'succeeded',
      attempts: 1,
      nextRetryAt: null,
    });
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
    const row = (await getDelivery(tenantId, message.deliveryId))!;
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
    expect((await getDelivery(tenantId, message.deliveryId))!.lastError).toBe('HTTP 302 (redirects are not followed)');
  });

  it('gives up on a receiver that does not answer within the timeout', async () => {
    const { queue, sent } = captureQueue();
    const message = await pendingDelivery();
    receiver.replies.push('hang');

    const result = await processDeliveryMessage(message, deps(queue, { timeoutMs: 200 }));

    expect(result).toBe('retrying');
    expect(sent).toHaveLength(1);
    expect((await getDelivery(tenantId, message.deliveryId))!.lastError).toBe('timeout: no response within 200 ms');
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
    expect(new Set(receiver.received.map((r) => r.headers['x-service-delivery']))).toEqual(
      new Set([message.deliveryId]),
    );
    for (const request of receiver.received)
      expect(verifyDelivery(request.headers, request.body, endpoint.secret).ok).toBe(true);
    expect(await getDelivery(tenantId, message.deliveryId)).toMatchObject({
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
    expect(await getDelivery(tenantId, message.deliveryId)).toMatchObject({
      status: 'failed',
      attempts: 8,
      nextRetryAt: null,
    });
  });

  it('carries a wait over 15 minutes as hops with a not-before time', async () => {
    const { queue, sent } = captureQueue();
    const message = await pendingDelivery();
    receiver.replies.push({ status: 500 });

    await processDeliveryMessage(message, deps(queue, { backoffBaseMs: 1_000_000 }));
    const hop = sent[0];
    // The queue hands the message back 15 minutes later.
    const deferred = await processDeliveryMessage(
      hop.message,
      deps(queue, { now: () => Date.now() + MAX_QUEUE_DELAY_MS }),
    );

    expect(hop.delayMs).toBe(MAX_QUEUE_DELAY_MS);
    expect(hop.message.notBefore).toBe(Date.parse((await getDelivery(tenantId, message.deliveryId))!.nextRetryAt!));
    expect(deferred).toBe('deferred');
    expect(sent[1].message.notBefore).toBeUndefined(); // the remaining ~100 s fit in one hop
    expect(sent[1].delayMs).toBeLessThanOrEqual(100_000);
    expect(receiver.received).toHaveLength(1);
  });
});

describe('a receiver that asks for time (429, 503 with Retry-After)', () => {
  it('waits at least as long as it asked before the next attempt, rather than the backoff', async () => {
    const { queue, sent } = captureQueue();
    const message = await pendingDelivery();
    receiver.replies.push({ status: 429, headers: { 'Retry-After': '30' } });

    const result = await processDeliveryMessage(message, deps(queue));

    expect(result).toBe('retrying');
    expect(sent).toEqual([{ message: { ...message, attempt: 2 }, delayMs: 30_000 }]);
    const row = (await getDelivery(tenantId, message.deliveryId))!;
    expect(Date.parse(row.nextRetryAt!) - Date.parse(row.updatedAt)).toBeGreaterThanOrEqual(29_000);
  });

  it("reads an HTTP date on a 503, and never waits past the cap (60 x the base: the spec's 60 minutes)", async () => {
    const { queue, sent } = captureQueue();
    const [soon, late] = [await pendingDelivery(), await pendingDelivery()];
    const now = Date.now();
    receiver.replies.push(
      { status: 503, headers: { 'Retry-After': new Date(now + 20_000).toUTCString() } },
      { status: 503, headers: { 'Retry-After': '7200' } },
    );

    await processDeliveryMessage(soon, deps(queue, { now: () => now }));
    await processDeliveryMessage(late, deps(queue, { now: () => now }));

    expect(sent[0].delayMs).toBeGreaterThanOrEqual(19_000);
    expect(sent[0].delayMs).toBeLessThanOrEqual(20_000);
    expect(sent[1].delayMs).toBe(60_000);
  });

  it('ignores Retry-After on other failures: a 500 waits the backoff', async () => {
    const { queue, sent } = captureQueue();
    const message = await pendingDelivery();
    receiver.replies.push({ status: 500, headers: { 'Retry-After': '30' } });

    await processDeliveryMessage(message, deps(queue));

    expect(sent[0].delayMs).toBe(1000);
  });
});

describe('endpoint health', () => {
  /** An endpoint of its own, so disabling it leaves the others alone. */
  const ownEndpoint = () =>
    addWebhookEndpoint(tenantId, { url: `${receiver.url}/hook` }, { allowInsecureTargets: true });
  const shown = async (id: string) => publicWebhookEndpoint((await getWebhookEndpoint(tenantId, id))!);

  it('disables at once an endpoint that answers 410, without a retry, and counts it', async () => {
    // Prepare
    const gone = await ownEndpoint();
    const { queue, sent } = captureQueue();
    const [message, next] = [await pendingDelivery(gone), await pendingDelivery(gone)];
    receiver.replies.push({ status: 410 });
    const counted = jest.spyOn(metrics, 'addMetric');

    // Act
    const result = await processDeliveryMessage(message, deps(queue));
    const afterwards = await processDeliveryMessage(next, deps(queue));

    // Assess
    expect(result).toBe('failed');
    expect(sent).toEqual([]);
    expect(await getDelivery(tenantId, message.deliveryId)).toMatchObject({
      status: 'failed',
      attempts: 1,
      lastError: expect.stringMatching(/^HTTP 410 \(endpoint disabled: the endpoint answered 410 Gone\)$/),
    });
    expect(await shown(gone.id)).toMatchObject({
      state: 'disabled',
      enabled: false,
      disabledReason: 'gone',
      disabledAt: expect.any(String),
    });
    expect(counted).toHaveBeenCalledWith(ENDPOINTS_DISABLED_METRIC, 'Count', 1);
    expect(counted).toHaveBeenCalledTimes(1);
    // The next delivery meets the disabled endpoint and posts nothing.
    expect(afterwards).toBe('failed');
    expect(receiver.received).toHaveLength(1);
    counted.mockRestore();
  });

  it('disables an endpoint whose every attempt has failed for 5 days, and a success in between starts the count again', async () => {
    // Prepare
    const failing = await ownEndpoint();
    const { queue } = captureQueue();
    const t0 = Date.parse('2026-11-01T00:00:00.000Z');
    const day = 24 * 3600 * 1000;
    const attemptAt = async (at: number, reply: { status: number }) => {
      receiver.replies.push(reply);
      return processDeliveryMessage(await pendingDelivery(failing), deps(queue, { now: () => at }));
    };

    // Act: failing from day 0, a success on day 2, failing again from day 3
    await attemptAt(t0, { status: 500 });
    const streakStart = (await shown(failing.id)).failingSince;
    await attemptAt(t0 + 2 * day, { status: 204 });
    const afterSuccess = (await shown(failing.id)).failingSince;
    await attemptAt(t0 + 3 * day, { status: 500 });
    const sixDaysAfterFirst = await attemptAt(t0 + 6 * day, { status: 500 });
    const stillEnabled = await shown(failing.id);
    const last = await attemptAt(t0 + 8 * day, { status: 500 });

    // Assess
    expect(streakStart).toBe(new Date(t0).toISOString());
    expect(afterSuccess).toBeNull();
    expect(sixDaysAfterFirst).toBe('retrying');
    expect(stillEnabled).toMatchObject({ state: 'enabled', failingSince: new Date(t0 + 3 * day).toISOString() });
    expect(last).toBe('failed');
    expect(await shown(failing.id)).toMatchObject({ state: 'disabled', disabledReason: 'failing' });
  });

  it('is reset by webhook enable: enabled again, no reason, no failing streak', async () => {
    // Prepare
    const gone = await ownEndpoint();
    receiver.replies.push({ status: 410 });
    await processDeliveryMessage(await pendingDelivery(gone), deps(captureQueue().queue));

    // Act
    const enabled = publicWebhookEndpoint(await setWebhookEndpointEnabled(gone.id, true));

    // Assess
    expect(enabled).toMatchObject({
      state: 'enabled',
      enabled: true,
      disabledAt: null,
      disabledReason: null,
      failingSince: null,
    });
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
    expect((await getDelivery(tenantId, message.deliveryId))!.lastError).toBe('refused target: url: must use https');
  });

  it('fails a delivery whose endpoint is gone', async () => {
    const { queue } = captureQueue();
    const message = await pendingDelivery({ id: uuidv7() });

    expect(await processDeliveryMessage(message, deps(queue))).toBe('failed');
    expect(await getDelivery(tenantId, message.deliveryId)).toMatchObject({
      status: 'failed',
      lastError: 'endpoint deleted',
    });
  });

  describe('with a host name to resolve', () => {
    let named: WebhookEndpoint;
    beforeAll(async () => {
      await updateTenant(tenantId, { approveHosts: ['hooks.example.test'] });
      named = await addWebhookEndpoint(
        tenantId,
        { url: `${receiver.url.replace('127.0.0.1', 'hooks.example.test')}/named` },
        { allowInsecureTargets: true },
      );
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
      expect((await getDelivery(tenantId, message.deliveryId))!.lastError).toBe(
        'timeout: hooks.example.test did not resolve within 300 ms',
      );
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
      expect((await getDelivery(tenantId, message.deliveryId))!.lastError).toBe('timeout: no response within 300 ms');
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
