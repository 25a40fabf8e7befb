import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort, SHORT_RUN_JVM_OPTIONS } from '../../local/dynamodb-local';
import type { RuntimeInfo } from '../../local/runtime-file';
import { runAdminInProcess, type AdminResult } from './in-process-admin';

/**
 * Starts the real local runtime (`bin/local.ts`) as a child process for end-to-end tests, and
 * runs the operator CLI against it, each exactly as an integrator would.
 */
export type LocalRuntimeOptions = {
  /** Extra arguments for bin/local.ts. */
  args?: string[];
  /**
   * Default true: data that lives no longer than the test run. On the run's DynamoDB Local when
   * the jest project started one (`--dynamodb-endpoint`, this test file's own database there:
   * test/support/e2e-env.ts), which spares each file a JVM start; otherwise `--in-memory`. False:
   * the runtime starts its own DynamoDB Local, as `npm start` does (unless `args` name an endpoint).
   */
  inMemory?: boolean;
  /** Reuse a state directory (it is then not deleted on stop); default a fresh temporary one. */
  stateDir?: string;
  /** Environment of the runtime, on top of this process's. */
  env?: NodeJS.ProcessEnv;
};

export type { AdminResult };

export type LocalRuntimeHandle = {
  baseUrl: string;
  /**
   * The demo key printed on this start; '' when the runtime reused kept data (it prints the key only on first start).
   */
  demoKey: string;
  stateDir: string;
  /** runtime.json as the runtime wrote it. */
  info: RuntimeInfo;
  /**
   * The operator CLI against this runtime, run in this process (test/support/in-process-admin.ts),
   * for the calls that prepare or observe a test; resolves with its parsed JSON, rejects on a
   * non-zero exit. `any` because each command prints its own document and each test reads what it asked for.
   */
  admin: (...args: string[]) => Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /**
   * The same as `admin`, as a process of its own (`node bin/admin.ts`): for tests whose subject is the CLI's output.
   */
  adminProcess: (...args: string[]) => Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** The operator CLI as a process, without interpretation, for tests of its failures (exit code, stderr). */
  adminResult: (...args: string[]) => Promise<AdminResult>;
  /** Everything the runtime printed so far. */
  stdout: () => string;
  stderr: () => string;
  child: ChildProcess;
  /** SIGTERM, then waits for the exit (SIGKILL after 15 s); resolves with the exit code. */
  stop: () => Promise<number | null>;
};

export const REPO_ROOT = resolve(__dirname, '..', '..');
const READY_LINE = /^Ready: (http:\/\/127\.0\.0\.1:\d+\/api\/v1)$/m;
const API_KEY = /cct_[A-Za-z0-9_-]{43}/;
const START_TIMEOUT_MS = 180_000;

/** `node --import tsx <script>`: the same as the npm scripts, without npm in between. */
export const tsxNode = (script: string, args: string[]) =>
  [process.execPath, ['--import', 'tsx', join(REPO_ROOT, script), ...args]] as const;

/**
 * DynamoDB Local of this test run, when the jest project started one (test/support/dynamodb-global-setup.ts);
 * without `-sharedDb`, so each test file reaches its own database there through its own access key.
 */
const runDynamoDbLocal = (): string | undefined => process.env.DYNAMODB_LOCAL_ENDPOINT;

/** The run's DynamoDB Local, for a test that points a runtime at it with `--dynamodb-endpoint` itself. */
export function runDynamoDbLocalEndpoint(): string {
  const endpoint = runDynamoDbLocal();
  if (!endpoint)
    throw new Error('DYNAMODB_LOCAL_ENDPOINT is not set: run end-to-end tests through the jest e2e project');
  return endpoint;
}

function runAdmin(stateDir: string, args: string[]): Promise<AdminResult> {
  const [command, argv] = tsxNode('bin/admin.ts', ['--state-dir', stateDir, ...args]);
  return new Promise((done) => {
    // This test file's environment (Jest gives each file a copy), with its access key to the run's DynamoDB Local.
    execFile(command, argv, { cwd: REPO_ROOT, env: process.env }, (error, stdout, stderr) => {
      const code = (error as { code?: unknown } | null)?.code;
      done({ code: error ? (typeof code === 'number' ? code : 1) : 0, stdout, stderr });
    });
  });
}

function waitForReady(child: ChildProcess, output: { stdout: string; stderr: string }): Promise<string> {
  return new Promise((done, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`The runtime was not ready within ${START_TIMEOUT_MS} ms:\n${output.stderr}`)),
      START_TIMEOUT_MS,
    );
    const onData = () => {
      const ready = READY_LINE.exec(output.stdout);
      if (!ready) return;
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      done(ready[1]);
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`The runtime exited with code ${code} before it was ready:\n${output.stdout}\n${output.stderr}`));
    });
  });
}

export async function startLocalRuntime(options: LocalRuntimeOptions = {}): Promise<LocalRuntimeHandle> {
  const ownsStateDir = options.stateDir === undefined;
  const stateDir = options.stateDir ?? (await mkdtemp(join(tmpdir(), 'cct-e2e-')));
  const port = await freePort();
  const shared = runDynamoDbLocal();
  const args = [
    '--port',
    String(port),
    '--state-dir',
    stateDir,
    ...(options.inMemory === false ? [] : shared ? ['--dynamodb-endpoint', shared] : ['--in-memory']),
    // Jest never runs a test file's process 'exit' handlers, so the runtime watches this process
    // itself: a test run that is killed cannot leave runtimes and their JVMs behind.
    '--stop-with-pid',
    String(process.pid),
    ...(options.args ?? []),
  ];
  const [command, argv] = tsxNode('bin/local.ts', args);
  const child = spawn(command, argv, {
    cwd: REPO_ROOT,
    // A runtime that starts its own DynamoDB Local (`inMemory: false`) gives it the suite's short-run JVM options.
    env: { JDK_JAVA_OPTIONS: SHORT_RUN_JVM_OPTIONS, ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const output = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output.stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output.stderr += chunk));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    if (ownsStateDir) await rm(stateDir, { recursive: true, force: true });
    return child.exitCode;
  };

  let baseUrl: string;
  try {
    baseUrl = await waitForReady(child, output);
  } catch (err) {
    await stop();
    throw err;
  }
  const info = JSON.parse(await readFile(join(stateDir, 'runtime.json'), 'utf8')) as RuntimeInfo;
  const parsed = (adminArgs: string[]) => (result: AdminResult) => {
    if (result.code !== 0) throw new Error(`admin ${adminArgs.join(' ')} exited with ${result.code}: ${result.stderr}`);
    return JSON.parse(result.stdout);
  };
  return {
    baseUrl,
    demoKey: API_KEY.exec(output.stdout.slice(0, output.stdout.search(READY_LINE)))?.[0] ?? '',
    stateDir,
    info,
    admin: (...adminArgs) => runAdminInProcess(stateDir, info, adminArgs).then(parsed(adminArgs)),
    adminProcess: (...adminArgs) => runAdmin(stateDir, adminArgs).then(parsed(adminArgs)),
    adminResult: (...adminArgs) => runAdmin(stateDir, adminArgs),
    stdout: () => output.stdout,
    stderr: () => output.stderr,
    child,
    stop,
  };
}
