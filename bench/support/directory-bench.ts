import { createClient, type ImportContact } from '../../clients/typescript/src';
import type { LimitsStats } from '../../local/dynamodb-limits/meters';
import { createApiKey } from '../../lambdas/contexts/tenants/api-keys';
import { SCOPES } from '../../lambdas/contexts/tenants/scopes';
import { createTenant } from '../../lambdas/contexts/tenants/tenants';
import { contactRowsOf } from '../../test/support/directory-rows';
import type { LimitsMeters } from './limits-meters';
import type { RuntimeProcess } from './runtime-process';
import { distribution, round } from './stats';

/**
 * The directory section (issue 32): a CRM's contacts imported through `POST /contacts/batch` by the
 * typed client (`client.contacts.import`), over HTTP to a runtime behind the limits engine with the
 * contract's rate limit on (120 requests per key and minute), so units are those AWS charges; then
 * the sync loop a CRM runs, a walk of the whole feed of changes (`GET /contacts?updatedSince=`),
 * at two directory sizes, counting what each page reads.
 */
export type DirectoryImport = {
  contacts: number;
  requests: number;
  statuses: Record<string, number>;
  wallSeconds: number;
  /** The same requests at the key's 120 a minute, were the rate limit the only bound. */
  rateLimitedFloorSeconds: number;
  /** As AWS charges them: every write of the import, per contact. */
  writeUnitsPerContact: { total: number; table: number; indexes: number };
} & RunOutcome;

/** What a run of batches left, whichever way they were sent: answers, rows, the engine's meters. */
type RunOutcome = {
  /** Answers with a 5xx status (none is the target). */
  serverErrors: number;
  /** Contacts in the directory afterwards, and distinct numbers and external ids among them: each once. */
  stored: { contacts: number; numbers: number; externalIds: number };
  batchMs: { p50: number; p99: number; max: number };
  /** The busiest partition-key values, per contact. */
  hottestTablePartition: { key: string; writeUnitsPerContact: number };
  hottestIndexPartition: { key: string; writeUnitsPerContact: number };
  throttles: number;
  conflicts: number;
};

export type SyncPageCost = {
  size: number;
  pages: number;
  itemsPerPage: { p50: number; max: number };
  readUnitsPerPage: { p50: number; max: number };
  callsPerPage: number;
  walkSeconds: number;
  contactsSeen: number;
};

/**
 * `batches` requests of `size` new contacts from one organization, all at once (the 16 of 100 on DynamoDB's
 * limits).
 */
export type ConcurrentBatches = {
  batches: number;
  size: number;
  statuses: Record<string, number>;
  /** Item results by status: every one `created` is the target. */
  results: Record<string, number>;
} & RunOutcome;

export type DirectoryResult = {
  import: DirectoryImport;
  concurrent: ConcurrentBatches;
  updates?: ConcurrentUpdates;
  sync: SyncPageCost[];
};

const FIRST_NAMES = ['Ada', 'Grace', 'Alan', 'Katherine', 'Edsger', 'Barbara', 'Donald', 'Frances', 'John', 'Margaret'];
const LAST_NAMES = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Johnson',
  'Dijkstra',
  'Liskov',
  'Knuth',
  'Allen',
  'Backus',
  'Hamilton',
];

/** Contact `i` of a CRM: a person of a company, a number of one area code, the CRM's id and two of its properties. */
const crmContact = (i: number): ImportContact => ({
  displayName: `${FIRST_NAMES[i % 10]} ${LAST_NAMES[Math.floor(i / 10) % 10]} ${i}`,
  phoneNumber: `+1628${String(2_000_000 + i).padStart(7, '0')}`,
  company: `Customer ${Math.floor(i / 25)}`,
  externalId: `crm-${i}`,
  customFields: { lifecycleStage: i % 3 === 0 ? 'customer' : 'lead', owner: `rep${i % 7}@example.com` },
});

const unitsOf = (stats: LimitsStats) => {
  const tables = Object.values(stats.tables);
  const table = tables.reduce((sum, t) => sum + t.writeUnits, 0);
  const indexes = tables.reduce((sum, t) => sum + Object.values(t.indexes).reduce((s, i) => s + i.writeUnits, 0), 0);
  return { table, indexes };
};

