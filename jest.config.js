// Four projects so each kind of test runs with only what it needs: unit tests never touch a network,
// integration tests share one DynamoDB Local started by globalSetup (and, for the files listed below,
// the limits engine in front of it: a fifth project), infra tests synthesize the stack, end-to-end
// tests start the local runtime and speak HTTP to it (on the same DynamoDB Local, a database per file).
const swc = [
  '@swc/jest',
  { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } },
];

const base = {
  // middy ships ESM only; let swc turn it into CommonJS like our own sources.
  transform: { '^.+\\.(t|j|mj)s$': swc },
  transformIgnorePatterns: ['/node_modules/(?!@middy/)'],
  moduleNameMapper: { '^@middy/([^/]+)$': '<rootDir>/node_modules/@middy/$1/index.js' },
  testEnvironment: 'node',
  setupFiles: ['<rootDir>/test/support/quiet-sdk.ts'],
};

// Integration test files on the limits-faithful engine (docs/local-engine.md) rather than DynamoDB
// Local alone, and files on both (run twice, once per engine). Paths from the repository root.
// What must pass on AWS is proven on the engine with AWS's conflicts and throttles: the texting,
// calls and contacts files (DYNAMODB_ENGINE=limits runs every file there); the races of numbers and
// of consent on both, since each engine interleaves differently.
const ON_LIMITS_ENGINE = [
  'test/integration/messages.test.ts',
  'test/integration/messages-idempotency.test.ts',
  'test/integration/spend-model.test.ts',
  'test/integration/texting-law-model.test.ts',
  'test/integration/spend-changes.test.ts',
  'test/integration/texting-faults.test.ts',
  'test/integration/send-path-throttles.test.ts',
  'test/integration/carrier-texts.test.ts',
  'test/integration/calls.test.ts',
  'test/integration/carrier-voice.test.ts',
  'test/integration/contacts.test.ts',
  'test/integration/contacts-batch-limits.test.ts',
  'test/integration/engine-refusals.test.ts',
];
const ON_BOTH_ENGINES = [
  'test/integration/contacts-races.test.ts',
  'test/integration/consent-races.test.ts',
  'test/integration/contacts-batch-delete.test.ts',
];

// Tests that wait on DynamoDB Local, the engine, runtimes and HTTP get a minute before Jest calls
// them hung, not Jest's 5 s (test/support/slow-test-timeout.ts; Jest reads a timeout from its
// global config only, so a project sets it in a setup file).
const waitsOnServices = { setupFilesAfterEnv: ['<rootDir>/test/support/slow-test-timeout.ts'] };

const integration = {
  ...base,
  ...waitsOnServices,
  globalSetup: '<rootDir>/test/support/dynamodb-global-setup.ts',
  globalTeardown: '<rootDir>/test/support/dynamodb-global-teardown.ts',
  setupFiles: [...base.setupFiles, '<rootDir>/test/support/integration-env.ts'],
};
const onLimitsEngine = [...ON_LIMITS_ENGINE, ...ON_BOTH_ENGINES];

module.exports = {
  // Two workers on the two cores: the tests wait on DynamoDB Local, runtimes and HTTP as much as they compute.
  maxWorkers: 2,
  // Files that wait on engines and runtimes start first, unit files fill the gaps (a fresh clone has no timings).
  testSequencer: '<rootDir>/test/support/services-first-sequencer.cjs',
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...integration,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', ...ON_LIMITS_ENGINE.map((file) => `<rootDir>/${file}$`)],
    },
    {
      ...integration,
      displayName: 'integration-limits',
      testMatch: onLimitsEngine.map((file) => `<rootDir>/${file}`),
      setupFiles: [...integration.setupFiles, '<rootDir>/test/support/limits-engine-setup.ts'],
    },
    {
      ...base,
      displayName: 'infra',
      testMatch: ['<rootDir>/test/infra/**/*.test.ts'],
      // A directory the infra files share the templates they synthesize through (test/infra/support.ts).
      globalSetup: '<rootDir>/test/infra/template-cache-setup.ts',
      globalTeardown: '<rootDir>/test/infra/template-cache-teardown.ts',
    },
    {
      ...base,
      displayName: 'e2e',
      ...waitsOnServices,
      testMatch: ['<rootDir>/test/e2e/**/*.test.ts'],
      // The same DynamoDB Local as the integration files: each e2e file's runtimes on a database of its own there.
      globalSetup: integration.globalSetup,
      globalTeardown: integration.globalTeardown,
      setupFiles: [...base.setupFiles, '<rootDir>/test/support/e2e-env.ts'],
    },
  ],
};
