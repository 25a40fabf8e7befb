import { STATS_PATH } from '../../local/dynamodb-limits/limits-proxy';
import type { KeyMeter, LimitsStats } from '../../local/dynamodb-limits/meters';

/**
 * The meters of the limits-faithful engine the `integration-limits` project runs on
 * (DYNAMODB_LIMITS_ENDPOINT), read over HTTP as any client would. Every file of the project shares
 * that engine, so a test reads the meters of its own keys (`items`, `partitions`), before and
 * after, rather than totals another file may move meanwhile.
 */
export async function engineStats(): Promise<LimitsStats> {
  const endpoint = process.env.DYNAMODB_LIMITS_ENDPOINT;
  if (!endpoint) throw new Error('DYNAMODB_LIMITS_ENDPOINT is not set: this test runs in the integration-limits project');
  const answer = await fetch(`${endpoint}${STATS_PATH}`);
  if (!answer.ok) throw new Error(`the engine's meters answered ${answer.status}`);
  return (await answer.json()) as LimitsStats;
}

/** One item's meter (`<table> S:<pk> S:<sk>`), zero when the engine has not seen it. */
export async function engineItemMeter(itemKey: string): Promise<KeyMeter> {
  return (await engineStats()).items[itemKey] ?? { readUnits: 0, writeUnits: 0, reads: 0, writes: 0 };
}
