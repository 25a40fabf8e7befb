import { createHash, randomBytes } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { NotFoundError, ValidationError } from '../../shared/errors';
import { uuidv7 } from '../../shared/ids';
import { CONDITION, nowIso, str, type Item } from '../../shared/table/dynamo';
import { NamedTransaction } from '../../shared/table/named-transaction';
import { findByIdIndex } from '../../shared/table/id-index';
import { API_KEY_SK, PREFIX, tenantScopedPk } from '../../shared/table/keys';
import { queryAll } from '../../shared/table/query-all';
import { GSIS } from '../../shared/table/table-schema';
import { API_KEY_MARKER } from './api-key-format';
import { effectiveScopes, SCOPES, type Scope } from './scopes';
import { roundLost } from '../../shared/table/rounds-lost';

/** How many leading characters of a key are kept and shown (`prefix` in GET /me). */
const VISIBLE_PREFIX_LENGTH = 12;

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
  /** The key that replaced this one by `key rotate`; this one then expires at the end of the grace period. */
  replacedBy: string | null;
};

export const hashApiKey = (key: string): string => createHash('sha256').update(key).digest('hex');

export const isExpired = (expiresAt: string | null, now: Date): boolean =>
  expiresAt !== null && Date.parse(expiresAt) <= now.getTime();

/** Whether a key still works, as the operator sees it: a rotated key is `rotating_out` until its grace period ends. */
export type ApiKeyState = 'active' | 'rotating_out' | 'expired' | 'revoked';

export function apiKeyState(record: ApiKeyRecord, now: Date): ApiKeyState {
  if (record.revokedAt !== null) return 'revoked';
  if (isExpired(record.expiresAt, now)) return 'expired';
  return record.replacedBy !== null ? 'rotating_out' : 'active';
}

export function generateApiKey(): { key: string; hash: string; prefix: string } {
  const key = `${API_KEY_MARKER}${randomBytes(32).toString('base64url')}`;
  return { key, hash: hashApiKey(key), prefix: key.slice(0, VISIBLE_PREFIX_LENGTH) };
}

const keyOfHash = (hash: string) => ({ pk: `${PREFIX.apiKeyHash}${hash}`, sk: API_KEY_SK });

/** The gsi3 entry that lists a key under its organization (`key list`). */
const tenantListing = (tenantId: string, keyId: string) => ({
  [GSIS.gsi3.partitionKey]: tenantScopedPk(tenantId, PREFIX.apiKeysOfTenant),
  [GSIS.gsi3.sortKey]: keyId,
});

function toItem(record: ApiKeyRecord, hash: string): Item {
  return {
    ...keyOfHash(hash),
    [GSIS.gsi1.partitionKey]: `${PREFIX.apiKeyId}${record.id}`,
    [GSIS.gsi1.sortKey]: API_KEY_SK,
    ...tenantListing(record.tenantId, record.id),
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
    replacedBy: str(item.replacedBy),
  };
}

export type CreateApiKeyInput = { tenantId: string; name?: string; scopes?: Scope[]; expiresAt?: string | null };

/** Issues a key. The full key is in the result once and nowhere else, ever. */
export async function createApiKey(
  input: CreateApiKeyInput,
  now = new Date(),
): Promise<{ key: string; apiKey: ApiKeyRecord }> {
  const { key, hash, apiKey } = newApiKey(input, uuidv7(now), now);
  await dynamo.send(
    new PutCommand({ TableName: TABLE_NAME, Item: toItem(apiKey, hash), ConditionExpression: CONDITION.rowIsNew }),
  );
  return { key, apiKey };
}

function newApiKey(input: CreateApiKeyInput, id: string, now: Date) {
  const { key, hash, prefix } = generateApiKey();
  const apiKey: ApiKeyRecord = {
    id,
    tenantId: input.tenantId,
    name: input.name ?? 'API key',
    prefix,
    scopes: effectiveScopes(input.scopes ?? SCOPES),
    expiresAt: input.expiresAt ?? null,
    createdAt: nowIso(now),
    revokedAt: null,
    replacedBy: null,
  };
  return { key, hash, apiKey };
}

/**
 * The authorizer's read. Strongly consistent: right after `key revoke` flushes the authorizer
 * cache, an eventually consistent read could still see the key unrevoked, and that allow would
 * be cached for the whole TTL. One read unit per authorization instead of half, once per key and TTL.
 */
export async function findApiKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: TABLE_NAME, Key: keyOfHash(hash), ConsistentRead: true }),
  );
  return Item ? fromItem(Item) : undefined;
}

