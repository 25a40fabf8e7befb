import { localEngineClientConfig } from '../../lambdas/shared/config';
import { databaseName } from '../../local/dynamodb-limits/engine';
import { STATS_PATH } from '../../local/dynamodb-limits/limits-proxy';
import type { KeyMeter, LimitsStats } from '../../local/dynamodb-limits/meters';

/**
 * The limits engine's meters (docs/local-engine.md, "Meters") as a test reads them: a race test, to
 * prove the race it is about happened (a concurrency test that passes because its requests never
 * met proves nothing); a test of what a key costs, from its item's meter. Every integration file
 * has a database of its own on the one engine of the run (integration-env.ts), so the meters read
 * here are this file's requests alone, whatever other files run meanwhile; within a file tests run
 * one at a time, so `since` a mark is one test's.
 */

/**
 * Whether this file's DynamoDB client goes through the limits engine (jest.config.js: the integration-limits project,
 * or DYNAMODB_ENGINE=limits).
 */
export function onLimitsEngine(): boolean {
  const engine = process.env.DYNAMODB_LIMITS_ENDPOINT;
  return !!engine && process.env.DYNAMODB_ENDPOINT === engine;
}

/**
 * Requests refused or cancelled for a held item (`conflicts`) and for a throughput budget (`throttles`), by operation.
 */
export type RaceCounts = {
  conflicts: number;
  conflictsBy: Record<string, number>;
  throttles: number;
  throttlesBy: Record<string, number>;
};

/** This file's meters: what its requests counted on the engine. */
export async function engineStats(): Promise<LimitsStats> {
  const engine = process.env.DYNAMODB_LIMITS_ENDPOINT;
  if (!engine || !onLimitsEngine())
    throw new Error('this file does not run on the limits engine: read its meters only when onLimitsEngine()');
  const { region, credentials } = localEngineClientConfig(engine);
  const response = await fetch(
    `${engine}${STATS_PATH}?database=${encodeURIComponent(databaseName(credentials.accessKeyId, region))}`,
  );
  if (!response.ok) throw new Error(`the limits engine answered ${response.status} for its meters`);
  return (await response.json()) as LimitsStats;
}

/** One item's meter (`<table> S:<pk> S:<sk>`), zero when the engine has not seen it. */
export async function engineItemMeter(itemKey: string): Promise<KeyMeter> {
  return (await engineStats()).items[itemKey] ?? { readUnits: 0, writeUnits: 0, reads: 0, writes: 0 };
}

const countsOf = (stats: LimitsStats): RaceCounts => ({
  conflicts: stats.conflicts.total,
  conflictsBy: stats.conflicts.byOperation,
  throttles: stats.throttles.total,
  throttlesBy: stats.throttles.byOperation,
});

const minus = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(after).flatMap(([key, count]) =>
      count - (before[key] ?? 0) > 0 ? [[key, count - (before[key] ?? 0)]] : [],
    ),
  );

/**
 * Marks the meters now; `since()` answers the conflicts and throttles of this file's requests
 * from the mark on. Only on the engine (`onLimitsEngine()`); a file that runs on both engines
 * asserts them on the engine's run alone.
 */
export type RaceMark = { since: () => Promise<RaceCounts> };

export async function markRaceMeters(): Promise<RaceMark> {
  const before = countsOf(await engineStats());
  return {
    since: async () => {
      const after = countsOf(await engineStats());
      return {
        conflicts: after.conflicts - before.conflicts,
        conflictsBy: minus(after.conflictsBy, before.conflictsBy),
        throttles: after.throttles - before.throttles,
        throttlesBy: minus(after.throttlesBy, before.throttlesBy),
      };
    },
  };
}

/**
 * For a file that runs on both engines: the mark on the limits engine, undefined on DynamoDB Local alone (which never
 * refuses).
 */
export const markRaceMetersOnTheEngine = async (): Promise<RaceMark | undefined> =>
  onLimitsEngine() ? markRaceMeters() : undefined;

/**
 * The race happened: since the mark, transactions of the racers met on an item and the engine
 * cancelled one (TransactionConflict; the caller then retried). Nothing to check without a mark
 * (the DynamoDB Local run of a file on both engines).
 */
export async function expectTransactionsMet(mark: RaceMark | undefined): Promise<void> {
  if (!mark) return;
  const { conflictsBy } = await mark.since();
  expect(conflictsBy.TransactWriteItems ?? 0).toBeGreaterThan(0);
}

/**
 * Runs `rounds` rounds of a race, each asserting its own outcome, and on the limits engine more (at most `extra`) until
 * the racers' transactions met in one, then checks they did: fewer rounds in `npm test` never drop the proof that the
 * race happened. On DynamoDB Local alone (a file on both engines), the rounds only.
 */
export async function roundsUntilTransactionsMeet(
  rounds: number,
  run: (round: number) => Promise<void>,
  extra = 10,
): Promise<void> {
  const mark = await markRaceMetersOnTheEngine();
  const met = async () => !!mark && ((await mark.since()).conflictsBy.TransactWriteItems ?? 0) > 0;
  for (let round = 0; round < rounds || (mark && round < rounds + extra && !(await met())); round += 1)
    await run(round);
  await expectTransactionsMet(mark);
}
