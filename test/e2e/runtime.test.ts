import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { GATEWAY_RESPONSES } from '../../lambdas/handlers/http/gateway-responses';
import { JAVA_HELP, localDynamoClient } from '../../local/dynamodb-local';
import type { LimitsStats } from '../../local/dynamodb-limits/meters';
import { isProcessAlive } from '../../local/runtime-file';
import {
  REPO_ROOT,
  runDynamoDbLocalEndpoint,
  startLocalRuntime,
  tsxNode,
  type LocalRuntimeHandle,
} from '../support/local-runtime';
import type { Api } from './support/api';
import { connect, E2E_TEST_TIMEOUT_MS } from './support/e2e';
import { revokeInTableOnly } from './support/seed';

/**
 * `npm start` itself: what it prints, where it keeps things, how it stops, and its options. Its
 * runtimes serve different tables, so the operator CLI runs as a process here (`adminProcess`).
 */
jest.setTimeout(E2E_TEST_TIMEOUT_MS);
const START_TIMEOUT_MS = 90_000;

/**
 * The value once it satisfies the check (output of another process arrives when it arrives), or the last one after 5 s.
 */
async function eventually<T>(read: () => T, ok: (value: T) => boolean): Promise<T> {
  for (let waited = 0; waited < 5000 && !ok(read()); waited += 50)
    await new Promise((resolve) => setTimeout(resolve, 50));
  return read();
}

const clients = new WeakMap<LocalRuntimeHandle, Promise<Api>>();
/** The runtime's client, checked against the OpenAPI document it serves; made on first use. */
function apiOf(runtime: LocalRuntimeHandle): Promise<Api> {
  if (!clients.has(runtime)) clients.set(runtime, connect(runtime));
  return clients.get(runtime)!;
}
const me = async (runtime: LocalRuntimeHandle, key: string) => (await apiOf(runtime)).get('/me', key);

/** A PATH without java, to prove what needs Java and what does not. */
let noJavaPath: string;
beforeAll(async () => {
  noJavaPath = await mkdtemp(join(tmpdir(), 'cct-no-java-'));
});
afterAll(() => rm(noJavaPath, { recursive: true, force: true }));

describe('without Java', () => {
  it('stops at once with exit code 1 and says how to get Java', async () => {
    const [command, args] = tsxNode('bin/local.ts', ['--in-memory', '--state-dir', noJavaPath]);

    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      const child = execFile(
        command,
        args,
        { cwd: REPO_ROOT, env: { ...process.env, PATH: noJavaPath } },
        (_error, stdout, stderr) => done({ code: child.exitCode, stdout, stderr }),
      );
    });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain(JAVA_HELP);
    expect(result.stdout).not.toContain('Ready:');
  });
});

describe('a runtime that keeps its data', () => {
  let stateDir: string;
  let runtime: LocalRuntimeHandle;
  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'cct-state-'));
    runtime = await startLocalRuntime({ inMemory: false, stateDir });
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await runtime?.stop();
    await rm(stateDir, { recursive: true, force: true });
  }, START_TIMEOUT_MS);

  it('prints the demo key once in a banner with a curl example, then exactly one Ready line', async () => {
    const printed = runtime.stdout();

    const response = await me(runtime, runtime.demoKey);

    expect(response.status).toBe(200);
    expect(printed).toContain(`curl -H "Authorization: Bearer ${runtime.demoKey}" ${runtime.baseUrl}/me`);
    expect(printed.match(/^Ready: .*$/gm)).toEqual([`Ready: ${runtime.baseUrl}`]);
  });

  it('records itself in runtime.json and keeps DynamoDB data under <state-dir>/data', async () => {
    const files = await readdir(join(stateDir, 'data'));

    expect(runtime.info).toMatchObject({
      apiBaseUrl: runtime.baseUrl,
      tableName: 'cct-local',
      inMemory: false,
      pid: runtime.child.pid,
    });
    expect(isProcessAlive(runtime.info.dynamodbPid!)).toBe(true);
    expect(files.some((file) => file.endsWith('.db'))).toBe(true);
  });

  it('logs one line per request, with the request id of its x-amzn-RequestId header, and nothing else by default', async () => {
    const before = runtime.stdout().length;
    const errorsBefore = runtime.stderr().length;

    const response = await me(runtime, runtime.demoKey);
    const requestId = response.headers.get('x-amzn-requestid');
    const requestLine = new RegExp(`^GET /api/v1/me 200 \\d+ms ${requestId}$`, 'm');
    const log = await eventually(
      () => runtime.stdout().slice(before),
      (text) => requestLine.test(text),
    );

    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(log).toMatch(requestLine);
    // Only access lines: no Powertools records, no "No application metrics to publish" on either stream.
    expect(
      log
        .trim()
        .split('\n')
        .filter((line) => !/^[A-Z]+ \S+ \d{3} \d+ms [0-9a-f-]{36}$/.test(line)),
    ).toEqual([]);
    expect(runtime.stderr().slice(errorsBefore)).toBe('');
    expect(log).not.toContain(runtime.demoKey);
    expect(log).not.toContain('Bearer');
  });

  it('reuses an authorizer decision for the cache TTL, as API Gateway does: a key revoked in the table alone works until it expires', async () => {
    const { key, apiKey } = await runtime.adminProcess('key', 'create', '--tenant', runtime.info.demoTenantId!);
    await me(runtime, key);

    // Not `key revoke`, which flushes the cache (test/e2e/auth.test.ts): the table alone.
    await revokeInTableOnly(runtime.info, apiKey.id);
    const response = await me(runtime, key);

    expect(response.status).toBe(200);
  });

  it('refuses a body over 10 MB with 413 before any handler sees it', async () => {
    const api = await apiOf(runtime);

    const response = await api.request('POST', '/contacts', {
      key: runtime.demoKey,
      headers: { 'Content-Type': 'application/json' },
      rawBody: 'x'.repeat(10 * 1024 * 1024 + 1),
    });

    expect(response.status).toBe(413);
    expect(response.body.code).toBe('payload_too_large');
  });

  it('stops on SIGTERM with exit code 0 and takes its DynamoDB Local with it; the CLI then says so', async () => {
    const code = await runtime.stop();
    const admin = await runtime.adminResult('tenant', 'create', '--name', 'Too late');

    expect(code).toBe(0);
    expect(isProcessAlive(runtime.info.dynamodbPid!)).toBe(false);
    expect(admin.code).toBe(1);
    expect(admin.stderr).toContain('is not running');
  });
});

