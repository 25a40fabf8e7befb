import { createHash, randomBytes } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { NotFoundError } from '../../shared/errors';
import { uuidv7 } from '../../shared/ids';
import { CONDITION, nowIso, str, type Item } from '../../shared/table/dynamo';
import { findByIdIndex } from '../../shared/table/id-index';
import { API_KEY_SK, PREFIX } from '../../shared/table/keys';
import { GSIS } from '../../shared/table/table-schema';
import { effectiveScopes, SCOPES, type Scope } from './scopes';

/** Visible marker of our keys, so a leaked key is recognisable by secret scanners. */
export const API_KEY_MARKER = 'cct_';
/** How many leading characters of a key are kept and shown (`prefix` in GET /me). */
const VISIBLE_PREFIX_LENGTH = 12;
const KEY_PATTERN = /^cct_[A-Za-z0-9_-]{43}$/;

/**
 * An API key row, stored under the SHA-256 of the key. Keys carry 256 random bits, so a fast
 * hash is right (nothing to brute-force), and the full key is never stored or logged.
 */
export type ApiKeyRecord = {
  id: string;
  tenantId: string;
  name: string;
  prefix: string;
  scopes: Scope[];
  expiresAt: string | null;
  createdAt: string;
  revokedAt: string | null;
};

export const hashApiKey = (key: string): string => createHash('sha256').update(key).digest('hex');

export const looksLikeApiKey = (value: string): boolean => KEY_PATTERN.test(value);

export function generateApiKey(): { key: string; hash: string; prefix: string } {
  const key = `${API_KEY_MARKER}${randomBytes(32).toString('base64url')}`;
  return { key, hash: hashApiKey(key), prefix: key.slice(0, VISIBLE_PREFIX_LENGTH) };
}

/**
 * The API Gateway API key that meters a service key in the stack's usage plan: its value is
 * derived from the key's id, not from the key. The value is no secret (API Gateway only counts
 * requests against it; the authorizer alone decides who gets in), so nothing more is stored and
 * the authorizer, the operator CLI and the stack agree on it without a lookup. Ids are uuids, so
 * the value has 42 characters (API Gateway wants at least 20) and is unique per key.
 */
export const USAGE_PLAN_KEY_PREFIX = 'usage-';

export const usagePlanKeyValueOf = (keyId: string): string => `${USAGE_PLAN_KEY_PREFIX}${keyId}`;

const keyOfHash = (hash: string) => ({ pk: `${PREFIX.apiKeyHash}${hash}`, sk: API_KEY_SK });

function toItem(record: ApiKeyRecord, hash: string): Item {
  return {
    ...keyOfHash(hash),
    [GSIS.gsi1.partitionKey]: `${PREFIX.apiKeyId}${record.id}`,
    [GSIS.gsi1.sortKey]: API_KEY_SK,
    type: 'apiKey',
    ...record,
  };
}

function fromItem(item: Item): ApiKeyRecord {
  return {
    id: item.id as string,
    tenantId: item.tenantId as string,
    name: item.name as string,
    prefix: item.prefix as string,
    scopes: effectiveScopes((item.scopes as string[] | undefined) ?? []),
    expiresAt: str(item.expiresAt),
    createdAt: item.createdAt as string,
    revokedAt: str(item.revokedAt),
  };
}

export type CreateApiKeyInput = { tenantId: string; name?: string; scopes?: Scope[]; expiresAt?: string | null };

/** Issues a key. The full key is in the result once and nowhere else, ever. */
export async function createApiKey(input: CreateApiKeyInput, now = new Date()): Promise<{ key: string; apiKey: ApiKeyRecord }> {
  const { key, hash, prefix } = generateApiKey();
  const apiKey: ApiKeyRecord = {
    id: uuidv7(now),
    tenantId: input.tenantId,
    name: input.name ?? 'API key',
    prefix,
    scopes: effectiveScopes(input.scopes ?? SCOPES),
    expiresAt: input.expiresAt ?? null,
    createdAt: nowIso(now),
    revokedAt: null,
  };
  await dynamo.send(new PutCommand({ TableName: TABLE_NAME, Item: toItem(apiKey, hash), ConditionExpression: CONDITION.rowIsNew }));
  return { key, apiKey };
}

export async function findApiKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
  const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: keyOfHash(hash) }));
  return Item ? fromItem(Item) : undefined;
}

/** Revokes by id (what the portal shows). The authorizer's cache may honour the key for up to its TTL. */
export async function revokeApiKey(keyId: string, now = new Date()): Promise<ApiKeyRecord> {
  const found = await findByIdIndex(PREFIX.apiKeyId, keyId);
  if (!found) throw new NotFoundError('API key');
  // Keys are written with revokedAt null, which `if_not_exists` counts as present: an already
  // revoked key keeps its first revocation time, any other gets one now.
  if (typeof found.revokedAt === 'string') return fromItem(found);
  const { Attributes } = await dynamo.send(
    new UpdateCommand({
      TableName: TABLE_NAME,
      Key: { pk: found.pk, sk: found.sk },
      UpdateExpression: 'SET revokedAt = :now',
      ConditionExpression: CONDITION.rowExists,
      ExpressionAttributeValues: { ':now': nowIso(now) },
      ReturnValues: 'ALL_NEW',
    }),
  );
  return fromItem(Attributes as Item);
}

/** The public view of a key (never the hash). */
export const publicApiKey = ({ id, name, prefix, scopes, expiresAt, createdAt }: ApiKeyRecord) => ({
  id,
  name,
  prefix,
  scopes,
  expiresAt,
  createdAt,
});
