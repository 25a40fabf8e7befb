import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../../shared/aws';
import type { Item } from '../../../shared/table/dynamo';
import { fromItem as tenantFromItem, tenantKey, type Tenant } from '../../tenants/tenants';
import { endpointKey, fromItem as endpointFromItem, type WebhookEndpoint } from '../endpoints';

/**
 * What a delivery attempt must know besides its delivery (which its claim answers), read fresh
 * for every batch of attempts in ONE round trip: its endpoint (deleted? new secret? new URL?) and
 * the organization (which hosts it still approves). One BatchGetItem for a whole batch of
 * messages, every read strongly consistent, so a deletion or a withdrawn approval stops the very
 * next batch, and each row read once per batch however many of its messages are the endpoint's: a
 * busy endpoint's attempts do not each take 2 read units of the organization's partition.
 */
export type AttemptState = { endpoint?: WebhookEndpoint; tenant?: Tenant };

/** Whose endpoint an attempt goes to. */
export type AttemptRef = { tenantId: string; endpointId: string };

/** DynamoDB's BatchGetItem takes at most 100 keys. */
const MAX_KEYS = 100;

type Key = { pk: string; sk: string };

/** BatchGetItem may leave keys unprocessed when throttled; they are asked for again, a few times. */
const UNPROCESSED_TRIES = 4;

const keyId = ({ pk, sk }: Key) => `${pk}\u0000${sk}`;

async function getByKeys(keys: Key[]): Promise<Map<string, Item>> {
  const found = new Map<string, Item>();
  let pending: Key[] = keys;
  for (let attempt = 1; pending.length > 0; attempt += 1) {
    if (attempt > UNPROCESSED_TRIES) throw new Error(`BatchGetItem left ${pending.length} keys unprocessed after ${UNPROCESSED_TRIES} tries`);
    if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt * Math.random()));
    const { Responses, UnprocessedKeys } = await dynamo.send(
      new BatchGetCommand({ RequestItems: { [TABLE_NAME]: { Keys: pending, ConsistentRead: true } } }),
    );
    for (const item of Responses?.[TABLE_NAME] ?? []) found.set(keyId(item as Key), item);
    pending = (UnprocessedKeys?.[TABLE_NAME]?.Keys ?? []) as Key[];
  }
  return found;
}

const keysOf = ({ tenantId, endpointId }: AttemptRef) => ({ endpoint: endpointKey(tenantId, endpointId), tenant: tenantKey(tenantId) });

/** The state of each attempt, in order: every key read once, 100 keys per BatchGetItem. */
export async function readAttemptStates(refs: readonly AttemptRef[]): Promise<AttemptState[]> {
  const keys = refs.map(keysOf);
  const distinct = [...new Map(keys.flatMap((k) => [k.endpoint, k.tenant]).map((key) => [keyId(key), key])).values()];
  const items = new Map<string, Item>();
  for (let start = 0; start < distinct.length; start += MAX_KEYS) {
    for (const [id, item] of await getByKeys(distinct.slice(start, start + MAX_KEYS))) items.set(id, item);
  }
  const item = (key: Key) => items.get(keyId(key));
  return keys.map((k) => {
    const [endpoint, tenant] = [item(k.endpoint), item(k.tenant)];
    return { endpoint: endpoint && endpointFromItem(endpoint), tenant: tenant && tenantFromItem(tenant) };
  });
}

export async function readAttemptState(tenantId: string, endpointId: string): Promise<AttemptState> {
  const [state] = await readAttemptStates([{ tenantId, endpointId }]);
  return state;
}
