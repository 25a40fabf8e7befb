import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { distribution, round } from './stats';

/**
 * The scale section (issue 15): one organization grown through the service's own write path to
 * each size in turn (1,000 / 10,000 / 100,000 contacts and threads, a conversation a tenth as
 * long), and at each size the same requests through the real handlers (the Lambda entry points,
 * middleware included), counted at the shared DynamoDB client by test/support/read-meter.ts:
 * items examined, read units, DynamoDB calls, response bytes, latency. The read units are the
 * ones AWS charges when the shared client is pointed at the limits engine (bench/run.ts does; the
 * seed then writes straight to DynamoDB Local through `seedClient`). Requests run one at a
 * time so latency is the request's own, not a queue's. The per-key rate limit is off here: it
 * is a write per request, the same at every size, and 120 a minute would stop the run.
 */
export type ScaleSettings = { sizes: number[]; requests: number; warmup: number };

export type ScaleRow = {
  size: number;
  request: string;
  itemsExamined: number;
  readUnits: number;
  calls: number;
  responseBytes: number;
  p50Ms: number;
  p95Ms: number;
  /** Rows in the answer, and whether it had a next page. */
  rows: number;
  nextPage: boolean;
};

export type ScaleResult = { settings: ScaleSettings; seedSeconds: Record<number, number>; rows: ScaleRow[] };

type Handler = (event: unknown, context: unknown) => Promise<APIGatewayProxyResult>;

type Request = {
  name: string;
  handler: Handler;
  query?: Record<string, string>;
  pathParameters?: Record<string, string>;
  list: string;
};

export async function measureScale(
  settings: ScaleSettings,
  log: (line: string) => void,
  /** Called after each size with the rows so far, so a long run that is stopped keeps what it measured. */
  onSize: (partial: ScaleResult) => Promise<void> = async () => undefined,
  /** What the seed writes with (default: the service's shared client). */
  seedClient?: DynamoDBDocumentClient,
): Promise<ScaleResult> {
  process.env.RATE_LIMIT_PER_KEY = '0';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  const [{ meterDynamoReads }, seed, { apiEvent, aPrincipal, lambdaContext }, contacts, contact, threads, messages] =
    await Promise.all([
      import('../../test/support/read-meter'),
      import('../../test/support/scale-seed'),
      import('../../test/support/api-event'),
      import('../../lambdas/handlers/api/list-contacts'),
      import('../../lambdas/handlers/api/get-contact'),
      import('../../lambdas/handlers/api/list-threads'),
      import('../../lambdas/handlers/api/list-messages'),
    ]);
  const tenantId = randomUUID();
  const principal = aPrincipal({ tenantId });
  const counterpart = '+14155550199';
  // Contact 7 is the only "Zebulon"; every tenth contact is an "Ada"; the digits are contact 7's national number.
  const digits = seed.numberFor(7, '+1646').slice(2);
  const requests: Request[] = [
    { name: 'search: rare term', handler: contacts.handler as Handler, query: { search: 'zebulon' }, list: 'contacts' },
    { name: 'search: common term', handler: contacts.handler as Handler, query: { search: 'ada' }, list: 'contacts' },
    { name: 'search: digits', handler: contacts.handler as Handler, query: { search: digits }, list: 'contacts' },
    { name: 'contact list', handler: contacts.handler as Handler, list: 'contacts' },
    // Its id is the rare term's one match, found once the first size is seeded.
    { name: 'contact', handler: contact.handler as Handler, pathParameters: { id: '' }, list: 'contact' },
    { name: 'thread list', handler: threads.handler as Handler, list: 'threads' },
    { name: 'conversation', handler: messages.handler as Handler, pathParameters: { counterpart }, list: 'messages' },
  ];

  const rows: ScaleRow[] = [];
  const seedSeconds: Record<number, number> = {};
  let seeded = 0;
  const meter = meterDynamoReads();
  try {
    for (const size of settings.sizes) {
      const started = performance.now();
      const grow = size - seeded;
      const conversationGrow = Math.floor(size / 10) - Math.floor(seeded / 10);
      log(
        `  seeding ${grow} contacts, ${grow} threads and ${conversationGrow} texts of one conversation (to ${size} ` +
          `of each)`,
      );
      await seed.seedContacts(tenantId, grow, { first: seeded, client: seedClient });
      await seed.seedThreads(tenantId, grow, { first: seeded, client: seedClient });
      await seed.seedConversation(tenantId, counterpart, conversationGrow, {
        first: Math.floor(seeded / 10),
        client: seedClient,
      });
      seeded = size;
      seedSeconds[size] = round((performance.now() - started) / 1000, 1);
      log(`  seeded in ${seedSeconds[size]} s; measuring ${settings.requests} requests of each kind`);

      for (const request of requests) {
        const event = apiEvent({ principal, query: request.query, pathParameters: request.pathParameters });
        for (let i = 0; i < settings.warmup; i += 1) await request.handler(event, lambdaContext);
        const latencies: number[] = [];
        let last: { result: APIGatewayProxyResult; cost: ReturnType<typeof meter.snapshot> } | undefined;
        for (let i = 0; i < settings.requests; i += 1) {
          meter.reset();
          const t0 = performance.now();
          const result = await request.handler(event, lambdaContext);
          latencies.push(performance.now() - t0);
          last = { result, cost: meter.snapshot() };
        }
        if (!last || last.result.statusCode !== 200)
          throw new Error(`${request.name} answered ${last?.result.statusCode}: ${last?.result.body}`);
        const body = JSON.parse(last.result.body) as Record<string, unknown> & { nextCursor?: string | null };
        const answer = body[request.list];
        if (request.name === 'search: rare term')
          requests.find((r) => r.name === 'contact')!.pathParameters = { id: (answer as { id: string }[])[0].id };
        const latency = distribution(latencies);
        rows.push({
          size,
          request: request.name,
          itemsExamined: last.cost.itemsExamined,
          readUnits: round(last.cost.readUnits, 1),
          calls: last.cost.calls,
          responseBytes: Buffer.byteLength(last.result.body, 'utf8'),
          p50Ms: round(latency.p50, 1),
          p95Ms: round(percentile95(latencies), 1),
          rows: Array.isArray(answer) ? answer.length : 1,
          nextPage: body.nextCursor != null,
        });
      }
      log(`  ${JSON.stringify(rows.filter((row) => row.size === size))}`);
      await onSize({ settings, seedSeconds, rows });
    }
  } finally {
    meter.stop();
  }
  return { settings, seedSeconds, rows };
}

