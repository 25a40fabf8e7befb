import { distribution, round, type Distribution } from './stats';
import type { Attempt } from './soak-receiver';

/**
 * What the soak checks at the end, from what the table holds, what the clients were answered and
 * what the receivers got. Pure functions over those records, so each rule reads on its own.
 */
export const EVENT_DEADLINE_MS = 60_000;

export type SoakOrg = { index: number; tenantId: string; path: string };

/** A message or call row of a soak organization, as the table holds it. */
export type Row = {
  type: string;
  tenantId: string;
  id: string;
  direction?: string;
  status?: string;
  counterpartNumber?: string;
  createdAt?: string;
  costCents?: number;
};

export type SendRecord = { org: number; to: string; first: Answer; replays: Answer[] };
export type Answer = { status: number; messageId?: string };
export type StopRecord = { org: number; number: string; answeredAtMs: number };

const TERMINAL_CALL_STATUSES = new Set(['completed', 'busy', 'no-answer', 'canceled', 'failed']);

/** The events the table's rows raise, as `<type> <resource id>`, per organization index. */
export function expectedEvents(
  rows: readonly Row[],
  orgOf: (tenantId: string) => number | undefined,
): Map<number, Set<string>> {
  const expected = new Map<number, Set<string>>();
  const add = (org: number, key: string) => (expected.get(org) ?? expected.set(org, new Set()).get(org)!).add(key);
  for (const row of rows) {
    const org = orgOf(row.tenantId);
    if (org === undefined) continue;
    if (row.type === 'message' && row.direction === 'inbound') add(org, `sms.received ${row.id}`);
    if (row.type === 'message' && row.direction === 'outbound' && row.status === 'delivered')
      add(org, `message.delivered ${row.id}`);
    if (row.type === 'message' && row.direction === 'outbound' && row.status === 'failed')
      add(org, `message.failed ${row.id}`);
    if (row.type === 'call' && TERMINAL_CALL_STATUSES.has(row.status ?? '')) add(org, `call.completed ${row.id}`);
  }
  return expected;
}

export type EventChecks = {
  expected: number;
  delivered: number;
  missing: string[];
  /** Events answered 2xx more than once, or sent under more than one event id. */
  duplicates: string[];
  unexpected: string[];
  badSignatures: number;
  /** Delivered, but more than a minute after the change. */
  late: number;
  attempts: number;
  failedAttempts: number;
  firstAttemptMs: Distribution;
  deliveredMs: Distribution;
};

export function checkEvents(
  expected: Map<number, Set<string>>,
  attemptsOf: (org: number) => readonly Attempt[],
  orgs: readonly number[],
): EventChecks {
  const result: EventChecks = {
    expected: 0,
    delivered: 0,
    missing: [],
    duplicates: [],
    unexpected: [],
    badSignatures: 0,
    late: 0,
    attempts: 0,
    failedAttempts: 0,
    firstAttemptMs: distribution([]),
    deliveredMs: distribution([]),
  };
  const first: number[] = [];
  const delivered: number[] = [];
  for (const org of orgs) {
    const wanted = expected.get(org) ?? new Set<string>();
    const byEvent = new Map<string, Attempt[]>();
    for (const attempt of attemptsOf(org)) {
      result.attempts += 1;
      if (!attempt.signatureOk) result.badSignatures += 1;
      if (attempt.answered >= 300) result.failedAttempts += 1;
      const key = `${attempt.type} ${attempt.resourceId}`;
      byEvent.set(key, [...(byEvent.get(key) ?? []), attempt]);
    }
    result.expected += wanted.size;
    for (const key of wanted) {
      const attempts = byEvent.get(key) ?? [];
      const ok = attempts.filter((a) => a.answered < 300);
      if (ok.length === 0) {
        result.missing.push(`org ${org}: ${key}`);
        continue;
      }
      result.delivered += 1;
      if (ok.length > 1 || new Set(attempts.map((a) => a.eventId)).size > 1)
        result.duplicates.push(`org ${org}: ${key}`);
      first.push(Math.min(...attempts.map((a) => a.atMs)) - attempts[0].changedAtMs);
      const took = ok[0].atMs - ok[0].changedAtMs;
      delivered.push(took);
      if (took > EVENT_DEADLINE_MS) result.late += 1;
    }
    for (const key of byEvent.keys()) if (!wanted.has(key)) result.unexpected.push(`org ${org}: ${key}`);
  }
  result.firstAttemptMs = distribution(first);
  result.deliveredMs = distribution(delivered);
  return result;
}

