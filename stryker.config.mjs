/* global process */
// `npm run test:mutation` (test/mutation/run.ts starts the engines, then Stryker with this config):
// mutants of the money and consent paths, each run against the tests that cover it.
import targets from './test/mutation/targets.js';

/** Where the reports go: run.ts names one per mutated file. */
const REPORT = process.env.MUTATION_REPORT ?? 'reports/mutation/mutation';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'jest',
  jest: { projectType: 'custom', configFile: 'test/mutation/jest.config.js', enableFindRelatedTests: false },
  // test/mutation/run.ts runs one file at a time with its tests (test/mutation/targets.js).
  mutate: (process.env.MUTATE ?? Object.keys(targets.TARGETS).join(',')).split(','),
  coverageAnalysis: 'perTest',
  ignoreStatic: true,
  // The machine is shared: one or two test processes, each with its own DynamoDB Local tables.
  concurrency: Number(process.env.STRYKER_CONCURRENCY ?? 1),
  timeoutMS: 60_000,
  dryRunTimeoutMinutes: 20,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: `${REPORT}.html` },
  jsonReporter: { fileName: `${REPORT}.json` },
  thresholds: { high: 90, low: 85, break: 85 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  ignorePatterns: ['cdk.out', 'bench/out', '.local', 'coverage', 'reports', '.scratch'],
};
