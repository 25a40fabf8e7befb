import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import type { SuiteSizeVariable } from '../../test/support/suite-sizes';

/**
 * Section 14, the model and race tests at the bench's sizes: the same test files `npm test` runs, through Jest with
 * their sizes raised (test/support/suite-sizes.ts), so the suite stays within its time and the bench explores many
 * more interleavings and command sequences. Each file runs on the engines the suite runs it on (jest.config.js); a
 * model test prints its seed, which this section keeps, so a failure is replayed with that seed.
 */
export type ModelBenchSizes = Record<SuiteSizeVariable, number>;

export const BENCH_SIZES: ModelBenchSizes = {
  CONTACT_RACE_ROUNDS: 25,
  CONSENT_RACE_ROUNDS: 20,
  BATCH_RACE_ROUNDS: 10,
  BATCH_OVERLAP_ROUNDS: 16,
  WEBHOOK_CLAIM_ROUNDS: 40,
  SPEND_MODEL_RUNS: 40,
  TEXTING_FAULTS_SENDS: 520,
  TEXTING_MODEL_RUNS: 30,
};

const FILES = [
  'test/integration/contacts-races.test.ts',
  'test/integration/consent-races.test.ts',
  'test/integration/contacts-batch-limits.test.ts',
  'test/integration/contacts-sync.test.ts',
  'test/integration/webhook-attempt-claims.test.ts',
  'test/integration/spend-model.test.ts',
  'test/integration/texting-faults.test.ts',
  'test/integration/texting-law-model.test.ts',
];

export type ModelBenchResult = {
  sizes: ModelBenchSizes;
  files: { file: string; passed: boolean; seconds: number; seeds: string[]; tail: string }[];
};

const REPO_ROOT = resolve(__dirname, '..', '..');

function runFile(file: string, sizes: ModelBenchSizes): Promise<ModelBenchResult['files'][number]> {
  const started = performance.now();
  const jest = join(REPO_ROOT, 'node_modules', 'jest', 'bin', 'jest.js');
  const env = { ...process.env, ...Object.fromEntries(Object.entries(sizes).map(([k, v]) => [k, String(v)])) };
  return new Promise((done) => {
    const child = spawn(process.execPath, [jest, '--runInBand', file], { cwd: REPO_ROOT, env });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.once('close', (code) =>
      done({
        file,
        passed: code === 0,
        seconds: Math.round((performance.now() - started) / 100) / 10,
        seeds: [...output.matchAll(/[A-Z_]+_SEED=\d+/g)].map((match) => match[0]),
        tail: code === 0 ? '' : output.slice(-4000),
      }),
    );
  });
}

/** Runs the files one after the other (each file's engines and DynamoDB Local are its own Jest run's). */
export async function measureModels(
  sizes: ModelBenchSizes = BENCH_SIZES,
  log: (line: string) => void = console.log,
): Promise<ModelBenchResult> {
  const files: ModelBenchResult['files'] = [];
  for (const file of FILES) {
    const result = await runFile(file, sizes);
    log(`  ${result.passed ? 'passed' : 'FAILED'} ${file} in ${result.seconds} s ${result.seeds.join(' ')}`);
    if (!result.passed) log(result.tail);
    files.push(result);
  }
  return { sizes, files };
}