describe('--dynamodb-endpoint', () => {
  /**
   * The test run's DynamoDB Local (this file's database there: test/support/e2e-env.ts); no runtime here started it.
   */
  let engine: { endpoint: string };
  let stateDir: string;
  /** Java is hidden from the runtimes: with an endpoint they must not need it. */
  const options = (...args: string[]) => ({
    inMemory: false,
    stateDir,
    env: { PATH: noJavaPath },
    args: ['--dynamodb-endpoint', engine.endpoint, ...args],
  });
  let first: LocalRuntimeHandle;
  beforeAll(async () => {
    engine = { endpoint: runDynamoDbLocalEndpoint() };
    stateDir = await mkdtemp(join(tmpdir(), 'cct-state-'));
    first = await startLocalRuntime(options('--authorizer-cache-ttl', '0'));
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await first?.stop();
    await rm(stateDir, { recursive: true, force: true });
  }, START_TIMEOUT_MS);

  it('serves from the DynamoDB Local at that endpoint and starts none', async () => {
    const client = localDynamoClient(engine.endpoint);
    const tables = await client.send(new ListTablesCommand({})).finally(() => client.destroy());

    const response = await me(first, first.demoKey);

    expect(response.status).toBe(200);
    expect(first.info).toMatchObject({ dynamodbEndpoint: engine.endpoint, dynamodbPid: null });
    expect(tables.TableNames).toContain('cct-local');
  });

  it('with --authorizer-cache-ttl 0 refuses a revoked key at once', async () => {
    const { key, apiKey } = await first.adminProcess('key', 'create', '--tenant', first.info.demoTenantId!);
    const beforeRevoke = await me(first, key);

    await first.adminProcess('key', 'revoke', apiKey.id);
    const afterRevoke = await me(first, key);

    expect(beforeRevoke.status).toBe(200);
    expect(afterRevoke.status).toBe(401);
  });

  describe('started again on the same data', () => {
    let again: LocalRuntimeHandle;
    /** The process this runtime watches (--stop-with-pid): its end is the last test's act. */
    let watched: ChildProcess;
    beforeAll(async () => {
      await first.stop();
      // Lives until the last test ends it (10 minutes at most, should this run be killed: never left behind for long).
      watched = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600_000)']);
      again = await startLocalRuntime(
        options(
          ...['--rate-limit-per-network', '3', '--rate-limit-per-key', '7', '--dynamodb-limits'],
          ...['--stop-with-pid', String(watched.pid)],
        ),
      );
    }, START_TIMEOUT_MS);
    afterAll(async () => {
      watched?.kill();
      await again?.stop();
    }, START_TIMEOUT_MS);

    it('creates no demo organization, says the key was printed on first start, and the first key still works', async () => {
      const response = await me(again, first.demoKey);

      expect(again.demoKey).toBe('');
      expect(again.stdout()).toContain('the demo API key was printed on first start');
      expect(response.status).toBe(200);
    });

    it('gives the handlers the per-key limit of --rate-limit-per-key', async () => {
      const response = await me(again, first.demoKey);

      expect(response.headers.get('RateLimit-Limit')).toBe('7');
      expect(response.body.rateLimit).toEqual({ requestsPerMinute: 7 });
    });

    it('with --dynamodb-limits, reaches the table through the limits engine, which meters what AWS would charge', async () => {
      const endpoint = again.info.dynamodbLimitsEndpoint;
      const stats = (await (await fetch(`${endpoint}/__limits/stats`)).json()) as LimitsStats;

      expect(again.stdout()).toContain(`DynamoDB limits engine: ${endpoint} (transaction hold 25 ms;`);
      expect(again.info.dynamodbEndpoint).toBe(engine.endpoint);
      // The start alone reads the table (the demo organization is looked up): through the engine.
      expect(stats.tables['cct-local'].readUnits).toBeGreaterThan(0);
    });

    it('limits requests per client network with --rate-limit-per-network, before any key is checked', async () => {
      const api = await apiOf(again);

      // Windows are whole minutes: a run that crosses into the next one needs up to twice the limit.
      let refused;
      for (let sent = 0; sent < 7 && !refused; sent += 1) {
        const response = await api.get('/openapi.json');
        if (response.status === 429) refused = response;
      }

      expect(refused?.headers.get('Retry-After')).toBe(GATEWAY_RESPONSES.throttled.headers['Retry-After']);
      expect(refused?.body).toEqual({
        ...GATEWAY_RESPONSES.throttled.body,
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
    });

    // Last in this runtime's tests: it ends the runtime.
    it('stops by itself, exit code 0, when the process named by --stop-with-pid ends', async () => {
      const exited = new Promise((resolve) => again.child.once('exit', resolve));

      watched.kill();

      expect(await exited).toBe(0);
    });
  });
});
