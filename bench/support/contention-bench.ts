import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { TABLE_NAME } from '../../lambdas/shared/aws';
import { LOCAL_TWILIO_AUTH_TOKEN } from '../../lambdas/contexts/carrier/callback-config';
import { createApiKey } from '../../lambdas/contexts/tenants/api-keys';
import { SCOPES } from '../../lambdas/contexts/tenants/scopes';
import { createTenant } from '../../lambdas/contexts/tenants/tenants';
import { spendOf } from '../../lambdas/contexts/texting/spend';
import { inboundCallSequence } from '../../local/admin/carrier-sequences';
import { postSignedCallback } from '../../local/admin/carrier-post';
import type { LimitsStats } from '../../local/dynamodb-limits/meters';
import { httpClient, runLoad } from './load';
import type { LimitsMeters } from './limits-meters';
import type { RuntimeProcess } from './runtime-process';
import { distribution, round } from './stats';

/**
 * 8. Contention: one busy organization (and several at once) on DynamoDB's real write semantics,
 * through the local runtime on the limits-faithful engine (docs/local-engine.md: transactions hold
 * their items 25 ms and cancel colliding ones, 1,000 write units per second per partition-key value
 * and per item, units counted as AWS charges them). Each scenario reports the answers by status,
 * the engine's conflicts and throttles, latency, and from the engine's meters the write units per
 * text (or call event) on the hottest partition-key value and the writes per text on the hottest
 * item, each text's whole life included (stored, its sid, sent, delivered: the runtime's loopback
 * carrier plays the status callbacks back within the scenario).
 */
export type ContentionScenario = {
  name: string;
  engine: 'limits engine' | 'DynamoDB Local';
  kind: 'texts' | 'call events';
  organizations: number;
  concurrency: number;
  requests: number;
  answers: Record<string, number>;
  latencyMs: ReturnType<typeof distribution>;
  wallS: number;
  conflicts: number;
  conflictsPer100: number;
  /** The engine's conflicts by operation (a transaction cancelled, a plain write refused), retries included. */
  conflictsByOperation: Record<string, number>;
  throttles: number;
  /** Write units per request on the partition-key values (of the table, then of any index) that took the most. */
  hottestTablePartition: { key: string; writeUnitsPerRequest: number };
  hottestIndexPartition: { key: string; writeUnitsPerRequest: number };
  hottestItem: { key: string; writesPerRequest: number };
  /** Texts: the spend of every organization equals the cost of its texts stored, and none is stored twice. */
  spendEqualsCost?: boolean;
  duplicates?: number;
  /** Every unit the scenario cost, as AWS charges it (table and indexes). */
  units: { readUnits: number; writeUnits: number };
};

const unitsOf = (stats: LimitsStats | undefined) => ({
  readUnits: round(
    Object.values(stats?.operations ?? {}).reduce((sum, o) => sum + o.readUnits, 0),
    1,
  ),
  writeUnits: round(
    Object.values(stats?.operations ?? {}).reduce((sum, o) => sum + o.writeUnits, 0),
    1,
  ),
});

type Organization = { tenantId: string; key: string; smsNumber: string; voiceNumber: string };

let organizations = 0;
const orgNumber = (kind: number, n: number) => `+1${kind}55${String(n).padStart(5, '0')}`;

/** Organizations with an SMS number, a voice number and a key, written through the domain modules. */
export async function contentionOrganizations(count: number): Promise<Organization[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      organizations += 1;
      const smsNumber = orgNumber(628, organizations);
      const voiceNumber = orgNumber(629, organizations);
      const tenant = await createTenant({
        name: `Contention ${organizations}`,
        plan: 'pro',
        smsNumber,
        numbers: [voiceNumber],
        billingStatus: 'active',
        spendingLimitCents: 1_000_000,
      });
      const { key } = await createApiKey({ tenantId: tenant.id, name: 'contention', scopes: [...SCOPES] });
      return { tenantId: tenant.id, key, smsNumber, voiceNumber };
    }),
  );
}

/** The hottest partition-key values and item by the engine's meters, per request. */
function hotSpots(stats: LimitsStats | undefined, requests: number) {
  const per = (value: number) => round(value / Math.max(1, requests), 3);
  const hottest = (entries: [string, number][]) =>
    entries.reduce((best, entry) => (entry[1] > best[1] ? entry : best), ['-', 0] as [string, number]);
  const partitions = Object.entries(stats?.partitions ?? {});
  const [tableKey, tableUnits] = hottest(
    partitions.filter(([key]) => !key.split(' ')[0].includes('/')).map(([key, m]) => [key, m.writeUnits]),
  );
  const [indexKey, indexUnits] = hottest(
    partitions.filter(([key]) => key.split(' ')[0].includes('/')).map(([key, m]) => [key, m.writeUnits]),
  );
  const [itemKey, itemWrites] = hottest(Object.entries(stats?.items ?? {}).map(([key, m]) => [key, m.writes]));
  return {
    hottestTablePartition: { key: tableKey, writeUnitsPerRequest: per(tableUnits) },
    hottestIndexPartition: { key: indexKey, writeUnitsPerRequest: per(indexUnits) },
    hottestItem: { key: itemKey, writesPerRequest: per(itemWrites) },
  };
}

/** Every message row of the table (the bench's own, on DynamoDB Local): what the texts left. */
async function messageRows(db: DynamoDBDocumentClient): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new ScanCommand({
        TableName: TABLE_NAME,
        FilterExpression: '#type = :message',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':message': 'message' },
        ExclusiveStartKey: startKey,
        ConsistentRead: true,
      }),
    );
    rows.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return rows;
}

