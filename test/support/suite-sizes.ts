/**
 * How many rounds, runs or sends a repeated proof makes. `npm test` makes few, since its time is budgeted (6 minutes
 * on 2 cores); `npm run bench -- --only models` runs the same files with many (bench/support/model-bench.ts), so the
 * sizes live in the bench and the suite proves every rule at least once per engine. A value comes from the named
 * environment variable, else the suite's default.
 */
export function suiteSize(variable: SuiteSizeVariable, suiteDefault: number): number {
  const raw = process.env[variable];
  if (raw === undefined || raw === '') return suiteDefault;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${variable} must be a positive integer, not ${raw}`);
  return value;
}

/** Every size a test reads, so the bench can name them all. */
export const SUITE_SIZE_VARIABLES = [
  'CONTACT_RACE_ROUNDS',
  'CONSENT_RACE_ROUNDS',
  'BATCH_RACE_ROUNDS',
  'BATCH_OVERLAP_ROUNDS',
  'WEBHOOK_CLAIM_ROUNDS',
  'SPEND_MODEL_RUNS',
  'TEXTING_FAULTS_SENDS',
  'TEXTING_MODEL_RUNS',
] as const;
export type SuiteSizeVariable = (typeof SUITE_SIZE_VARIABLES)[number];
