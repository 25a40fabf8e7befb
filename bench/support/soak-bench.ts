import { randomUUID } from 'node:crypto';
import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TABLE_NAME } from '../../lambdas/shared/aws';
import { LOCAL_TWILIO_AUTH_TOKEN } from '../../lambdas/contexts/carrier/callback-config';
import { createApiKey } from '../../lambdas/contexts/tenants/api-keys';
import { SCOPES } from '../../lambdas/contexts/tenants/scopes';
import { createTenant, updateTenant } from '../../lambdas/contexts/tenants/tenants';
import { spendOf } from '../../lambdas/contexts/texting/spend';
import { addWebhookEndpoint } from '../../lambdas/contexts/webhooks/endpoints';
import { inboundCallSequence, inboundSmsCallback, type CallbackPost } from '../../local/admin/carrier-sequences';
import { postSignedCallback } from '../../local/admin/carrier-post';
import type { LimitsProxy } from '../../local/dynamodb-limits/limits-proxy';
import type { ImagesAfterUpdates, ImagesBeforeWrites } from '../../local/dynamodb-limits/meters';
import { startRuntimeBehind } from './limits-meters';
import { httpClient, type HttpResponse } from './load';
import {
  checkEvents,
  checkTexts,
  expectedEvents,
  memoryTrend,
  type EventChecks,
  type MemorySample,
  type MemoryTrend,
  type Row,
  type SendRecord,
  type StopRecord,
  type TextChecks,
} from './soak-checks';
import { seededRandom } from '../../test/support/seeded-random';
import { startSoakReceiver } from './soak-receiver';
import { roundsLostPerSite, type SiteRounds } from './soak-rounds';
import { round } from './stats';
import { processCpuMs } from './webhook-bench';

/**
 * 11. The soak: `organizations` organizations, each with an API key and a webhook endpoint whose
 * receiver verifies every signature and answers 500 to `failShare` of the attempts; `clients`
 * clients for `minutes` on the local runtime with every table call on the limits-faithful engine
 * and the rate limits off: reads, contact writes, sends with Idempotency-Keys and replays of them,
 * inbound calls and texts as signed carrier callbacks, STOPs. At the end it checks: no 5xx, spend
 * exact per organization, each text once, each event once per endpoint and every event delivered
 * within a minute of its change, no text after a STOP, and the runtime's memory after warm-up.
 *
 * The runtime retries a failed delivery after 2 s, 4 s, 8 s... (`--webhook-backoff-ms 2000`): with
 * the contract's 1-minute base a delivery whose first attempt the receiver fails would arrive a
 * minute late by design. The check is the pipeline's lag, which the backoff would hide.
 */
export type SoakOptions = {
  minutes: number;
  organizations: number;
  clients: number;
  failShare: number;
  seed: number;
  drainMs: number;
  /** DynamoDB Local's process, for its CPU time (Linux /proc); none: not reported. */
  dynamodbPid?: number;
};

export type SoakResult = {
  options: SoakOptions;
  durationS: number;
  requests: number;
  requestsPerSecond: number;
  answers: Record<string, Record<string, number>>;
  serverErrors: { kind: string; status: number; body: string }[];
  /** Requests that got no answer (a reset connection, a timeout): the first few. */
  clientErrors: string[];
  /** 503 temporarily_unavailable answers (contention), each retried once by the client after Retry-After. */
  unavailable: number;
  events: EventChecks & { perSecond: number };
  texts: TextChecks;
  stops: number;
  memory: MemoryTrend;
  engine: {
    throttles: number;
    conflicts: number;
    imagesBeforeWrites: ImagesBeforeWrites;
    imagesAfterUpdates: ImagesAfterUpdates;
  };
  /**
   * CPU ms per request over the load, by process: the runtime, this process (the limits engine, the 16 clients, the
   * receivers) and DynamoDB Local's JVM (null where /proc cannot be read). The soak is CPU-bound on two cores, so
   * these, not its wall time on a shared machine, are what its throughput follows.
   */
  cpuMsPerRequest: { runtime: number; bench: number; dynamodbLocal: number | null };
  /**
   * The same from the first whole minute after warm-up (`cpuWarmUpMs`) to the end of the load: without the JVM's
   * compilers' start-up work, which a 3-minute run weighs five times more than a 20-minute one. Null when the load
   * ended first.
   */
  cpuMsPerRequestAfterWarmUp: (CpuMs & { fromS: number }) | null;
  /** Rounds lost per site (./soak-rounds.ts): the runtime's counts beside the engine's refusals. */
  roundsLost: SiteRounds[];
  checks: Record<string, boolean>;
};