function hottest(stats: LimitsStats, index: boolean): { key: string; writeUnits: number } {
  return Object.entries(stats.partitions)
    .filter(([key]) => key.split(' ')[0].includes('/') === index)
    .reduce(
      (best, [key, meter]) => (meter.writeUnits > best.writeUnits ? { key, writeUnits: meter.writeUnits } : best),
      { key: '-', writeUnits: 0 },
    );
}

/** The outcome of `count` contacts sent in batches by `tenantId`, answered with `statuses` in `latencies`. */
async function runOutcome(
  runtime: { limits: LimitsMeters },
  tenantId: string,
  count: number,
  statuses: Record<string, number>,
  latencies: number[],
) {
  const stats = await runtime.limits.stats();
  const rows = await contactRowsOf(tenantId);
  const batch = distribution(latencies);
  const table = hottest(stats, false);
  const index = hottest(stats, true);
  const outcome: RunOutcome = {
    serverErrors: Object.entries(statuses)
      .filter(([status]) => Number(status) >= 500)
      .reduce((sum, [, n]) => sum + n, 0),
    stored: {
      contacts: rows.length,
      numbers: new Set(rows.map((row) => row.normalizedNumber)).size,
      externalIds: new Set(rows.map((row) => row.externalId)).size,
    },
    batchMs: { p50: round(batch.p50, 0), p99: round(batch.p99, 0), max: round(batch.max, 0) },
    hottestTablePartition: { key: table.key, writeUnitsPerContact: round(table.writeUnits / count, 2) },
    hottestIndexPartition: { key: index.key, writeUnitsPerContact: round(index.writeUnits / count, 2) },
    throttles: stats.throttles.total,
    conflicts: stats.conflicts.total,
  };
  return { outcome, stats };
}

/**
 * `count` contacts through the typed client's import, against `runtime` (on the limits engine, with the per-key limit
 * on).
 */
export async function measureImport(
  runtime: RuntimeProcess & { limits: LimitsMeters },
  count: number,
  log: (line: string) => void,
): Promise<DirectoryImport> {
  const tenant = await createTenant({ name: 'Directory bench', plan: 'pro' });
  const { key } = await createApiKey({ tenantId: tenant.id, name: 'crm sync', scopes: [...SCOPES] });
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const timed = async (request: Request): Promise<Response> => {
    const started = performance.now();
    const response = await fetch(request);
    latencies.push(performance.now() - started);
    statuses[response.status] = (statuses[response.status] ?? 0) + 1;
    return response;
  };
  const client = createClient({ baseUrl: runtime.baseUrl, apiKey: key, fetch: timed });
  const source = (function* () {
    for (let i = 0; i < count; i += 1) yield crmContact(i);
  })();
  await runtime.limits.reset();
  const started = performance.now();
  const report = await client.contacts.import(source, {
    onProgress: ({ done, requests }) => {
      if (done % 1000 === 0 || done === count)
        log(
          `  ${done} of ${count} contacts answered, ${requests} requests, ` +
            `${round((performance.now() - started) / 1000, 1)} s`,
        );
    },
  });
  const wallSeconds = (performance.now() - started) / 1000;
  const { outcome, stats } = await runOutcome(runtime, tenant.id, count, statuses, latencies);
  const units = unitsOf(stats);
  return {
    contacts: count,
    requests: report.requests,
    statuses: Object.fromEntries(Object.entries(report.counts).map(([status, n]) => [status, n ?? 0])),
    wallSeconds: round(wallSeconds, 1),
    rateLimitedFloorSeconds: round(Math.max(0, Math.ceil(report.requests / 120) - 1) * 60, 0),
    writeUnitsPerContact: {
      total: round((units.table + units.indexes) / count, 1),
      table: round(units.table / count, 1),
      indexes: round(units.indexes / count, 1),
    },
    ...outcome,
  };
}