/**
 * Revokes by id (what the portal shows). A decision the authorizer cached before still admits the
 * key until it is flushed, which the operator command does next (local/admin/authorizer-cache.ts).
 */
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

export type RotateApiKeyInput = { graceSeconds: number; expiresAt?: string | null };

/**
 * Replaces a key: a new key with the same organization, name and scopes, and the old key expires
 * after the grace period (or at its own expiry, if sooner), so clients switch over with no request
 * refused. One transaction: the new key exists exactly when the old one is marked replaced. The
 * authorizer needs nothing new: an expired key is refused, and the handler re-checks the expiry a
 * cached decision carries (tenants/auth.ts). A decision cached before the rotation carries no
 * expiry, so the operator command flushes the authorizer cache after it (local/admin/authorizer-cache.ts).
 */
export async function rotateApiKey(
  keyId: string,
  input: RotateApiKeyInput,
  now = new Date(),
): Promise<{ key: string; apiKey: ApiKeyRecord; replaced: ApiKeyRecord }> {
  const found = await findByIdIndex(PREFIX.apiKeyId, keyId);
  if (!found) throw new NotFoundError('API key');
  const old = fromItem(found);
  if (old.revokedAt !== null) throw new ValidationError(`API key ${keyId} is revoked; issue a new one with key create`);
  if (isExpired(old.expiresAt, now))
    throw new ValidationError(`API key ${keyId} expired at ${old.expiresAt}; issue a new one with key create`);
  if (old.replacedBy !== null)
    throw new ValidationError(`API key ${keyId} was already rotated to ${old.replacedBy}; rotate that one`);

  const graceEnd = nowIso(new Date(now.getTime() + input.graceSeconds * 1000));
  const oldExpiresAt =
    old.expiresAt !== null && Date.parse(old.expiresAt) < Date.parse(graceEnd) ? old.expiresAt : graceEnd;
  const { key, hash, apiKey } = newApiKey(
    { tenantId: old.tenantId, name: old.name, scopes: old.scopes, expiresAt: input.expiresAt },
    uuidv7(now),
    now,
  );
  const refusal = await new NamedTransaction<'newKey' | 'oldKey'>(ROTATE_SITE)
    .add('newKey', {
      Put: { TableName: TABLE_NAME, Item: toItem(apiKey, hash), ConditionExpression: CONDITION.rowIsNew },
    })
    .add('oldKey', {
      Update: {
        TableName: TABLE_NAME,
        Key: { pk: found.pk, sk: found.sk },
        UpdateExpression: 'SET expiresAt = :expiresAt, replacedBy = :newId',
        // A concurrent rotation or revocation wins; this one changes nothing.
        ConditionExpression: `${CONDITION.rowExists} AND revokedAt = :null AND replacedBy = :null`,
        ExpressionAttributeValues: { ':expiresAt': oldExpiresAt, ':newId': apiKey.id, ':null': null },
      },
    })
    .write();
  if (refusal?.failed('oldKey')) {
    roundLost(ROTATE_SITE);
    throw new ValidationError(`API key ${keyId} was revoked or rotated meanwhile; list the keys and try again`);
  }
  if (refusal) throw refusal.error;
  return { key, apiKey, replaced: { ...old, expiresAt: oldExpiresAt, replacedBy: apiKey.id } };
}

/** The organization's keys, oldest first (ids are time-ordered). */
export async function listApiKeys(tenantId: string): Promise<ApiKeyRecord[]> {
  const items = await queryAll({
    IndexName: GSIS.gsi3.indexName,
    KeyConditionExpression: '#pk = :pk',
    ExpressionAttributeNames: { '#pk': GSIS.gsi3.partitionKey },
    ExpressionAttributeValues: { ':pk': tenantScopedPk(tenantId, PREFIX.apiKeysOfTenant) },
  });
  return items.map(fromItem);
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

/**
 * The operator's view of a key (`key list`, `tenant show`, `key rotate`): the public view, whether it still works, what
 * replaced it.
 */
export const operatorApiKeyView = (record: ApiKeyRecord, now: Date) => ({
  ...publicApiKey(record),
  state: apiKeyState(record, now),
  revokedAt: record.revokedAt,
  replacedBy: record.replacedBy,
});

/** Where a key is rotated: lost to a concurrent rotation or revocation (shared/table/rounds-lost.ts). */
const ROTATE_SITE = 'keys.rotate';