const percentile95 = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.max(0, Math.ceil(0.95 * values.length) - 1)];

/**
 * Each figure at the largest size over the smallest (the target: at most 1.5), and search p50 over the contact list's.
 */
export function scaleVerdicts(rows: ScaleRow[]) {
  const sizes = [...new Set(rows.map((row) => row.size))];
  const [smallest, largest] = [Math.min(...sizes), Math.max(...sizes)];
  const at = (size: number, request: string) => rows.find((row) => row.size === size && row.request === request)!;
  const requests = [...new Set(rows.map((row) => row.request))];
  const growth = requests.map((request) => {
    const [a, b] = [at(smallest, request), at(largest, request)];
    return {
      request,
      itemsExamined: round(b.itemsExamined / Math.max(1, a.itemsExamined)),
      readUnits: round(b.readUnits / Math.max(0.5, a.readUnits)),
      calls: round(b.calls / Math.max(1, a.calls)),
      p50: round(b.p50Ms / Math.max(0.1, a.p50Ms)),
    };
  });
  const searchOverList = sizes.flatMap((size) =>
    requests
      .filter((request) => request.startsWith('search'))
      .map((request) => ({ size, request, p50: round(at(size, request).p50Ms / at(size, 'contact list').p50Ms) })),
  );
  return { smallest, largest, growth, searchOverList };
}

/** The section's report: one row per size and request, then the growth from the smallest size to the largest. */
export async function scaleReport({ rows }: ScaleResult): Promise<string> {
  const { table } = await import('./stats');
  const verdicts = scaleVerdicts(rows);
  const within = (value: number, target: number) => (value <= target ? 'holds' : 'MISSES');
  return [
    table([
      [
        'size',
        'request',
        'items examined',
        'read units',
        'DynamoDB calls',
        'response bytes',
        'p50 ms',
        'p95 ms',
        'rows',
        'next page',
      ],
      ...rows.map((r) => [
        r.size,
        r.request,
        r.itemsExamined,
        r.readUnits,
        r.calls,
        r.responseBytes,
        r.p50Ms,
        r.p95Ms,
        r.rows,
        r.nextPage ? 'yes' : 'no',
      ]),
    ]),
    '',
    `Growth from ${verdicts.smallest} to ${verdicts.largest} (target: every figure within 1.5x)`,
    table([
      ['request', 'items examined', 'read units', 'calls', 'p50', 'target'],
      ...verdicts.growth.map((g) => [
        g.request,
        g.itemsExamined,
        g.readUnits,
        g.calls,
        g.p50,
        within(Math.max(g.itemsExamined, g.readUnits, g.calls, g.p50), 1.5),
      ]),
    ]),
    '',
    'Search p50 over the contact list p50 (target: within 2x)',
    table([
      ['size', 'request', 'ratio', 'target'],
      ...verdicts.searchOverList.map((s) => [s.size, s.request, s.p50, within(s.p50, 2)]),
    ]),
  ].join('\n');
}
