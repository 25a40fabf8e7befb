import { spawn } from 'node:child_process';
import { startDynamoDbLocal } from '../../local/dynamodb-local';
import { startLimitsProxy } from '../../local/dynamodb-limits/limits-proxy';

/**
 * `npm run test:mutation`: starts DynamoDB Local and the limits engine once, then Stryker
 * (stryker.config.mjs), whose test processes inherit the endpoints. `MUTATE=<file>,<file>` narrows
 * the run, `STRYKER_CONCURRENCY` sets its test processes (1 by default: the machine is shared).
 * Exits non-zero when the score is under the config's `break` threshold.
 */
async function main(): Promise<void> {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const dynamoDbLocal = await startDynamoDbLocal({ sharedDb: false });
  const limits = await startLimitsProxy({ upstream: dynamoDbLocal.endpoint, sharedDb: false });
  process.env.DYNAMODB_ENDPOINT = dynamoDbLocal.endpoint;
  process.env.DYNAMODB_LOCAL_ENDPOINT = dynamoDbLocal.endpoint;
  process.env.DYNAMODB_LIMITS_ENDPOINT = limits.endpoint;
  try {
    // Stryker's own CLI, in a process of its own: it is ESM, which tsx would load as CommonJS.
    const stryker = spawn(process.execPath, ['node_modules/@stryker-mutator/core/bin/stryker.js', 'run'], {
      stdio: 'inherit',
    });
    process.exitCode = await new Promise<number>((resolve) => stryker.on('exit', (code) => resolve(code ?? 1)));
  } finally {
    await limits.stop();
    await dynamoDbLocal.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
