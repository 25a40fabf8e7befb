import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../../shared/aws';
import type { Item } from '../../../shared/table/dynamo';
import { fromItem as tenantFromItem, tenantKey, type Tenant } from '../../tenants/tenants';
import { deliveryKey, fromItem as deliveryFromItem, type Delivery } from '../deliveries';
import { endpointKey, fromItem as endpointFromItem, type WebhookEndpoint } from '../endpoints';

/**
 * What one delivery attempt must know, read fresh for every attempt in ONE round trip: the
 * delivery (the guard against duplicate and stale messages), its endpoint (deleted? new secret?
 * new URL?) and the organization (which hosts it still approves). One BatchGetItem instead of
 * three GetItems: the sender's table calls per attempt go from four to two, and every read is
 * strongly consistent, so a deletion or a withdrawn approval stops the very next attempt.
 */
export type AttemptState = { delivery?: Delivery; endpoint?: WebhookEndpoint; tenant?: Tenant };

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

export async function readAttemptState(tenantId: string, endpointId: string, deliveryId: string): Promise<AttemptState> {
  const keys = {
    delivery: deliveryKey(tenantId, deliveryId),
    endpoint: endpointKey(tenantId, endpointId),
    tenant: tenantKey(tenantId),
  };
  const items = await getByKeys(Object.values(keys));
  const item = (key: Key) => items.get(keyId(key));
  const [delivery, endpoint, tenant] = [item(keys.delivery), item(keys.endpoint), item(keys.tenant)];
  return {
    delivery: delivery && deliveryFromItem(delivery),
    endpoint: endpoint && endpointFromItem(endpoint),
    tenant: tenant && tenantFromItem(tenant),
  };
}
