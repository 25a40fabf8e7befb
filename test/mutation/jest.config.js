// The jest config Stryker runs (stryker.config.mjs): one project, no globalSetup, since Stryker's jest
// runner does not take `projects` and would start DynamoDB Local once per mutant. test/mutation/run.ts
// starts the engines once and hands their endpoints down; every file runs on the limits engine, as the
// money paths' files do in `npm test`.
const swc = [
  '@swc/jest',
  { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } },
];

/**
 * The tests that cover the mutated modules: the fast unit files, then the integration files of the money paths
 * (messages.test.ts and its idempotency file are left out: each of their 35 tests sends, so every mutant of
 * sending.ts would run them all; the unit files pin the send path's branches).
 */
const FILES = [
  'test/unit/messages-billing.test.ts',
  'test/unit/spend-unit.test.ts',
  'test/unit/messages-consent.test.ts',
  'test/unit/messages-store.test.ts',
  'test/unit/messages-handlers.test.ts',
  'test/unit/messages-loopback.test.ts',
  'test/unit/local-text-settlement.test.ts',
  'test/unit/webhook-events.test.ts',
  'test/integration/spend-changes.test.ts',
  'test/integration/spend-model.test.ts',
  'test/integration/spend-lease.test.ts',
  'test/integration/carrier-texts.test.ts',
  'test/integration/consent-races.test.ts',
];

module.exports = {
  rootDir: '../..',
  transform: { '^.+\\.(t|j|mj)s$': swc },
  transformIgnorePatterns: ['/node_modules/(?!@middy/)'],
  moduleNameMapper: { '^@middy/([^/]+)$': '<rootDir>/node_modules/@middy/$1/index.js' },
  testEnvironment: 'node',
  testMatch: FILES.map((file) => `<rootDir>/${file}`),
  setupFiles: ['<rootDir>/test/support/quiet-sdk.ts', '<rootDir>/test/mutation/mutation-env.ts'],
  setupFilesAfterEnv: ['<rootDir>/test/support/slow-test-timeout.ts', '<rootDir>/test/mutation/mutation-teardown.ts'],
};
