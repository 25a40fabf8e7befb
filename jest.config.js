// Four projects so each kind of test runs with only what it needs: unit tests never touch a network,
// integration tests share one DynamoDB Local started by globalSetup, infra tests synthesize the stack,
// end-to-end tests start the local runtime and speak HTTP to it.
const swc = ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }];

const base = {
  // middy ships ESM only; let swc turn it into CommonJS like our own sources.
  transform: { '^.+\\.(t|j|mj)s$': swc },
  transformIgnorePatterns: ['/node_modules/(?!@middy/)'],
  moduleNameMapper: { '^@middy/([^/]+)$': '<rootDir>/node_modules/@middy/$1/index.js' },
  testEnvironment: 'node',
  setupFiles: ['<rootDir>/test/support/quiet-sdk.ts'],
};

module.exports = {
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...base,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/support/dynamodb-global-setup.ts',
      globalTeardown: '<rootDir>/test/support/dynamodb-global-teardown.ts',
      setupFiles: [...base.setupFiles, '<rootDir>/test/support/integration-env.ts'],
    },
    { ...base, displayName: 'infra', testMatch: ['<rootDir>/test/infra/**/*.test.ts'] },
    { ...base, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'] },
  ],
};
