import { RESET_PATH, STATS_PATH } from '../../local/dynamodb-limits/limits-proxy';
import type { LimitsStats } from '../../local/dynamodb-limits/meters';

/**
 * The limits engine's meters (docs/local-engine.md), read over HTTP from the process that runs
 * it: the local runtime started with `--dynamodb-limits` prints the engine's address
 * (LIMITS_LINE); `startRuntimeProcess(endpoint, [], limitsRuntimeArgs())` starts one and hands
 * back its meters. Every figure is what AWS would charge: units per operation, table and index,
 * per partition-key value and item, conflicts and throttles.
 */
export type LimitsMeters = {
  endpoint: string;
  stats: () => Promise<LimitsStats>;
  /** Clears the meters and refills the budgets (between measurements). */
  reset: () => Promise<void>;
};

/** The runtime's startup line naming the engine (local/runtime.ts). */
export const LIMITS_LINE = /DynamoDB limits engine: (http:\/\/127\.0\.0\.1:\d+)/;

export type LimitsRuntimeSettings = { transactionHoldMs?: number; partitionWriteUnits?: number; itemWriteUnits?: number; partitionReadUnits?: number };

/** `npm start` arguments that put the engine in front of DynamoDB Local, with the given settings (defaults: DynamoDB's). */
export function limitsRuntimeArgs(settings: LimitsRuntimeSettings = {}): string[] {
  const args = ['--dynamodb-limits'];
  if (settings.transactionHoldMs !== undefined) args.push('--transaction-hold-ms', String(settings.transactionHoldMs));
  if (settings.partitionWriteUnits !== undefined) args.push('--partition-write-units', String(settings.partitionWriteUnits));
  if (settings.itemWriteUnits !== undefined) args.push('--item-write-units', String(settings.itemWriteUnits));
  if (settings.partitionReadUnits !== undefined) args.push('--partition-read-units', String(settings.partitionReadUnits));
  return args;
}

export function limitsMeters(endpoint: string): LimitsMeters {
  return {
    endpoint,
    stats: async () => {
      const response = await fetch(`${endpoint}${STATS_PATH}`);
      if (!response.ok) throw new Error(`the limits engine answered ${response.status} for its stats`);
      return (await response.json()) as LimitsStats;
    },
    reset: async () => {
      const response = await fetch(`${endpoint}${RESET_PATH}`, { method: 'POST' });
      if (!response.ok) throw new Error(`the limits engine answered ${response.status} to a reset`);
    },
  };
}
