import {
  RESET_PATH,
  startLimitsProxy,
  STATS_PATH,
  type LimitsProxy,
  type LimitsProxyOptions,
} from '../../local/dynamodb-limits/limits-proxy';
import type { LimitsStats } from '../../local/dynamodb-limits/meters';
import { startRuntimeProcess, type RuntimeProcess } from './runtime-process';

/**
 * The limits engine's meters (docs/local-engine.md), read over HTTP (`startRuntimeOnEngine` below
 * starts a runtime behind an engine and hands back its meters). Every figure is what AWS would
 * charge: units per operation, table and index, per partition-key value and item, conflicts and
 * throttles.
 */
export type LimitsMeters = {
  endpoint: string;
  stats: () => Promise<LimitsStats>;
  /** Clears the meters and refills the budgets (between measurements). */
  reset: () => Promise<void>;
};

/** The meters of an engine at `endpoint`. */
export function limitsMetersAt(endpoint: string): LimitsMeters {
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

/**
 * The local runtime with every table call of its handlers through a limits engine this process
 * starts in front of `dynamodbEndpoint` (the runtime is pointed at the engine, so its table-call
 * counter, preloaded before the runtime reads its options, sees the engine too). The runtime's
 * own `--dynamodb-limits` cannot serve here: the preload binds the shared client first.
 */
export async function startRuntimeOnEngine(
  dynamodbEndpoint: string,
  engine: Omit<LimitsProxyOptions, 'upstream'> = {},
  runtimeArgs: string[] = [],
  env: NodeJS.ProcessEnv = {},
  nodeArgs: string[] = [],
): Promise<RuntimeProcess & { limits: LimitsMeters }> {
  const proxy = await startLimitsProxy({ upstream: dynamodbEndpoint, sharedDb: true, ...engine });
  try {
    return await startRuntimeBehind(proxy, runtimeArgs, env, nodeArgs);
  } catch (err) {
    await proxy.stop();
    throw err;
  }
}

/** The same, behind an engine already started (stopped with the runtime). */
export async function startRuntimeBehind(
  proxy: LimitsProxy,
  runtimeArgs: string[] = [],
  env: NodeJS.ProcessEnv = {},
  nodeArgs: string[] = [],
): Promise<RuntimeProcess & { limits: LimitsMeters }> {
  const runtime = await startRuntimeProcess(proxy.endpoint, nodeArgs, runtimeArgs, env);
  return {
    ...runtime,
    limits: limitsMetersAt(proxy.endpoint),
    async stop() {
      await runtime.stop();
      await proxy.stop();
    },
  };
}
