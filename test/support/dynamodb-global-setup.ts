import { SHORT_RUN_JVM_OPTIONS, startDynamoDbLocal, type DynamoDbLocal } from '../../local/dynamodb-local';
import { startLimitsProxy, type LimitsProxy } from '../../local/dynamodb-limits/limits-proxy';

/** What the integration run started, for the teardown (globalSetup and globalTeardown share this process). */
export type IntegrationEngines = { dynamoDbLocal: DynamoDbLocal; limits: LimitsProxy };

const started = globalThis as { __integrationEngines?: IntegrationEngines };

/**
 * One DynamoDB Local for the whole run; each test file signs with its own access key, so it has
 * its own database there (integration-env.ts says why), and creates its table in it. The
 * end-to-end files' runtimes use it too, each file's with a key of its own (e2e-env.ts): a JVM
 * start and its warm-up per file cost more CPU than anything else in the e2e project did.
 * In front of it, one limits-faithful engine (docs/local-engine.md) for the files that run on it
 * (`DYNAMODB_LIMITS_ENDPOINT`; on-limits-engine.ts switches a file over). Every project of the
 * run that needs it (integration, integration-limits, e2e) calls this: the first starts, the others reuse. The JVM
 * runs with the client compiler alone (SHORT_RUN_JVM_OPTIONS): a run of minutes never pays back the optimizer's CPU.
 */
export default async function globalSetup(): Promise<void> {
  // globalSetup runs outside the per-file setupFiles; see quiet-sdk.ts for why this warning is noise.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  if (!started.__integrationEngines) {
    const dynamoDbLocal = await startDynamoDbLocal({ sharedDb: false, jvmOptions: SHORT_RUN_JVM_OPTIONS });
    const limits = await startLimitsProxy({
      upstream: dynamoDbLocal.endpoint,
      sharedDb: false,
      checkComputedImages: true,
    });
    started.__integrationEngines = { dynamoDbLocal, limits };
    const stopOnSignal = () => void Promise.all([limits.stop(), dynamoDbLocal.stop()]).finally(() => process.exit(130));
    process.once('SIGINT', stopOnSignal);
    process.once('SIGTERM', stopOnSignal);
  }
  const { dynamoDbLocal, limits } = started.__integrationEngines;
  process.env.DYNAMODB_ENDPOINT = dynamoDbLocal.endpoint;
  process.env.DYNAMODB_LOCAL_ENDPOINT = dynamoDbLocal.endpoint;
  process.env.DYNAMODB_LIMITS_ENDPOINT = limits.endpoint;
}
