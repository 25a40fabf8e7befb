import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyValidationError,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import {
  IDEMPOTENT_REPLAYED_HEADER,
  IdempotencyConflictError,
  IdempotencyMismatchError,
  ValidationError,
} from '../../shared/errors';
import { PREFIX, tenantScopedPk } from '../../shared/table/keys';
import { TABLE_KEYS, TTL_ATTRIBUTE } from '../../shared/table/table-schema';

/**
 * The `Idempotency-Key` request header of the routes whose effects stay inside the table, on
 * Powertools' idempotency utility (POST /messages keeps its keys in the send transaction instead:
 * lambdas/contexts/texting/send-keys.ts):
 * - same key, same body (compared as parsed JSON): the first response, status and body, is
 *   returned again and nothing runs a second time (header `Idempotent-Replayed: true`);
 * - same key, another body: 422 `idempotency_mismatch`;
 * - same key while the first request still runs: 409 `idempotency_conflict`;
 * - only successes are kept: a request that failed (402, 409, 502...) releases its key, so the
 *   retry runs again; a 502 carrier failure refunded the charge, so that retry is safe.
 * Keys are kept 24 hours (the table's TTL attribute), per organization and per operation.
 *
 * Rows stay inside the organization's key space: Powertools' composite-key mode writes
 * pk = `T#<tenantId>#IDEMPOTENCY` (its static partition value, one persistence layer per call)
 * and sk = `<operationId>#<hash of the key>`, so the key itself is never stored.
 */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
/**
 * How long a started request holds its key before another may take it over (a crashed run must
 * not block the key for 24 hours). Longer than any API function can run: API Gateway stops
 * waiting after 29 s, and the functions' timeout must stay under this.
 */
export const IN_PROGRESS_LOCK_MS = 60_000;

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** The header's value, case-insensitively; undefined when absent; 400 when malformed. */
export function idempotencyKeyOf(headers: Record<string, string | undefined>): string | undefined {
  const wanted = IDEMPOTENCY_HEADER.toLowerCase();
  const value = Object.entries(headers).find(([name]) => name.toLowerCase() === wanted)?.[1];
  if (value === undefined) return undefined;
  if (!KEY_PATTERN.test(value)) {
    throw new ValidationError(`${IDEMPOTENCY_HEADER}: must be 1 to 255 printable ASCII characters without spaces`);
  }
  return value;
}

/** What can be replayed: a JSON response. */
export type ReplayableResponse = { statusCode: number; body?: unknown; headers?: Record<string, string> };

export type IdempotencyScope = {
  tenantId: string;
  /** The route's operationId: one key may be used once per operation. */
  operation: string;
  headers: Record<string, string | undefined>;
  /** The validated request body, compared on replay. */
  request: unknown;
};

type Registered = Parameters<IdempotencyConfig['registerLambdaContext']>[0];

/**
 * Runs `run` at most once per (organization, operation, Idempotency-Key). Without the header it
 * simply runs.
 */
export async function withIdempotency<R extends ReplayableResponse>(
  scope: IdempotencyScope,
  run: () => Promise<R>,
): Promise<R> {
  const key = idempotencyKeyOf(scope.headers);
  if (key === undefined) return run();

  const persistenceStore = new DynamoDBPersistenceLayer({
    tableName: TABLE_NAME,
    // The document client shares the base client's config and middleware stack, so Powertools'
    // low-level commands use the same connection (and the same mocks in unit tests).
    awsSdkV3Client: dynamo as unknown as DynamoDBClient,
    keyAttr: TABLE_KEYS.partitionKey,
    sortKeyAttr: TABLE_KEYS.sortKey,
    staticPkValue: tenantScopedPk(scope.tenantId, PREFIX.idempotency),
    expiryAttr: TTL_ATTRIBUTE,
  });
  const config = new IdempotencyConfig({
    eventKeyJmesPath: 'key',
    payloadValidationJmesPath: 'request',
    expiresAfterSeconds: IDEMPOTENCY_TTL_SECONDS,
    responseHook: (response) => {
      const stored = response as ReplayableResponse;
      return {
        ...stored,
        headers: { ...stored.headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' },
      } as unknown as typeof response;
    },
  });
  // Powertools sizes the in-progress lock from the Lambda's remaining time; a fixed window is
  // what we want (and works the same in the local runtime, which has no real Lambda context).
  config.registerLambdaContext({ getRemainingTimeInMillis: () => IN_PROGRESS_LOCK_MS } as Registered);

  const once = makeIdempotent(
    // Stored as a DynamoDB map: a plain JSON copy has no undefined values for marshall to reject.
    async (_payload: { key: string; request: unknown }) => JSON.parse(JSON.stringify(await run())) as R,
    { persistenceStore, config, keyPrefix: scope.operation },
  );
  try {
    return (await once({ key, request: scope.request ?? null })) as R;
  } catch (err) {
    if (err instanceof IdempotencyValidationError) throw new IdempotencyMismatchError();
    if (err instanceof IdempotencyAlreadyInProgressError) throw new IdempotencyConflictError();
    throw err;
  }
}