export type TextChecks = {
  sends: number;
  replays: number;
  /** A replay answered differently from the first answer to its key. */
  replayMismatches: number;
  /** Outbound rows no answer named, and answers naming no row: a text stored twice or lost. */
  storedWithoutAnswer: number;
  answeredNotStored: number;
  /** Texts stored for a number after its STOP was answered. */
  textsAfterStop: string[];
  /** Organizations whose spend differs from the cost of their texts not failed. */
  spendMismatches: string[];
  /** Outbound texts still without a final status at the end. */
  unsettled: number;
};

export function checkTexts(
  rows: readonly Row[],
  sends: ReadonlyMap<string, SendRecord>,
  stops: readonly StopRecord[],
  spendOf: ReadonlyMap<number, number>,
  orgOf: (tenantId: string) => number | undefined,
): TextChecks {
  const outbound = rows.filter(
    (row) => row.type === 'message' && row.direction === 'outbound' && orgOf(row.tenantId) !== undefined,
  );
  const answered = new Set<string>();
  let replays = 0;
  let replayMismatches = 0;
  for (const send of sends.values()) {
    if (send.first.messageId) answered.add(send.first.messageId);
    for (const replay of send.replays) {
      replays += 1;
      if (replay.status !== send.first.status || replay.messageId !== send.first.messageId) replayMismatches += 1;
    }
  }
  const stored = new Set(outbound.map((row) => row.id));
  const textsAfterStop = stops.flatMap((stop) =>
    outbound
      .filter(
        (row) =>
          orgOf(row.tenantId) === stop.org &&
          row.counterpartNumber === stop.number &&
          Date.parse(row.createdAt ?? '') > stop.answeredAtMs,
      )
      .map(
        (row) =>
          `org ${stop.org}: text ${row.id} to ${stop.number}, STOP answered ` +
          `${new Date(stop.answeredAtMs).toISOString()}`,
      ),
  );
  const cost = new Map<number, number>();
  for (const row of outbound) {
    if (row.status === 'failed') continue;
    const org = orgOf(row.tenantId)!;
    cost.set(org, (cost.get(org) ?? 0) + (row.costCents ?? 0));
  }
  const spendMismatches = [...spendOf]
    .filter(([org, spend]) => spend !== (cost.get(org) ?? 0))
    .map(([org, spend]) => `org ${org}: spend ${spend}, texts ${cost.get(org) ?? 0}`);
  return {
    sends: sends.size,
    replays,
    replayMismatches,
    storedWithoutAnswer: [...stored].filter((id) => !answered.has(id)).length,
    answeredNotStored: [...answered].filter((id) => !stored.has(id)).length,
    textsAfterStop,
    spendMismatches,
    unsettled: outbound.filter((row) => row.status !== 'delivered' && row.status !== 'failed').length,
  };
}

export type MemorySample = { atMs: number; rssBytes: number; heapUsedBytes: number };

export type MemoryTrend = {
  samples: number;
  warmupS: number;
  heapMiBPer10Min: number;
  rssMiBPer10Min: number;
  heapMiB: { first: number; last: number };
  rssMiB: { first: number; last: number };
};

/** Least-squares slope of y over x. */
function slope(points: readonly [number, number][]): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return sxx === 0 ? Number.NaN : points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0) / sxx;
}

/**
 * The runtime's memory after warm-up, as a trend: the heap's low point per 30-second window (what
 * survives garbage collection, not where a collection happened to be) and the RSS, each fitted with
 * a straight line, in MiB per 10 minutes.
 */
export function memoryTrend(samples: readonly MemorySample[], warmupMs: number): MemoryTrend {
  const start = samples[0]?.atMs ?? 0;
  const after = samples.filter((s) => s.atMs - start >= warmupMs);
  const windows = new Map<number, MemorySample[]>();
  for (const sample of after) {
    const window = Math.floor((sample.atMs - start) / 30_000);
    windows.set(window, [...(windows.get(window) ?? []), sample]);
  }
  const mib = (bytes: number) => bytes / 2 ** 20;
  const perTenMinutes = (perMs: number) => round(perMs * 600_000, 1);
  const heapFloor = [...windows.values()].map(
    (w) => [w[0].atMs, mib(Math.min(...w.map((s) => s.heapUsedBytes)))] as [number, number],
  );
  const rss = after.map((s) => [s.atMs, mib(s.rssBytes)] as [number, number]);
  return {
    samples: after.length,
    warmupS: round(warmupMs / 1000),
    heapMiBPer10Min: perTenMinutes(slope(heapFloor)),
    rssMiBPer10Min: perTenMinutes(slope(rss)),
    heapMiB: {
      first: round(heapFloor[0]?.[1] ?? Number.NaN, 1),
      last: round(heapFloor[heapFloor.length - 1]?.[1] ?? Number.NaN, 1),
    },
    rssMiB: { first: round(rss[0]?.[1] ?? Number.NaN, 1), last: round(rss[rss.length - 1]?.[1] ?? Number.NaN, 1) },
  };
}