/**
 * `batches` requests of `size` new contacts each, from one organization, sent at once over HTTP to
 * `runtime` (on the limits engine): what a CRM's parallel import puts on DynamoDB's limits. The
 * suite runs 4 at once for their correctness (test/integration/contacts-batch-limits.test.ts);
 * the 16 at once, and how long each takes, are measured here.
 */
export async function measureConcurrentBatches(
  runtime: RuntimeProcess & { limits: LimitsMeters },
  batches: number,
  size: number,
): Promise<ConcurrentBatches> {
  const tenant = await createTenant({ name: 'Directory bench, batches at once', plan: 'pro' });
  const { key } = await createApiKey({ tenantId: tenant.id, name: 'crm sync', scopes: [...SCOPES] });
  const statuses: Record<string, number> = {};
  const results: Record<string, number> = {};
  const latencies: number[] = [];
  await runtime.limits.reset();
  await Promise.all(
    Array.from({ length: batches }, async (_, b) => {
      const contacts = Array.from({ length: size }, (_, i) => ({ ...crmContact(1_000_000 + b * size + i) }));
      const started = performance.now();
      const response = await fetch(`${runtime.baseUrl}/contacts/batch`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ contacts }),
      });
      latencies.push(performance.now() - started);
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
      const body = (await response.json()) as { results?: { status: string }[] };
      for (const result of body.results ?? []) results[result.status] = (results[result.status] ?? 0) + 1;
    }),
  );
  const { outcome } = await runOutcome(runtime, tenant.id, batches * size, statuses, latencies);
  return { batches, size, statuses, results, ...outcome };
}

/**
 * A sync loop at each size: an organization of `size` contacts (their rows as the service writes
 * them, one second apart), then one walk of its whole feed of changes, 100 a page, through the
 * domain's `listContacts` on the shared client (DynamoDB Local here: it reports a Query's read
 * units as AWS computes them, items examined included), counting each page.
 */
