import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../local/dynamodb-local';
import { REPO_ROOT } from './bundles';
import type { CounterStats } from './table-call-counter';

/**
 * The local runtime (`bin/local.ts`, what `npm start` runs) as a child process on the benchmark's
 * DynamoDB Local, with the table-call counter preloaded. The per-key limiter stays on with a limit
 * no run reaches, so every request pays its one rate-limit update as in production; the per-network
 * limiter (a WAF rule in AWS, not a Lambda) is off.
 */
export type RuntimeProcess = {
  baseUrl: string;
  pid: number;
  stats: () => Promise<CounterStats>;
  reset: () => Promise<CounterStats>;
  stop: () => Promise<void>;
};

const READY_LINE = /Ready: (http:\/\/127\.0\.0\.1:\d+\/api\/v1)/;
const START_TIMEOUT_MS = 90_000;

/**
 * `nodeArgs`: extra Node options for the runtime (e.g. `--cpu-prof` when looking for where its time goes);
 * `runtimeArgs`: extra `npm start` options;
 * `env`: the runtime's environment on top of the bench's (e.g. a short LOOPBACK_STATUS_DELAY_MS, so
 * texts reach their final status within a measurement).
 */
export async function startRuntimeProcess(
  dynamodbEndpoint: string,
  nodeArgs: string[] = [],
  runtimeArgs: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<RuntimeProcess> {
  const [port, controlPort] = [await freePort(), await freePort()];
  const stateDir = await mkdtemp(join(tmpdir(), 'cct-bench-'));
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...nodeArgs,
      '--import', 'tsx',
      '--import', './bench/support/runtime-preload.ts',
      'bin/local.ts',
      '--port', String(port),
      '--state-dir', stateDir,
      '--dynamodb-endpoint', dynamodbEndpoint,
      '--rate-limit-per-key', '1000000',
      '--rate-limit-per-network', '0',
      '--stop-with-pid', String(process.pid),
      ...runtimeArgs,
    ],
    {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        BENCH_CONTROL_PORT: String(controlPort),
        // The counter imports lambdas/shared/aws before the runtime sets these; same values.
        TABLE_NAME: process.env.TABLE_NAME,
        DYNAMODB_ENDPOINT: dynamodbEndpoint,
        // The loopback carrier's status steps would write during later measurements: far away.
        LOOPBACK_STATUS_DELAY_MS: '3600000',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  let head = '';
  let ready = false;
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    if (stderr.length < 20_000) stderr += chunk;
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const baseUrl = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`the runtime was not ready within ${START_TIMEOUT_MS} ms:\n${stderr}`)), START_TIMEOUT_MS);
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      // One access-log line per request follows: read until ready, then only drain.
      if (ready) return;
      head += chunk;
      const line = READY_LINE.exec(head);
      if (line) {
        ready = true;
        clearTimeout(timer);
        done(line[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`the runtime exited with ${code} before it was ready:\n${head}\n${stderr}`));
    });
  });

  const control = async (method: 'GET' | 'POST', path: string): Promise<CounterStats> => {
    const response = await fetch(`http://127.0.0.1:${controlPort}${path}`, { method });
    return (await response.json()) as CounterStats;
  };
  return {
    baseUrl,
    pid: child.pid!,
    stats: () => control('GET', '/stats'),
    reset: () => control('POST', '/reset'),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}