/** Waits until every text the organizations sent has reached a final status (the loopback carrier's callbacks). */
async function untilSettled(
  db: DynamoDBDocumentClient,
  tenantIds: Set<string>,
  timeoutMs = 120_000,
): Promise<Record<string, unknown>[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = (await messageRows(db)).filter((row) => tenantIds.has(row.tenantId as string));
    if (rows.every((row) => row.status === 'delivered' || row.status === 'failed') || Date.now() > deadline)
      return rows;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * `texts` texts through POST /messages, `concurrency` at a time, spread over the organizations, each to a number of its
 * own.
 */
export async function textBurst(
  runtime: RuntimeProcess & { limits?: LimitsMeters },
  db: DynamoDBDocumentClient,
  name: string,
  orgs: Organization[],
  texts: number,
  concurrency: number,
): Promise<ContentionScenario> {
  const client = httpClient(runtime.baseUrl, concurrency);
  const answers: Record<string, number> = {};
  const post = (org: Organization, key: string, to: string) =>
    client.request(
      'POST',
      '/messages',
      { Authorization: `Bearer ${org.key}`, 'Idempotency-Key': key },
      JSON.stringify({ to, body: 'Your appointment is confirmed for 3 pm.' }),
    );
  // An organization's first text ever makes its spend shards (one transaction of 33 rows): done
  // before the measurement, as it is long before any busy hour.
  const warm = `${name.replace(/[^A-Za-z0-9]+/g, '-')}-warm`;
  await Promise.all(orgs.map((org, i) => post(org, `${warm}-${i}`, orgNumber(769, i))));
  await untilSettled(db, new Set(orgs.map((org) => org.tenantId)));
  await runtime.limits?.reset();
  try {
    const load = await runLoad(texts, concurrency, async (i) => {
      const response = await post(
        orgs[i % orgs.length],
        `${name.replace(/[^A-Za-z0-9]+/g, '-')}-${i}`,
        orgNumber(770 + (i % 9), i),
      );
      answers[response.status] = (answers[response.status] ?? 0) + 1;
      if (response.status >= 500) throw new Error(`POST /messages ${response.status}: ${response.body.slice(0, 200)}`);
    });
    const rows = await untilSettled(db, new Set(orgs.map((org) => org.tenantId)));
    const stats = await runtime.limits?.stats();
    const sent = answers['201'] ?? 0;
    const stored = rows.length - orgs.length; // the warm-up texts are one per organization
    const spend = (await Promise.all(orgs.map((org) => spendOf(org.tenantId)))).reduce((a, b) => a + b, 0);
    const cost = rows
      .filter((row) => row.direction === 'outbound' && row.status !== 'failed')
      .reduce((sum, row) => sum + ((row.costCents as number) ?? 0), 0);
    return {
      name,
      engine: runtime.limits ? 'limits engine' : 'DynamoDB Local',
      kind: 'texts',
      organizations: orgs.length,
      concurrency,
      requests: texts,
      answers,
      latencyMs: distribution(load.samples),
      wallS: round(load.wallMs / 1000, 1),
      conflicts: stats?.conflicts.total ?? 0,
      conflictsPer100: round(((stats?.conflicts.total ?? 0) / texts) * 100, 1),
      conflictsByOperation: stats?.conflicts.byOperation ?? {},
      throttles: stats?.throttles.total ?? 0,
      ...hotSpots(stats, sent),
      spendEqualsCost: spend === cost,
      duplicates: stored - sent,
      units: unitsOf(stats),
    };
  } finally {
    client.close();
  }
}

/**
 * `streams` concurrent inbound calls at a time on one organization, `callsPerStream` each, every
 * call Twilio's callbacks for its two legs (parent rings, the agent's softphone rings, both answer,
 * the child completes, the parent completes), each from a caller of its own, signed as Twilio
 * signs them.
 */
export async function callStreams(
  runtime: RuntimeProcess & { limits?: LimitsMeters },
  name: string,
  org: Organization,
  streams: number,
  callsPerStream: number,
): Promise<ContentionScenario> {
  const origin = new URL(runtime.baseUrl).origin;
  const answers: Record<string, number> = {};
  const samples: number[] = [];
  let events = 0;
  await runtime.limits?.reset();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: streams }, async (_, stream) => {
      for (let call = 0; call < callsPerStream; call += 1) {
        const sequence = inboundCallSequence({
          tenantId: org.tenantId,
          from: orgNumber(880 + stream, call),
          to: org.voiceNumber,
          startedAt: new Date(),
          agentId: `0199a000-0000-7000-8000-${String(stream).padStart(12, '0')}`,
          durationSec: 30,
        });
        for (const post of sequence.posts) {
          const search = new URLSearchParams(post.query ?? {}).toString();
          const t0 = performance.now();
          const { status } = await postSignedCallback(
            origin,
            `${post.route.path}${search ? `?${search}` : ''}`,
            post.params,
            LOCAL_TWILIO_AUTH_TOKEN,
            origin,
          );
          samples.push(performance.now() - t0);
          answers[status] = (answers[status] ?? 0) + 1;
          events += 1;
        }
      }
    }),
  );
  const wallMs = performance.now() - started;
  const stats = await runtime.limits?.stats();
  return {
    name,
    engine: runtime.limits ? 'limits engine' : 'DynamoDB Local',
    kind: 'call events',
    organizations: 1,
    concurrency: streams,
    requests: events,
    answers,
    latencyMs: distribution(samples),
    wallS: round(wallMs / 1000, 1),
    conflicts: stats?.conflicts.total ?? 0,
    conflictsPer100: round(((stats?.conflicts.total ?? 0) / events) * 100, 1),
    conflictsByOperation: stats?.conflicts.byOperation ?? {},
    throttles: stats?.throttles.total ?? 0,
    ...hotSpots(stats, events),
    units: unitsOf(stats),
  };
}
