import type { IntegrationEngines } from './dynamodb-global-setup';

export default async function globalTeardown(): Promise<void> {
  const started = globalThis as { __integrationEngines?: IntegrationEngines };
  const engines = started.__integrationEngines;
  started.__integrationEngines = undefined; // the other project's teardown finds nothing left to stop
  await engines?.limits.stop();
  await engines?.dynamoDbLocal.stop();
}
