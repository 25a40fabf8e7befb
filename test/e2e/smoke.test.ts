import { execFile } from 'node:child_process';
import { verifyDelivery } from '../../clients/typescript/src/webhooks';
import type { SmokeReport } from '../../local/smoke/run';
import { freePort } from '../../local/dynamodb-local';
import { REPO_ROOT, tsxNode } from '../support/local-runtime';
import { useLocalRuntime } from './support/e2e';
import { startReceiver, type Receiver } from './support/receiver';

/**
 * `npm run smoke` against the local runtime, as an operator runs it against a deployment, so the
 * smoke test cannot rot: every check must pass here. A webhook receiver on 127.0.0.1 takes the
 * signed webhook.test event of --webhook-endpoint.
 */
const e2e = useLocalRuntime({ args: ['--allow-http-webhooks'] });

/**
 * Checks of AWS behaviour the local runtime does not reproduce (none today). The test fails as soon
 * as one listed here passes, so the list only ever holds known gaps.
 */
const AWAITING_LOCAL_FIDELITY: string[] = [];

type Run = { code: number; stdout: string; stderr: string };

/** A run is about 25 requests in a row from a fresh process; on two busy cores that takes a while. */
const SMOKE_TEST_TIMEOUT_MS = 150_000;

function runSmoke(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const [command, argv] = tsxNode('bin/smoke.ts', args);
  return new Promise((done) => {
    execFile(
      command,
      argv,
      { cwd: REPO_ROOT, env: { ...process.env, ...env }, timeout: 120_000 },
      (error, stdout, stderr) => {
        const code = (error as { code?: unknown } | null)?.code;
        done({ code: error ? (typeof code === 'number' ? code : 1) : 0, stdout, stderr });
      },
    );
  });
}

/**
 * The same run in this process (`runSmoke`, which bin/smoke.ts hands its arguments to and whose code it exits with),
 * for the runs whose subject is the answer rather than the process: the first two tests below prove the process.
 */
async function runSmokeInProcess(args: string[]): Promise<Run> {
  const { runSmoke: run } = await import('../../local/smoke/run');
  const output = { stdout: '', stderr: '' };
  const code = await run(args, {
    stdout: (text) => (output.stdout += text),
    stderr: (text) => (output.stderr += text),
  });
  return { code, ...output };
}

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver?.close());

const failedChecks = (report: SmokeReport) =>
  report.checks.filter((check) => check.status !== 'pass').map((check) => check.name);

describe('npm run smoke against the local runtime', () => {
  it(
    'passes every check with the demo key, sends a verifiable webhook.test and leaves no contact behind',
    async () => {
      // Prepare
      const tenant = e2e.demoTenantId;
      await e2e.runtime.admin('tenant', 'update', tenant, '--approve-host', '127.0.0.1');
      const { endpoint, secret } = await e2e.runtime.admin(
        'webhook',
        'add',
        '--tenant',
        tenant,
        '--url',
        receiver.url('/smoke'),
      );

      // Act
      const run = await runSmoke(
        [
          '--url',
          e2e.runtime.baseUrl,
          '--json',
          '--webhook-endpoint',
          endpoint.url,
          '--state-dir',
          e2e.runtime.stateDir,
        ],
        { SMOKE_API_KEY: e2e.runtime.demoKey },
      );

      // Assess
      const report = JSON.parse(run.stdout) as SmokeReport;
      expect({ failed: failedChecks(report), stderr: run.stderr }).toEqual({
        failed: AWAITING_LOCAL_FIDELITY,
        stderr: '',
      });
      expect(run.code).toBe(AWAITING_LOCAL_FIDELITY.length > 0 ? 1 : 0);
      expect(report.checks.map((check) => check.name)).toEqual(
        expect.arrayContaining([
          'GET /messages/{counterpart}, %2B-encoded and literal +',
          `webhook.test to ${endpoint.url}`,
        ]),
      );
      const [delivery] = receiver.received().filter((request) => request.path === '/smoke');
      expect(delivery.headers['x-service-event']).toBe('webhook.test');
      expect(verifyDelivery(delivery.headers, delivery.body, secret)).toEqual({ ok: true });
      const left = await e2e.api.get(`/contacts?search=${report.runId}`, e2e.runtime.demoKey);
      expect(left.body.contacts).toEqual([]);
      expect(run.stdout).not.toContain(e2e.runtime.demoKey);
    },
    SMOKE_TEST_TIMEOUT_MS,
  );

  it(
    'expects 403 insufficient_scope where the key lacks a scope, writes nothing, and prints a line per check',
    async () => {
      // Prepare
      const { key } = await e2e.runtime.admin(
        'key',
        'create',
        '--tenant',
        e2e.demoTenantId,
        '--scopes',
        'calls.view.team,sms.view',
      );
      const before = await e2e.api.get('/contacts?limit=100', e2e.runtime.demoKey);

      // Act
      const run = await runSmoke(['--url', `${e2e.runtime.baseUrl}/`, '--key', key]);

      // Assess
      const lines = run.stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^smoke-[0-9a-f]{8} against http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);
      expect(lines).toContain(
        'ok    POST /contacts creates the marked contact: the key lacks contacts.manage: 403 insufficient_scope, as ' +
          'the contract says',
      );
      expect(lines).toContain(
        'ok    POST /messages refuses a bad body (nothing sent): the key lacks sms.send: 403 insufficient_scope, as ' +
          'the contract says',
      );
      expect(lines.filter((line) => line.startsWith('FAIL')).map((line) => line.slice(6).split(':')[0])).toEqual(
        AWAITING_LOCAL_FIDELITY,
      );
      expect(lines.at(-1)).toMatch(
        new RegExp(`^smoke-[0-9a-f]{8}: \\d+ passed, ${AWAITING_LOCAL_FIDELITY.length} failed, 0 skipped$`),
      );
      const after = await e2e.api.get('/contacts?limit=100', e2e.runtime.demoKey);
      expect(after.body.contacts).toEqual(before.body.contacts);
    },
    SMOKE_TEST_TIMEOUT_MS,
  );

  it(
    'fails, exit 1, when the deployment does not answer, and exit 2 when called wrongly',
    async () => {
      // Prepare
      const closedPort = await freePort();

      // Act
      const unreachable = await runSmokeInProcess([
        '--url',
        `http://127.0.0.1:${closedPort}/api/v1`,
        '--key',
        e2e.runtime.demoKey,
        '--timeout-ms',
        '2000',
      ]);
      const wrongly = await runSmokeInProcess(['--url', 'http://127.0.0.1:1/', '--key', 'k']);

      // Assess
      expect(unreachable.code).toBe(1);
      expect(unreachable.stdout).toMatch(
        /^FAIL {2}GET \/openapi\.json without a key: GET \/openapi\.json: no answer \(ECONNREFUSED\)$/m,
      );
      expect(unreachable.stdout).toMatch(/: 0 passed, \d+ failed, \d+ skipped\n$/);
      expect(wrongly.code).toBe(2);
      expect(wrongly.stderr).toMatch(/^--url must end in \/api\/v1/);
    },
    SMOKE_TEST_TIMEOUT_MS,
  );
});
