import { randomBytes, randomInt } from 'node:crypto';
import { USAGE_EXIT_CODE, UsageError } from '../usage-error';
import {
  callsValidationCheck,
  getCallCheck,
  listCallsCheck,
  meCheck,
  missingKeyCheck,
  openApiCheck,
  unknownKeyCheck,
  unknownPathCheck,
} from './api-checks';
import { createSmokeClient, mustBeError } from './client';
import { SmokeSkip, type Check, type CheckResult, type SmokeContext } from './check';
import {
  cleanupContact,
  conflictingContactCheck,
  contactValidationCheck,
  createContactCheck,
  deleteContactCheck,
  getContactCheck,
  listContactsCheck,
  searchContactsCheck,
  updateContactCheck,
} from './contact-checks';
import {
  counterpartValidationCheck,
  encodedCounterpartCheck,
  listThreadsCheck,
  malformedEscapeCheck,
  sendValidationCheck,
} from './message-checks';
import { parseSmokeOptions, SMOKE_USAGE, type SmokeOptions } from './options';
import { webhookTestCheck } from './webhook-check';

/**
 * `npm run smoke`: runs the checks in order (later ones use what earlier ones found), one line
 * each as it finishes, or one JSON document with --json. Exit 0 when none failed, 1 otherwise,
 * 2 when called wrongly. The key is never printed.
 */
export type SmokeIo = { stdout: (text: string) => void; stderr: (text: string) => void };

export type SmokeReport = {
  runId: string;
  baseUrl: string;
  ok: boolean;
  passed: number;
  failed: number;
  skipped: number;
  checks: CheckResult[];
};

const API_CHECKS: Check[] = [
  openApiCheck,
  missingKeyCheck,
  unknownKeyCheck,
  meCheck,
  listCallsCheck,
  getCallCheck,
  callsValidationCheck,
  listContactsCheck,
  contactValidationCheck,
  createContactCheck,
  getContactCheck,
  searchContactsCheck,
  updateContactCheck,
  conflictingContactCheck,
  deleteContactCheck,
  listThreadsCheck,
  encodedCounterpartCheck,
  counterpartValidationCheck,
  malformedEscapeCheck,
  sendValidationCheck,
  unknownPathCheck,
];

async function runCheck(check: Check, ctx: SmokeContext): Promise<CheckResult> {
  try {
    if (check.scope && check.probe && ctx.me && !ctx.me.permissions.includes(check.scope)) {
      const { method, path } = check.probe;
      const reply = await ctx.client.request(method, path, { json: method === 'GET' ? undefined : {} });
      mustBeError(`${method} ${path} without ${check.scope}`, reply, 403, {
        code: 'insufficient_scope',
        names: check.scope,
      });
      return {
        name: check.name,
        status: 'pass',
        detail: `the key lacks ${check.scope}: 403 insufficient_scope, as the contract says`,
      };
    }
    return { name: check.name, status: 'pass', detail: await check.run(ctx) };
  } catch (err) {
    const status = err instanceof SmokeSkip ? 'skip' : 'fail';
    return { name: check.name, status, detail: (err as Error).message };
  }
}

const LABEL = { pass: 'ok  ', fail: 'FAIL', skip: 'skip' } as const;
const line = (result: CheckResult) => `${LABEL[result.status]}  ${result.name}: ${result.detail}\n`;

export async function smoke(options: SmokeOptions, io: SmokeIo): Promise<SmokeReport> {
  const ctx: SmokeContext = {
    client: createSmokeClient(options.baseUrl, options.key, options.timeoutMs),
    runId: `smoke-${randomBytes(4).toString('hex')}`,
    markedNumber: `+999${String(randomInt(0, 1e12)).padStart(12, '0')}`,
  };
  const checks = [
    ...API_CHECKS,
    ...(options.webhookEndpoint ? [webhookTestCheck(options.webhookEndpoint, options.operator)] : []),
  ];
  const results: CheckResult[] = [];
  const record = (result: CheckResult) => {
    results.push(result);
    if (!options.json) io.stdout(line(result));
  };
  if (!options.json) io.stdout(`${ctx.runId} against ${options.baseUrl}\n`);
  try {
    for (const check of checks) record(await runCheck(check, ctx));
  } finally {
    const cleanup = await cleanupContact(ctx).then(
      (detail) => detail && ({ name: 'cleanup', status: 'pass', detail } as const),
      (err: Error) => ({ name: 'cleanup', status: 'fail', detail: err.message }) as const,
    );
    if (cleanup) record(cleanup);
  }
  const count = (status: CheckResult['status']) => results.filter((r) => r.status === status).length;
  return {
    runId: ctx.runId,
    baseUrl: options.baseUrl,
    ok: count('fail') === 0,
    passed: count('pass'),
    failed: count('fail'),
    skipped: count('skip'),
    checks: results,
  };
}

/** The command: parses argv, runs, prints; resolves with the exit code. */
export async function runSmoke(argv: string[], io: SmokeIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let options: SmokeOptions | undefined;
  try {
    options = parseSmokeOptions(argv, env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr(`${err.message}\n\n${SMOKE_USAGE}\n`);
    return USAGE_EXIT_CODE;
  }
  if (!options) {
    io.stdout(`${SMOKE_USAGE}\n`);
    return 0;
  }
  const report = await smoke(options, io);
  if (options.json) io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  else io.stdout(`${report.runId}: ${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped\n`);
  return report.ok ? 0 : 1;
}
