import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { startDynamoDbLocal } from '../../local/dynamodb-local';
import { startLimitsProxy } from '../../local/dynamodb-limits/limits-proxy';
import { TARGETS } from './targets';

/**
 * `npm run test:mutation`: starts DynamoDB Local and the limits engine once, then Stryker (stryker.config.mjs) once
 * per mutated file with that file's tests (./targets.js), whose test processes inherit the endpoints; then prints
 * the score per file and overall. `MUTATE=<file>,<file>` narrows the run, `STRYKER_CONCURRENCY` sets its test
 * processes (1 by default: the machine is shared). Exits non-zero when the overall score is under the config's
 * `break` threshold, or a file could not be scored.
 */
async function main(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const files = process.env.MUTATE ? process.env.MUTATE.split(',') : Object.keys(TARGETS);
  const unknown = files.filter((file) => !TARGETS[file]);
  if (unknown.length > 0) throw new Error(`No tests listed in test/mutation/targets.js for ${unknown.join(', ')}`);
  const configFile = '../../stryker.config.mjs';
  const { thresholds } = ((await import(configFile)) as { default: StrykerThresholds }).default;
  const dynamoDbLocal = await startDynamoDbLocal({ sharedDb: false });
  const limits = await startLimitsProxy({ upstream: dynamoDbLocal.endpoint, sharedDb: false });
  process.env.DYNAMODB_ENDPOINT = dynamoDbLocal.endpoint;
  process.env.DYNAMODB_LOCAL_ENDPOINT = dynamoDbLocal.endpoint;
  process.env.DYNAMODB_LIMITS_ENDPOINT = limits.endpoint;
  const scores: FileScore[] = [];
  try {
    for (const file of files) scores.push(await mutateFile(file));
  } finally {
    await limits.stop();
    await dynamoDbLocal.stop();
  }
  process.exitCode = summarize(scores, thresholds.break) ? 0 : 1;
}

type StrykerThresholds = { thresholds: { break: number } };
type Counts = { killed: number; timeout: number; survived: number; noCoverage: number; errors: number };
type FileScore = Counts & { file: string; scored: boolean; seconds: number };

/** One Stryker run: `file`'s mutants against its tests, its reports under reports/mutation/<name>. */
async function mutateFile(file: string): Promise<FileScore> {
  const report = `reports/mutation/${basename(file, '.ts')}`;
  const startedAt = Date.now();
  mkdirSync('reports/mutation', { recursive: true });
  const env = {
    ...process.env,
    MUTATE: file,
    MUTATION_TESTS: TARGETS[file]!.join(','),
    MUTATION_REPORT: report,
  };
  // Stryker's own CLI, in a process of its own: it is ESM, which tsx would load as CommonJS. Its exit code is not
  // the verdict (it breaks per file); the overall score is.
  const stryker = spawn(process.execPath, ['node_modules/@stryker-mutator/core/bin/stryker.js', 'run'], {
    stdio: 'inherit',
    env,
  });
  await new Promise<void>((resolve) => stryker.on('exit', () => resolve()));
  const seconds = Math.round((Date.now() - startedAt) / 1000);
  const json = `${report}.json`;
  if (!existsSync(json) || statSync(json).mtimeMs < startedAt) return { file, scored: false, seconds, ...none() };
  return { file, scored: true, seconds, ...countsOf(JSON.parse(readFileSync(json, 'utf8')) as Report, file) };
}

type Report = { files: Record<string, { mutants: { status: string }[] }> };

const none = (): Counts => ({ killed: 0, timeout: 0, survived: 0, noCoverage: 0, errors: 0 });

function countsOf(report: Report, file: string): Counts {
  const counts = none();
  for (const { status } of report.files[file]?.mutants ?? []) {
    if (status === 'Killed') counts.killed += 1;
    else if (status === 'Timeout') counts.timeout += 1;
    else if (status === 'Survived') counts.survived += 1;
    else if (status === 'NoCoverage') counts.noCoverage += 1;
    else if (status === 'CompileError' || status === 'RuntimeError') counts.errors += 1;
  }
  return counts;
}

/** Stryker's mutation score: detected (killed or timed out) over detected and undetected (survived, no coverage). */
const scoreOf = (c: Counts): number => {
  const detected = c.killed + c.timeout;
  const valid = detected + c.survived + c.noCoverage;
  return valid === 0 ? 100 : (100 * detected) / valid;
};

/** Prints the table (and writes reports/mutation/summary.json); true when every file was scored and the total holds. */
function summarize(scores: FileScore[], breakAt: number): boolean {
  const total = scores.reduce<Counts>(
    (sum, s) => ({
      killed: sum.killed + s.killed,
      timeout: sum.timeout + s.timeout,
      survived: sum.survived + s.survived,
      noCoverage: sum.noCoverage + s.noCoverage,
      errors: sum.errors + s.errors,
    }),
    none(),
  );
  const row = (name: string, c: Counts, note: string) =>
    `${name.padEnd(48)} ${scoreOf(c).toFixed(2).padStart(7)} ${[c.killed, c.timeout, c.survived, c.noCoverage]
      .map((n) => String(n).padStart(8))
      .join(' ')}  ${note}`;
  const lines = [
    `${'file'.padEnd(48)} ${'score %'.padStart(7)} ${['killed', 'timeout', 'survived', 'no cov.'].map((h) => h.padStart(8)).join(' ')}`,
    ...scores.map((s) => row(s.file, s, s.scored ? `${s.seconds} s` : 'NOT SCORED (Stryker did not finish)')),
    row('all files', total, ''),
  ];
  console.log(`\nMutation score per file and overall (break at ${breakAt} %):\n${lines.join('\n')}`);
  writeFileSync('reports/mutation/summary.json', JSON.stringify({ breakAt, files: scores, total }, null, 2));
  const holds = scores.every((s) => s.scored) && scoreOf(total) >= breakAt;
  if (!holds) console.error(`Mutation score under ${breakAt} %, or a file not scored: failing.`);
  return holds;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
