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
  /**
   * The runtime's output lines since the last call (at most the last `KEPT_LINES`), up to and
   * including the access line of the request `requestId`, which the runtime prints once it has
   * answered: every line its functions wrote for that request comes before it.
   */
  linesUntil: (requestId: string) => Promise<string[]>;
  stop: () => Promise<void>;
};

/** The output lines kept for `linesUntil` (a latency run prints thousands it never asks for). */
const KEPT_LINES = 2_000;
const ACCESS_LINE_TIMEOUT_MS = 10_000;

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
      '--import',
      'tsx',
      '--import',
      './bench/support/runtime-preload.ts',
      'bin/local.ts',
      '--port',
      String(port),
      '--state-dir',
      stateDir,
      '--dynamodb-endpoint',
      dynamodbEndpoint,
      '--rate-limit-per-key',
      '1000000',
      '--rate-limit-per-network',
      '0',
      '--stop-with-pid',
      String(process.pid),
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
  const output = outputLines(KEPT_LINES);
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    if (stderr.length < 20_000) stderr += chunk;
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const baseUrl = await new Promise<string>((done, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`the runtime was not ready within ${START_TIMEOUT_MS} ms:\n${stderr}`)),
      START_TIMEOUT_MS,
    );
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      // One access-log line per request follows (and, at --log-level info, the functions' lines): kept for
      // `linesUntil`.
      if (ready) return output.push(chunk);
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
    linesUntil: (requestId) => output.until(requestId, ACCESS_LINE_TIMEOUT_MS),
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

/** The runtime's output as lines, the last `kept` of them, handed out up to a line naming a request. */
function outputLines(kept: number) {
  let lines: string[] = [];
  let partial = '';
  let waiting: (() => void) | undefined;
  return {
    push(chunk: string): void {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      lines.push(...parts);
      if (lines.length > kept) lines = lines.slice(-kept);
      waiting?.();
    },
    async until(requestId: string, timeoutMs: number): Promise<string[]> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const at = lines.findIndex((line) => !line.startsWith('{') && line.includes(requestId));
        if (at !== -1) return lines.splice(0, at + 1);
        if (Date.now() > deadline)
          throw new Error(`the runtime printed no access line for request ${requestId} within ${timeoutMs} ms`);
        await new Promise<void>((done) => {
          const timer = setTimeout(done, 100);
          waiting = () => {
            clearTimeout(timer);
            done();
          };
        });
        waiting = undefined;
      }
    },
  };
}
