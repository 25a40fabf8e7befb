import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestTable } from '../support/table';
import { suiteSize } from '../support/suite-sizes';
import { createTenant, updateTenant } from '../../lambdas/contexts/tenants/tenants';
import { uuidv7 } from '../../lambdas/shared/ids';
import { addWebhookEndpoint, type WebhookEndpoint } from '../../lambdas/contexts/webhooks/endpoints';
import { claimAttempt, getDelivery, insertDelivery, newDelivery } from '../../lambdas/contexts/webhooks/deliveries';
import type { DeliveryMessage, DeliveryQueue } from '../../lambdas/contexts/webhooks/queue';
import {
  AttemptInProgressError,
  CLAIM_MARGIN_MS,
  claimStaleAfterMs,
  processDeliveryMessage,
} from '../../lambdas/contexts/webhooks/deliver';

/**
 * At least once without duplicate chains: SQS may hand the same attempt to two processors (a
 * redelivery while the first still runs, a Lambda retry); exactly one of them may post and queue
 * the next attempt. Every round uses a fresh delivery, and checks its own outcome: 5 rounds in `npm test`, 40 in the
 * bench (WEBHOOK_CLAIM_ROUNDS), which explores more interleavings.
 */
const ROUNDS = suiteSize('WEBHOOK_CLAIM_ROUNDS', 5);
// Many rounds of real DynamoDB writes: seconds alone, longer when the whole suite shares 2 cores.
jest.setTimeout(60_000);
let receiverUrl: string;
let posts = 0;
let failWith = 500;
let server: http.Server;
let tenantId: string;
let endpoint: WebhookEndpoint;

