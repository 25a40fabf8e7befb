/* global process */
// `npm run test:mutation` (test/mutation/run.ts starts the engines, then Stryker with this config):
// mutants of the money and consent paths, each run against the tests that cover it.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'jest',
  jest: { projectType: 'custom', configFile: 'test/mutation/jest.config.js', enableFindRelatedTests: false },
  mutate: (
    process.env.MUTATE ??
    [
      'lambdas/contexts/texting/spend.ts',
      'lambdas/contexts/texting/spend-lease.ts',
      'lambdas/contexts/texting/spend-plan.ts',
      'lambdas/contexts/texting/sending.ts',
      'lambdas/contexts/texting/delivery-status.ts',
      'lambdas/contexts/texting/settlement.ts',
      'lambdas/contexts/consent/ledger.ts',
    ].join(',')
  ).split(','),
  coverageAnalysis: 'perTest',
  ignoreStatic: true,
  // The machine is shared: one or two test processes, each with its own DynamoDB Local tables.
  concurrency: Number(process.env.STRYKER_CONCURRENCY ?? 1),
  timeoutMS: 60_000,
  dryRunTimeoutMinutes: 20,
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 85, break: 85 },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  ignorePatterns: ['cdk.out', 'bench/out', '.local', 'coverage', 'reports', '.scratch'],
};