type Org = {
  index: number;
  tenantId: string;
  key: string;
  smsNumber: string;
  voiceNumber: string;
  path: string;
  contacts: string[];
  customers: string[];
  stopped: Set<string>;
  sentKeys: string[];
  contactNumbers: number;
};

const pad = (n: number, width: number) => String(n).padStart(width, '0');
/** Texts to these numbers the loopback carrier refuses: 422 and message.failed. */
const FAILING_NUMBERS = ['+16449990001', '+16449990002', '+16449990003'];
const CUSTOMERS_PER_ORG = 400;
const EVENT_TYPES = ['call.completed', 'sms.received', 'message.delivered', 'message.failed'];
const AGENT_ID = '0199a000-0000-7000-8000-00000000a9e7';
/** A memory trend fitted over less than this after warm-up is reported, not judged: a few collections swing it. */
const MIN_MEMORY_JUDGED_S = 5 * 60;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type CpuMs = { runtime: number; bench: number; dynamodbLocal: number | null };

async function cpuNow(
  runtime: { stats: () => Promise<{ cpuMicros: { user: number; system: number } }> },
  jvm?: number,
) {
  const { cpuMicros } = await runtime.stats();
  const own = process.cpuUsage();
  return {
    runtime: (cpuMicros.user + cpuMicros.system) / 1000,
    bench: (own.user + own.system) / 1000,
    dynamodbLocal: processCpuMs(jvm),
  };
}

/**
 * Where the CPU after warm-up starts: the memory check's warm-up (2 minutes, or a quarter of a short run), rounded up
 * to a minute.
 */
export function cpuWarmUpMs(minutes: number): number {
  return Math.ceil(Math.min(120_000, (minutes * 60_000) / 4) / 60_000) * 60_000;
}

function cpuPerRequest(start: CpuMs, end: CpuMs, requests: number): CpuMs {
  const per = (ms: number) => round(ms / Math.max(1, requests), 1);
  return {
    runtime: per(end.runtime - start.runtime),
    bench: per(end.bench - start.bench),
    dynamodbLocal:
      start.dynamodbLocal === null || end.dynamodbLocal === null ? null : per(end.dynamodbLocal - start.dynamodbLocal),
  };
}

/** Every message and call row of the table (the bench's own DynamoDB Local): what the load left. */
async function rowsOfTable(db: DynamoDBDocumentClient): Promise<Row[]> {
  const rows: Row[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new ScanCommand({
        TableName: TABLE_NAME,
        FilterExpression: '#type IN (:message, :call)',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':message': 'message', ':call': 'call' },
        ExclusiveStartKey: startKey,
        ConsistentRead: true,
      }),
    );
    rows.push(...((page.Items ?? []) as Row[]));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return rows;
}

async function organizations(
  count: number,
  receiverUrl: (path: string) => string,
  secrets: Map<string, string>,
): Promise<Org[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, index) => {
      const smsNumber = `+1640${pad(index, 3)}0000`;
      const voiceNumber = `+1641${pad(index, 3)}0000`;
      const tenant = await createTenant({
        name: `Soak ${index}`,
        plan: 'pro',
        smsNumber,
        numbers: [voiceNumber],
        billingStatus: 'active',
        spendingLimitCents: 100_000_000,
      });
      await updateTenant(tenant.id, { approveHosts: ['127.0.0.1'] });
      const { key } = await createApiKey({ tenantId: tenant.id, name: 'soak', scopes: [...SCOPES] });
      const path = `/soak/${index}`;
      const endpoint = await addWebhookEndpoint(
        tenant.id,
        { url: receiverUrl(path), events: EVENT_TYPES },
        { allowInsecureTargets: true },
      );
      secrets.set(path, endpoint.secret);
      const customers = Array.from({ length: CUSTOMERS_PER_ORG }, (_, n) => `+1642${pad(index, 3)}${pad(n, 4)}`);
      return {
        index,
        tenantId: tenant.id,
        key,
        smsNumber,
        voiceNumber,
        path,
        contacts: [],
        customers,
        stopped: new Set<string>(),
        sentKeys: [],
        contactNumbers: 0,
      };
    }),
  );
}