beforeAll(async () => {
  await createTestTable();
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      posts += 1;
      res.writeHead(failWith).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  tenantId = (await createTenant({ name: 'Claims Org' })).id;
  await updateTenant(tenantId, { approveHosts: ['127.0.0.1'] });
  endpoint = await addWebhookEndpoint(tenantId, { url: `${receiverUrl}/hook` }, { allowInsecureTargets: true });
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function pendingDelivery(): Promise<DeliveryMessage> {
  const eventId = uuidv7();
  const body = JSON.stringify({
    id: eventId,
    type: 'call.completed',
    createdAt: new Date().toISOString(),
    data: { call: { id: 'c' } },
  });
  const delivery = newDelivery(
    { id: uuidv7(), tenantId, endpointId: endpoint.id, event: 'call.completed', eventId, body },
    new Date(),
  );
  await insertDelivery(delivery);
  return { deliveryId: delivery.id, tenantId, endpointId: endpoint.id, cycle: 1, attempt: 1, body };
}

function captureQueue() {
  const sent: DeliveryMessage[] = [];
  const queue: DeliveryQueue = { send: async (message) => void sent.push(structuredClone(message)) };
  return { queue, sent };
}

const settle = (work: Promise<unknown>) =>
  work.then(
    (v) => v,
    (err: unknown) => err,
  );

describe('two processors of the same attempt', () => {
  it('post once and queue one next attempt, when they run at the same time', async () => {
    failWith = 500;
    for (let round = 0; round < ROUNDS; round += 1) {
      // Prepare
      const message = await pendingDelivery();
      const { queue, sent } = captureQueue();
      const before = posts;
      // Act
      const outcomes = await Promise.all(
        [1, 2].map(() => settle(processDeliveryMessage(message, { queue, allowInsecureTargets: true }))),
      );
      // Assess: one made the attempt; the other was told to come back later or found it done
      expect(posts - before).toBe(1);
      expect(sent.map((m) => m.attempt)).toEqual([2]);
      expect(outcomes).toContain('retrying');
      expect(outcomes.filter((o) => o === 'retrying')).toHaveLength(1);
      expect(outcomes.every((o) => o === 'retrying' || o === 'stale' || o instanceof AttemptInProgressError)).toBe(
        true,
      );
      expect(await getDelivery(tenantId, message.deliveryId)).toMatchObject({ attempts: 1, status: 'pending' });
    }
  });

  it('post once when the copy comes after the first finished, and a duplicate of the next attempt is refused too', async () => {
    failWith = 500;
    for (let round = 0; round < ROUNDS; round += 1) {
      const message = await pendingDelivery();
      const { queue, sent } = captureQueue();
      const before = posts;

      const first = await processDeliveryMessage(message, { queue, allowInsecureTargets: true });
      const copy = await processDeliveryMessage(message, { queue, allowInsecureTargets: true });
      const next = { ...sent[0], notBefore: undefined };
      const nextOutcomes = await Promise.all(
        [1, 2].map(() => settle(processDeliveryMessage(next, { queue, allowInsecureTargets: true }))),
      );

      expect([first, copy]).toEqual(['retrying', 'stale']);
      expect(posts - before).toBe(2); // attempt 1 once, attempt 2 once
      expect(nextOutcomes.filter((o) => o === 'retrying')).toHaveLength(1);
      expect(sent.map((m) => m.attempt)).toEqual([2, 3]);
    }
  });
});

describe('a processor that crashed after claiming', () => {
  it('leaves a fresh claim alone (the copy comes back later) and lets a stale one be taken over', async () => {
    // Prepare: attempt 1 claimed, then its processor died before posting
    const message = await pendingDelivery();
    const delivery = { tenantId, endpointId: endpoint.id, id: message.deliveryId };
    const staleAfterMs = 10_000 + CLAIM_MARGIN_MS;
    const claimedAt = Date.now();
    await claimAttempt(delivery, { cycle: 1, attempt: 1, nowMs: claimedAt, staleAfterMs });
    const { queue, sent } = captureQueue();
    const before = posts;
    // Act
    const fresh = await settle(
      processDeliveryMessage(message, { queue, allowInsecureTargets: true, now: () => claimedAt + 1_000 }),
    );
    const takeover = await processDeliveryMessage(message, {
      queue,
      allowInsecureTargets: true,
      now: () => claimedAt + staleAfterMs + 1,
    });
    // Assess
    expect(fresh).toBeInstanceOf(AttemptInProgressError);
    expect(takeover).toBe('retrying');
    expect(posts - before).toBe(1);
    expect(sent.map((m) => m.attempt)).toEqual([2]);
  });

  it('between queueing the next attempt and recording: the takeover repeats the attempt, and the chain still does not fork', async () => {
    failWith = 500;
    for (let round = 0; round < ROUNDS; round += 1) {
      // Prepare: attempt 1 posted and queued attempt 2, then its processor died before recording
      const message = await pendingDelivery();
      const { queue, sent } = captureQueue();
      const dying: DeliveryQueue = {
        send: async (m, delayMs) => {
          await queue.send(m, delayMs);
          throw new Error('processor died after queueing');
        },
      };
      const t0 = Date.now();
      const before = posts;
      await expect(
        processDeliveryMessage(message, { queue: dying, allowInsecureTargets: true, now: () => t0 }),
      ).rejects.toThrow('died');
      // Act: SQS brings attempt 1 back after its visibility timeout; then both copies of attempt 2 arrive
      const takeover = await processDeliveryMessage(message, {
        queue,
        allowInsecureTargets: true,
        now: () => t0 + claimStaleAfterMs() + 1,
      });
      const copies = sent.filter((m) => m.attempt === 2);
      const outcomes = await Promise.all(
        copies.map((m) => settle(processDeliveryMessage(m, { queue, allowInsecureTargets: true }))),
      );
      // Assess: attempt 1 made twice (at least once), attempt 2 once, one attempt 3 queued
      expect(takeover).toBe('retrying');
      expect(copies).toHaveLength(2);
      expect(outcomes.filter((o) => o === 'retrying')).toHaveLength(1);
      expect(posts - before).toBe(3);
      expect(sent.map((m) => m.attempt)).toEqual([2, 2, 3]);
      expect(await getDelivery(tenantId, message.deliveryId)).toMatchObject({ attempts: 2, status: 'pending' });
    }
  });

  it('never takes back a claim from a later attempt: the earlier attempt was made, its outcome only went unrecorded', async () => {
    failWith = 500;
    // Prepare: attempt 1 queued attempt 2 and died unrecorded; attempt 2 claimed (once long ago, once now)
    const [old, fresh] = [await pendingDelivery(), await pendingDelivery()];
    const t0 = Date.now();
    const later = t0 + claimStaleAfterMs() + 1;
    await claimAttempt(
      { tenantId, id: old.deliveryId },
      { cycle: 1, attempt: 2, nowMs: t0, staleAfterMs: claimStaleAfterMs() },
    );
    await claimAttempt(
      { tenantId, id: fresh.deliveryId },
      { cycle: 1, attempt: 2, nowMs: later, staleAfterMs: claimStaleAfterMs() },
    );
    const { queue, sent } = captureQueue();
    const before = posts;
    // Act: attempt 1's message comes back
    const outcomes = await Promise.all(
      [old, fresh].map((m) =>
        settle(processDeliveryMessage(m, { queue, allowInsecureTargets: true, now: () => later })),
      ),
    );
    // Assess: dropped, not repeated, not sent back to the queue by a throw
    expect(outcomes).toEqual(['stale', 'stale']);
    expect(posts - before).toBe(0);
    expect(sent).toEqual([]);
  });

  it('answers a claim for a settled delivery, an older cycle or a delivery that does not exist as stale', async () => {
    failWith = 204;
    const message = await pendingDelivery();
    const { queue } = captureQueue();
    await processDeliveryMessage(message, { queue, allowInsecureTargets: true });
    const delivery = { tenantId, endpointId: endpoint.id, id: message.deliveryId };

    expect(await claimAttempt(delivery, { cycle: 1, attempt: 2, nowMs: Date.now(), staleAfterMs: 1 })).toEqual({
      claim: 'stale',
    });
    expect(await claimAttempt(delivery, { cycle: 0, attempt: 1, nowMs: Date.now(), staleAfterMs: 1 })).toEqual({
      claim: 'stale',
    });
    expect(
      await claimAttempt({ tenantId, id: uuidv7() }, { cycle: 1, attempt: 1, nowMs: Date.now(), staleAfterMs: 1 }),
    ).toEqual({ claim: 'stale' });
  });
});
