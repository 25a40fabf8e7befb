// The jest config Stryker runs (stryker.config.mjs): one project, no globalSetup, since Stryker's jest
// runner does not take `projects` and would start DynamoDB Local once per mutant. test/mutation/run.ts
// starts the engines once and hands their endpoints down; every file runs on the limits engine, as the
// money paths' files do in `npm test`.
const swc = [
  '@swc/jest',
  { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } },
];

const { TARGETS } = require('./targets');

/** The test files of the file being mutated (test/mutation/run.ts sets them), or of every target. */
const FILES = process.env.MUTATION_TESTS
  ? process.env.MUTATION_TESTS.split(',')
  : [...new Set(Object.values(TARGETS).flat())];

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