export async function runSoak(
  engine: LimitsProxy,
  db: DynamoDBDocumentClient,
  options: SoakOptions,
  log: (line: string) => void,
): Promise<SoakResult> {
  const random = seededRandom(options.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const receiver = await startSoakReceiver(options.failShare, options.seed + 1);
  // `engine` serves every write: the runtime's handlers, sweeps and pipeline, and this process's seeding.
  const runtime = await startRuntimeBehind(
    engine,
    [
      '--rate-limit-per-key',
      '0',
      '--callback-rate-limit',
      '0',
      '--callback-limit-per-address',
      '0',
      '--allow-http-webhooks',
      '--webhook-backoff-ms',
      '2000',
    ],
    { LOOPBACK_STATUS_DELAY_MS: '1000', LOOPBACK_FAIL_TO: FAILING_NUMBERS.join(',') },
  );
  const api = httpClient(runtime.baseUrl, options.clients);
  const origin = new URL(runtime.baseUrl).origin;
  const answers: Record<string, Record<string, number>> = {};
  const serverErrors: SoakResult['serverErrors'] = [];
  const sends = new Map<string, SendRecord>();
  const stops: StopRecord[] = [];
  const memory: MemorySample[] = [];
  const clientErrors: string[] = [];
  let requests = 0;
  let unavailable = 0;

  const count = (kind: string, status: number, body: string) => {
    requests += 1;
    const byStatus = (answers[kind] ??= {});
    byStatus[status] = (byStatus[status] ?? 0) + 1;
    if (status >= 500 && serverErrors.length < 20) serverErrors.push({ kind, status, body: body.slice(0, 300) });
  };
  /** One API request; a 503 (contention) is counted and sent again once after its Retry-After, as a client should. */
  const call = async (
    kind: string,
    org: Org,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<HttpResponse> => {
    const send = () =>
      api.request(
        method,
        path,
        { Authorization: `Bearer ${org.key}`, ...headers },
        body === undefined ? undefined : JSON.stringify(body),
      );
    let response = await send();
    if (response.status === 503) {
      unavailable += 1;
      await sleep(Number(response.headers['retry-after'] ?? 1) * 1000);
      response = await send();
    }
    count(kind, response.status, response.body);
    return response;
  };
  const callback = async (kind: string, post: CallbackPost): Promise<number> => {
    const search = new URLSearchParams(post.query ?? {}).toString();
    const { status, body } = await postSignedCallback(
      origin,
      `${post.route.path}${search ? `?${search}` : ''}`,
      post.params,
      LOCAL_TWILIO_AUTH_TOKEN,
      origin,
    );
    count(kind, status, body);
    return status;
  };
  const messageIdOf = (response: HttpResponse): string | undefined => {
    try {
      const body = JSON.parse(response.body) as { message?: { id: string }; messageId?: string };
      return body.message?.id ?? body.messageId;
    } catch {
      return undefined;
    }
  };

  const requestBodies = new Map<string, unknown>();
  const sendText = async (org: Org, to: string) => {
    const key = randomUUID();
    const body = { to, body: `Soak text ${sends.size}` };
    const response = await call('send', org, 'POST', '/messages', body, { 'Idempotency-Key': key });
    sends.set(key, {
      org: org.index,
      to,
      first: { status: response.status, messageId: messageIdOf(response) },
      replays: [],
    });
    org.sentKeys.push(key);
    requestBodies.set(key, body);
  };
  const operations: [number, (org: Org) => Promise<unknown>][] = [
    [10, (org) => call('read contacts', org, 'GET', '/contacts?limit=20')],
    [6, (org) => call('read calls', org, 'GET', '/calls?limit=20')],
    [6, (org) => call('read threads', org, 'GET', '/messages?limit=20')],
    [
      5,
      (org) => call('read conversation', org, 'GET', `/messages/${encodeURIComponent(pick(org.customers))}?limit=20`),
    ],
    [3, (org) => call('read me', org, 'GET', '/me')],
    [
      8,
      async (org) => {
        const phoneNumber = `+1643${pad(org.index, 3)}${pad((org.contactNumbers += 1), 4)}`;
        const response = await call('create contact', org, 'POST', '/contacts', {
          displayName: `Soak contact ${org.contactNumbers}`,
          phoneNumber,
          company: 'Soak Inc',
        });
        const id = (JSON.parse(response.body) as { contact?: { id: string } }).contact?.id;
        if (id) org.contacts.push(id);
      },
    ],
    [
      4,
      async (org) =>
        org.contacts.length > 0 &&
        call('update contact', org, 'PATCH', `/contacts/${pick(org.contacts)}`, {
          tag: `t${Math.floor(random() * 100)}`,
        }),
    ],
    // New texts: mostly to customers, some to numbers that opted out (409), a few the carrier refuses (422).
    [
      15,
      (org) =>
        sendText(
          org,
          random() < 0.03
            ? pick(FAILING_NUMBERS)
            : org.stopped.size > 0 && random() < 0.05
              ? pick([...org.stopped])
              : pick(org.customers),
        ),
    ],
    [
      4,
      async (org) => {
        if (org.sentKeys.length === 0) return;
        const key = pick(org.sentKeys);
        const response = await call('send replay', org, 'POST', '/messages', requestBodies.get(key), {
          'Idempotency-Key': key,
        });
        sends.get(key)!.replays.push({ status: response.status, messageId: messageIdOf(response) });
      },
    ],
    [
      10,
      (org) =>
        callback(
          'inbound text',
          inboundSmsCallback({ from: pick(org.customers), to: org.smsNumber, body: 'Is my order ready?' }).post,
        ),
    ],
    [
      4,
      async (org) => {
        const sequence = inboundCallSequence({
          tenantId: org.tenantId,
          from: pick(org.customers),
          to: org.voiceNumber,
          startedAt: new Date(),
          agentId: AGENT_ID,
          durationSec: 30,
        });
        for (const post of sequence.posts) await callback('inbound call', post);
      },
    ],
    [
      1,
      async (org) => {
        const number = pick(org.customers.filter((n) => !org.stopped.has(n)));
        const status = await callback(
          'STOP',
          inboundSmsCallback({ from: number, to: org.smsNumber, body: 'STOP' }).post,
        );
        if (status === 200) {
          stops.push({ org: org.index, number, answeredAtMs: Date.now() });
          org.stopped.add(number);
        }
      },
    ],
  ];
  const totalWeight = operations.reduce((sum, [weight]) => sum + weight, 0);
  const operation = () => {
    let roll = random() * totalWeight;
    for (const [weight, run] of operations) {
      roll -= weight;
      if (roll < 0) return run;
    }
    return operations[0][1];
  };

  try {
    const orgs = await organizations(options.organizations, receiver.url, receiver.secrets);
    // An organization's first text makes its spend shards: done before the load, as long before any busy hour.
    await Promise.all(orgs.map((org) => sendText(org, org.customers[0])));
    await sleep(3_000);
    await Promise.all([runtime.limits.reset(), runtime.reset()]);
    log(`  ${orgs.length} organizations ready; ${options.clients} clients for ${options.minutes} min`);

    const cpuAtStart = await cpuNow(runtime, options.dynamodbPid);
    const started = Date.now();
    let cpuAtWarmUp: { cpu: CpuMs; requests: number; atMs: number } | undefined;
    const warmUpTimer = setTimeout(() => {
      const [at, atMs] = [requests, Date.now()];
      cpuNow(runtime, options.dynamodbPid).then(
        (cpu) => (cpuAtWarmUp = { cpu, requests: at, atMs }),
        () => undefined,
      );
    }, cpuWarmUpMs(options.minutes));
    const endAt = started + options.minutes * 60_000;
    const sampler = setInterval(() => {
      runtime.stats().then(
        (s) => memory.push({ atMs: Date.now(), rssBytes: s.rssBytes, heapUsedBytes: s.heapUsedBytes }),
        () => undefined,
      );
    }, 5_000);
    let lastReport = started;
    const worker = async () => {
      while (Date.now() < endAt) {
        const org = pick(orgs);
        try {
          await operation()(org);
        } catch (err) {
          count('no answer', 0, '');
          if (clientErrors.length < 20) clientErrors.push((err as Error).message);
        }
        if (Date.now() - lastReport >= 60_000) {
          lastReport = Date.now();
          const attempts = [...receiver.attempts.values()].reduce((sum, list) => sum + list.length, 0);
          log(
            `  [${Math.round((Date.now() - started) / 1000)} s] ${requests} requests, ${attempts} webhook attempts ` +
              `received`,
          );
        }
      }
    };
    await Promise.all(Array.from({ length: options.clients }, worker));
    const loadEnded = Date.now();
    const cpuAtEnd = await cpuNow(runtime, options.dynamodbPid);
    clearInterval(sampler);
    clearTimeout(warmUpTimer);
    const durationS = (loadEnded - started) / 1000;
    log(`  load done: ${requests} requests in ${round(durationS)} s; waiting for the last events`);

    // The last texts settle (the loopback carrier's callbacks) and their events arrive.
    const orgOf = new Map(orgs.map((org) => [org.tenantId, org.index]));
    const attemptsOf = (index: number) => receiver.attempts.get(orgs[index].path) ?? [];
    let rows: Row[] = [];
    let events: EventChecks | undefined;
    const drainUntil = Date.now() + options.drainMs;
    do {
      await sleep(5_000);
      rows = await rowsOfTable(db);
      events = checkEvents(
        expectedEvents(rows, (t) => orgOf.get(t)),
        attemptsOf,
        orgs.map((o) => o.index),
      );
    } while (
      (events.missing.length > 0 ||
        rows.some(
          (r) =>
            r.type === 'message' &&
            r.direction === 'outbound' &&
            orgOf.has(r.tenantId) &&
            r.status !== 'delivered' &&
            r.status !== 'failed',
        )) &&
      Date.now() < drainUntil
    );

    const spends = new Map(
      await Promise.all(orgs.map(async (org) => [org.index, await spendOf(org.tenantId)] as const)),
    );
    const texts = checkTexts(rows, sends, stops, spends, (t) => orgOf.get(t));
    const [engineStats, counted] = await Promise.all([runtime.limits.stats(), runtime.stats()]);
    const trend = memoryTrend(memory, Math.min(120_000, (durationS * 1000) / 4));
    const result: SoakResult = {
      options,
      durationS: round(durationS),
      requests,
      requestsPerSecond: round(requests / durationS, 1),
      answers,
      serverErrors,
      clientErrors,
      unavailable,
      events: { ...events!, perSecond: round(events!.expected / durationS, 1) },
      texts,
      stops: stops.length,
      memory: trend,
      engine: {
        throttles: engineStats.throttles.total,
        conflicts: engineStats.conflicts.total,
        imagesBeforeWrites: engineStats.imagesBeforeWrites,
        imagesAfterUpdates: engineStats.imagesAfterUpdates,
      },
      cpuMsPerRequest: cpuPerRequest(cpuAtStart, cpuAtEnd, requests),
      cpuMsPerRequestAfterWarmUp: cpuAtWarmUp
        ? {
            ...cpuPerRequest(cpuAtWarmUp.cpu, cpuAtEnd, requests - cpuAtWarmUp.requests),
            fromS: round((cpuAtWarmUp.atMs - started) / 1000),
          }
        : null,
      roundsLost: roundsLostPerSite(counted.roundsLost, engineStats.refusals, requests),
      checks: {},
    };
    result.checks = {
      'no 5xx': serverErrors.length === 0,
      'every request answered': clientErrors.length === 0,
      'spend exact per organization': texts.spendMismatches.length === 0,
      'each text once':
        texts.replayMismatches === 0 && texts.storedWithoutAnswer === 0 && texts.answeredNotStored === 0,
      'each event once per endpoint':
        events!.missing.length === 0 &&
        events!.duplicates.length === 0 &&
        events!.unexpected.length === 0 &&
        events!.badSignatures === 0,
      'every event within a minute': events!.late === 0 && events!.missing.length === 0,
      'no text after a STOP': texts.textsAfterStop.length === 0,
      // Growth is the leak: a heap that falls after the warm-up (40 -> 34 MiB in the 20-minute run) is not one.
      ...(durationS - trend.warmupS >= MIN_MEMORY_JUDGED_S && {
        'memory flat after warm-up (heap under 5 MiB per 10 min)': trend.heapMiBPer10Min < 5,
      }),
    };
    return result;
  } finally {
    api.close();
    await runtime.stop();
    await receiver.close();
  }
}