export async function measureSync(sizes: number[], log: (line: string) => void): Promise<SyncPageCost[]> {
  const [{ meterDynamoReads }, { putInBatches, numberFor }, { listContacts }, { toItem, customFieldsOf }, { uuidv7 }] =
    await Promise.all([
      import('../../test/support/read-meter'),
      import('../../test/support/scale-seed'),
      import('../../lambdas/contexts/contacts/contacts'),
      import('../../lambdas/contexts/contacts/contact-rows'),
      import('../../lambdas/shared/ids'),
    ]);
  const results: SyncPageCost[] = [];
  for (const size of sizes) {
    const tenantId = uuidv7();
    log(`  seeding a directory of ${size} contacts`);
    const epoch = Date.UTC(2026, 0, 1);
    for (let from = 0; from < size; from += 10_000) {
      const rows = Array.from({ length: Math.min(10_000, size - from) }, (_, k) => {
        const i = from + k;
        const at = new Date(epoch + i * 1000).toISOString();
        const contact = { ...crmContact(i), phoneNumber: numberFor(i) };
        return toItem({
          id: uuidv7(Date.parse(at)),
          tenantId,
          displayName: contact.displayName,
          phoneNumber: contact.phoneNumber,
          company: contact.company ?? null,
          tag: null,
          notes: null,
          createdByAgentId: null,
          createdAt: at,
          updatedAt: at,
          normalizedNumber: contact.phoneNumber,
          isAutoCreated: false,
          source: 'manual',
          consentStatus: 'unknown',
          consentSource: null,
          consentAt: null,
          consentNote: null,
          externalId: contact.externalId ?? null,
          customFields: customFieldsOf(contact.customFields),
          version: 1,
        });
      });
      await putInBatches(rows);
    }
    log(`  walking the feed of ${size} contacts, 100 a page`);
    const meter = meterDynamoReads();
    const items: number[] = [];
    const units: number[] = [];
    let calls = 0;
    let seen = 0;
    const started = performance.now();
    try {
      let cursor: string | undefined;
      do {
        meter.reset();
        const page = await listContacts(tenantId, {
          limit: 100,
          includeAutoCreated: true,
          updatedSince: '2026-01-01T00:00:00.000Z',
          cursor,
        });
        const cost = meter.snapshot();
        items.push(cost.itemsExamined);
        units.push(cost.readUnits);
        calls = Math.max(calls, cost.calls);
        seen += page.items.length;
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
    } finally {
      meter.stop();
    }
    const itemDistribution = distribution(items);
    const unitDistribution = distribution(units);
    results.push({
      size,
      pages: items.length,
      itemsPerPage: { p50: itemDistribution.p50, max: itemDistribution.max },
      readUnitsPerPage: { p50: round(unitDistribution.p50, 1), max: round(unitDistribution.max, 1) },
      callsPerPage: calls,
      walkSeconds: round((performance.now() - started) / 1000, 1),
      contactsSeen: seen,
    });
  }
  return results;
}

/** `batches` requests of `size` updates of existing contacts, from one organization, sent at once (issue 38 part 6). */
export type ConcurrentUpdates = {
  batches: number;
  size: number;
  statuses: Record<string, number>;
  /** Item results of the burst itself, by status; `unavailable` ones are sent again after it. */
  results: Record<string, number>;
  /** The slowest answer of the burst: API Gateway cuts at 29 s, so 29.5 s is the ceiling. */
  maxBatchMs: number;
  /** Rounds of sending the `unavailable` items again until none was left (0: none was). */
  retryRounds: number;
  /** Contacts whose row shows the update after the retries: the target is every one. */
  applied: number;
  serverErrors: number;
};

/**
 * The burst the deadline exists for: `batches` concurrent batches of `size` updates (each contact's name and a
 * custom field), on contacts made beforehand (not measured), over HTTP to `runtime` on the limits engine. Items a
 * batch had no time for answer `unavailable` (nothing written) and are sent again, as the import client does.
 */
export async function measureConcurrentUpdates(
  runtime: RuntimeProcess & { limits: LimitsMeters },
  batches: number,
  size: number,
): Promise<ConcurrentUpdates> {
  const tenant = await createTenant({ name: 'Directory bench, updates at once', plan: 'pro' });
  const { key } = await createApiKey({ tenantId: tenant.id, name: 'crm sync', scopes: [...SCOPES] });
  const post = async (contacts: ImportContact[]) => {
    const started = performance.now();
    const response = await fetch(`${runtime.baseUrl}/contacts/batch`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ contacts }),
    });
    const body = (await response.json()) as { results?: { status: string }[] };
    return { status: response.status, ms: performance.now() - started, results: body.results ?? [] };
  };
  const made = (b: number) => Array.from({ length: size }, (_, i) => crmContact(3_000_000 + b * size + i));
  for (let b = 0; b < batches; b += 1) await post(made(b));
  const updated = (contact: ImportContact): ImportContact => ({
    ...contact,
    displayName: `${contact.displayName} (updated)`,
    customFields: { ...contact.customFields, lifecycleStage: 'renewal' },
  });
  await runtime.limits.reset();
  const burst = await Promise.all(Array.from({ length: batches }, (_, b) => post(made(b).map(updated))));
  const statuses: Record<string, number> = {};
  const results: Record<string, number> = {};
  let left: ImportContact[] = [];
  burst.forEach(({ status, results: items }, b) => {
    statuses[status] = (statuses[status] ?? 0) + 1;
    items.forEach((item, i) => {
      results[item.status] = (results[item.status] ?? 0) + 1;
      if (item.status === 'unavailable') left.push(updated(made(b)[i]));
    });
  });
  let retryRounds = 0;
  while (left.length > 0 && retryRounds < 10) {
    retryRounds += 1;
    const again = await post(left.slice(0, 100));
    left = [...left.slice(100), ...left.slice(0, 100).filter((_, i) => again.results[i]?.status === 'unavailable')];
  }
  const rows = await contactRowsOf(tenant.id);
  return {
    batches,
    size,
    statuses,
    results,
    maxBatchMs: Math.round(Math.max(...burst.map((b) => b.ms))),
    retryRounds,
    applied: rows.filter((row) => String(row.displayName).endsWith('(updated)')).length,
    serverErrors: burst.filter((b) => b.status >= 500).length,
  };
}
