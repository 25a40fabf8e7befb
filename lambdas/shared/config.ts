/**
 * Configuration read once, at init, from the environment. A missing required value throws while
 * the module loads, so a misconfigured function fails its first invocation loudly instead of
 * answering requests with half a configuration.
 */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    throw new Error(`Missing required environment variable ${name}`);
  }
  return value;
}

export function optionalEnv(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}

export function intEnv(name: string, fallback: number): number {
  const raw = optionalEnv(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`Environment variable ${name} must be a non-negative integer`);
  return value;
}

/**
 * The fixed, meaningless credentials every client of a local engine (DynamoDB Local, a stand-in
 * service in tests) signs with: such engines accept any, and fixed ones keep the local runtime
 * independent of ~/.aws. Never real credentials; defined once so no copy looks like one.
 *
 * `LOCAL_ENGINE_ACCESS_KEY_ID` picks another access key: a DynamoDB Local started without
 * `-sharedDb` keeps one database per access key, and the integration tests give each test file
 * its own that way (test/support/integration-env.ts).
 */
export const LOCAL_ENGINE_CREDENTIALS = {
  accessKeyId: optionalEnv('LOCAL_ENGINE_ACCESS_KEY_ID') ?? 'local',
  secretAccessKey: 'local',
} as const;

/**
 * Everything a client of a local engine at `endpoint` needs. One definition, because DynamoDB
 * Local without `-sharedDb` keeps a database per access key and region: clients that disagree on
 * either would not see each other's tables.
 */
export const localEngineClientConfig = (endpoint: string) =>
  ({ endpoint, region: optionalEnv('AWS_REGION') ?? 'local', credentials: LOCAL_ENGINE_CREDENTIALS }) as const;

/** The same, as the environment a child process reads them from. */
export const LOCAL_ENGINE_CREDENTIALS_ENV = {
  AWS_ACCESS_KEY_ID: LOCAL_ENGINE_CREDENTIALS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: LOCAL_ENGINE_CREDENTIALS.secretAccessKey,
} as const;

export type TableConfig = { tableName: string; endpoint?: string };

/** Where the table lives. `DYNAMODB_ENDPOINT` is set only by the local runtime and the tests. */
export function tableConfig(): TableConfig {
  return { tableName: requireEnv('TABLE_NAME'), endpoint: optionalEnv('DYNAMODB_ENDPOINT') };
}

/** The per-key limit the limiter enforces and `GET /me` reports (spec section 8). */
export const rateLimitPerKey = (): number => intEnv('RATE_LIMIT_PER_KEY', 120);
