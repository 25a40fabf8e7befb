import { batchGetItems } from '../../../shared/table/batch-get';
import type { Item } from '../../../shared/table/dynamo';
import type { Key } from '../../../shared/table/keys';
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

/** BatchGetItem may leave keys unprocessed when throttled: a few rounds, then the queue retries the message. */
const UNPROCESSED_ROUNDS = 4;

const keyId = ({ pk, sk }: Key) => `${pk}\u0000${sk}`;

const keysOf = ({ tenantId, endpointId }: AttemptRef) => ({
  endpoint: endpointKey(tenantId, endpointId),
  tenant: tenantKey(tenantId),
});

/** The state of each attempt, in order: every key read once, 100 keys per BatchGetItem. */
export async function readAttemptStates(refs: readonly AttemptRef[]): Promise<AttemptState[]> {
  const keys = refs.map(keysOf);
  const distinct = [...new Map(keys.flatMap((k) => [k.endpoint, k.tenant]).map((key) => [keyId(key), key])).values()];
  const found = await batchGetItems(distinct, { consistentRead: true, rounds: UNPROCESSED_ROUNDS });
  const items = new Map<string, Item>(found.map((row) => [keyId(row as Key), row]));
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
