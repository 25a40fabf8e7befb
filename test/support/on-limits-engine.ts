/**
 * Runs an integration test file on the limits-faithful engine (docs/local-engine.md) instead of
 * DynamoDB Local alone: transactions that collide are cancelled, hot partitions and items are
 * throttled, units are counted as AWS charges them. The shared module reads DYNAMODB_ENDPOINT
 * when it loads, so this runs before the file: as a setup file of the `integration-limits`
 * project (the files jest.config.js lists), or for every file with `DYNAMODB_ENGINE=limits`
 * (integration-env.ts).
 */
export function runOnLimitsEngine(): void {
  const endpoint = process.env.DYNAMODB_LIMITS_ENDPOINT;
  if (!endpoint)
    throw new Error('DYNAMODB_LIMITS_ENDPOINT is not set: run integration tests through the jest integration projects');
  process.env.DYNAMODB_ENDPOINT = endpoint;
}
