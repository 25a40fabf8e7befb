import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * `<state-dir>/runtime.json`: how the operator CLI (and the test harness) finds the running local
 * runtime. Written when the runtime is ready and left in place when it stops, so the next start
 * knows the demo organization; `pid` tells whether it is still running.
 */
export type RuntimeInfo = {
  pid: number;
  apiBaseUrl: string;
  dynamodbEndpoint: string;
  /**
   * With --dynamodb-limits, the limits engine the handlers use (its meters at /__limits/stats);
   * the operator CLI keeps writing to DynamoDB Local directly. Absent in files of older runtimes.
   */
  dynamodbLimitsEndpoint?: string | null;
  tableName: string;
  inMemory: boolean;
  /** The JVM of the DynamoDB Local this runtime started; null when it uses --dynamodb-endpoint. */
  dynamodbPid: number | null;
  /** The organization created with the demo key; null when the data was there before and it was not found. */
  demoTenantId: string | null;
  startedAt: string;
  /** The root the carrier's callbacks are signed over (`--public-url`); `simulate` signs with it too. */
  publicBaseUrl: string;
  /**
   * Whether callbacks are checked with the documented local default token, which the CLI then
   * uses too. The token itself is never written here: with `custom`, give the CLI the same token
   * (`--twilio-auth-token` or TWILIO_AUTH_TOKEN).
   */
  twilioAuthToken: 'default' | 'custom';
  /** `--allow-http-webhooks`: `webhook add` then accepts http and loopback URLs. */
  allowHttpWebhooks: boolean;
  /** `--webhook-backoff-ms`: the first retry wait. */
  webhookBackoffMs: number;
  /**
   * Where the operator CLI flushes the runtime's authorizer cache (local/runtime-control.ts), and
   * the token it must show; absent in files written before the runtime had one.
   */
  control?: { url: string; token: string };
};

export const RUNTIME_FILE = 'runtime.json';

/** The table the local runtime serves (on its own DynamoDB Local or the one given by --dynamodb-endpoint). */
export const LOCAL_TABLE_NAME = 'cct-local';

export const runtimeFilePath = (stateDir: string): string => join(stateDir, RUNTIME_FILE);

/** The recorded runtime, or undefined when the state directory has none. */
export async function readRuntimeInfo(stateDir: string): Promise<RuntimeInfo | undefined> {
  let text: string;
  try {
    text = await readFile(runtimeFilePath(stateDir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return JSON.parse(text) as RuntimeInfo;
}

/** Written to a temporary file and renamed, so a reader never sees half a file. */
export async function writeRuntimeInfo(stateDir: string, info: RuntimeInfo): Promise<void> {
  const path = runtimeFilePath(stateDir);
  await writeFile(`${path}.tmp`, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
  await rename(`${path}.tmp`, path);
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
