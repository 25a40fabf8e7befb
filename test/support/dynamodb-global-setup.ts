import { startDynamoDbLocal } from '../../local/dynamodb-local';

/**
 * One DynamoDB Local for the whole integration project; each test file signs with its own access
 * key, so it has its own database there (integration-env.ts says why), and creates its table in it.
 */
export default async function globalSetup(): Promise<void> {
  // globalSetup runs outside the per-file setupFiles; see quiet-sdk.ts for why this warning is noise.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const engine = await startDynamoDbLocal({ sharedDb: false });
  process.env.DYNAMODB_ENDPOINT = engine.endpoint;
  (globalThis as { __dynamoDbLocal?: typeof engine }).__dynamoDbLocal = engine;
  const stopOnSignal = () => void engine.stop().finally(() => process.exit(130));
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
}
