import type { AttributeValue, ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { NotFoundError } from '../../shared/errors';
import { CONDITION, isConditionalCheckFailed, nowIso, str, type Item } from '../../shared/table/dynamo';
import { batchGetItems } from '../../shared/table/batch-get';
import { findByIdIndex } from '../../shared/table/id-index';
import { uuidv7LowerBound } from '../../shared/ids';
import { ownPartitionKey, PREFIX, sortKeyStartsWith, tenantScopedPk, type Key } from '../../shared/table/keys';
import { ROW_TYPES } from '../../shared/table/row-types';
import { GSIS, TTL_ATTRIBUTE } from '../../shared/table/table-schema';
import type { DeliveredEventType } from './event-types';
import type { StreamChange } from './stream-change';

/**
 * Deliveries: one row per (event, endpoint), the delivery log the portal shows. Each row is a
 * partition of its own (`T#<org>#DELIVERY#<id>` / `DELIVERY`): a delivery is written three times
 * (stored, its attempt claimed, its outcome), and on one partition per endpoint those writes
 * capped an endpoint near 165 deliveries a second. The log of an endpoint is its gsi2 partition
 * (`T#<org>#DELIVERIES#<endpoint>`, sorted by id, so by event time: newest first is a reverse
 * query) of entries holding the delivery's keys, put when the delivery is stored and never
 * rewritten: 1 write unit per delivery there, whatever its attempts (docs/capacity.md); a page
 * of the log reads its deliveries by key. Beside it, a small
 * lookup row (`DELIVERYID#`) carries the gsi1 entry the operator finds a bare id by: written
 * once, where an index entry on the delivery row itself would copy the whole row (body included)
 * on every write. Rows expire 30 days after the last operator action.
 *
 * `cycle` counts attempt cycles (1, then +1 per redelivery). The router queues attempt 1 of a
 * new delivery after storing it, and again when a replayed stream record finds it still pending
 * (at least once: the attempt claim drops the copy). Operator actions (redeliver, test) set
 * `enqueueRequested` and the router, which sees that change on the stream, queues the attempt and
 * notes it in `enqueuedCycle`, in AWS and locally.
 */
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export const DELIVERY_ROW_TYPE = ROW_TYPES.delivery;
export const DELIVERY_RETENTION_SECONDS = 30 * 24 * 3600;

export type Delivery = {
  id: string;
  tenantId: string;
  endpointId: string;
  event: DeliveredEventType;
  eventId: string;
  /** The frozen body: every attempt and every redelivery sends exactly these bytes. */
  body: string;
  status: DeliveryStatus;
  attempts: number;
  cycle: number;
  enqueuedCycle: number;
  nextRetryAt: string | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
};

/** What the operator sees: everything but the body. */
export type DeliveryView = Omit<Delivery, 'body' | 'enqueuedCycle' | 'tenantId'>;

export const deliveryKey = (tenantId: string, deliveryId: string): Key =>
  ownPartitionKey(tenantId, 'webhookDelivery', deliveryId);

/** The endpoint's delivery log: one gsi2 partition per endpoint. */
const logPk = (tenantId: string, endpointId: string) =>
  tenantScopedPk(tenantId, `${PREFIX.webhookDeliveries}${endpointId}`);
const logSk = (deliveryId: string) => `${PREFIX.webhookDelivery}${deliveryId}`;

/** A delivery's place in its endpoint's log, as a Query of gsi2 names it (an ExclusiveStartKey). */
export const logPosition = (tenantId: string, endpointId: string, deliveryId: string): Item => ({
  ...deliveryKey(tenantId, deliveryId),
  [GSIS.gsi2.partitionKey]: logPk(tenantId, endpointId),
  [GSIS.gsi2.sortKey]: logSk(deliveryId),
});

/** The delivery id of a log position (a LastEvaluatedKey of gsi2). */
export const deliveryIdOfPosition = (position: Record<string, unknown>): string =>
  String(position[GSIS.gsi2.sortKey]).slice(PREFIX.webhookDelivery.length);

const expiresAt = (now: Date): number => Math.floor(now.getTime() / 1000) + DELIVERY_RETENTION_SECONDS;

/** The row that finds a delivery by its bare id (gsi1), in the delivery's own partition. */
const lookupKey = (tenantId: string, deliveryId: string): Key => ({
  pk: deliveryKey(tenantId, deliveryId).pk,
  sk: PREFIX.webhookDeliveryId,
});

const lookupItem = (delivery: Pick<Delivery, 'tenantId' | 'id' | 'endpointId' | 'updatedAt'>): Item => ({
  ...lookupKey(delivery.tenantId, delivery.id),
  [GSIS.gsi1.partitionKey]: `${PREFIX.webhookDeliveryId}${delivery.id}`,
  [GSIS.gsi1.sortKey]: PREFIX.webhookDeliveryId,
  type: 'webhookDeliveryId',
  tenantId: delivery.tenantId,
  id: delivery.id,
  endpointId: delivery.endpointId,
  [TTL_ATTRIBUTE]: expiresAt(new Date(delivery.updatedAt)),
});

export function toItem(delivery: Delivery, extra: { enqueueRequested?: boolean } = {}): Item {
  return {
    ...logPosition(delivery.tenantId, delivery.endpointId, delivery.id),
    type: DELIVERY_ROW_TYPE,
    ...delivery,
    ...(extra.enqueueRequested && { enqueueRequested: true }),
    [TTL_ATTRIBUTE]: expiresAt(new Date(delivery.updatedAt)),
  };
}

export function fromItem(item: Item): Delivery {
  return {
    id: item.id as string,
    tenantId: item.tenantId as string,
    endpointId: item.endpointId as string,
    event: item.event as DeliveredEventType,
    eventId: item.eventId as string,
    body: item.body as string,
    status: item.status as DeliveryStatus,
    attempts: (item.attempts as number | undefined) ?? 0,
    cycle: (item.cycle as number | undefined) ?? 1,
    enqueuedCycle: (item.enqueuedCycle as number | undefined) ?? 0,
    nextRetryAt: str(item.nextRetryAt),
    lastError: str(item.lastError),
    createdAt: item.createdAt as string,
    updatedAt: item.updatedAt as string,
  };
}

export const toView = ({ body: _body, enqueuedCycle: _enqueued, tenantId: _tenant, ...view }: Delivery): DeliveryView =>
  view;

/** The deliveries a page of the log names, in its order, read by key (those gone since are left out). */
async function deliveriesAt(positions: readonly Item[], consistentRead: boolean): Promise<Delivery[]> {
  const keys = positions.map((position) => ({ pk: position.pk as string, sk: position.sk as string }));
  const rows = new Map((await batchGetItems(keys, { consistentRead })).map((row) => [row.pk as string, row]));
  return keys.flatMap((key) => {
    const row = rows.get(key.pk);
    return row ? [fromItem(row)] : [];
  });
}

/** A delivery an operator asked to send whose current cycle has no message on the queue yet. */
export const needsEnqueue = (delivery: Delivery): boolean =>
  delivery.status === 'pending' && delivery.enqueuedCycle < delivery.cycle;

export function newDelivery(
  fields: Pick<Delivery, 'id' | 'tenantId' | 'endpointId' | 'event' | 'eventId' | 'body'>,
  now: Date,
): Delivery {
  const at = nowIso(now);
  return {
    ...fields,
    status: 'pending',
    attempts: 0,
    cycle: 1,
    enqueuedCycle: 0,
    nextRetryAt: at,
    lastError: null,
    createdAt: at,
    updatedAt: at,
  };
}

/**
 * Writes a delivery unless its id exists, after its lookup row (a plain put: the same on a
 * replay). Returns the row as stored: the new one, or the one a previous run wrote (read in the
 * same call), so a replay can tell whether it is still pending.
 */
export async function insertDelivery(
  delivery: Delivery,
  extra: { enqueueRequested?: boolean } = {},
): Promise<{ delivery: Delivery; created: boolean }> {
  await dynamo.send(new PutCommand({ TableName: TABLE_NAME, Item: lookupItem(delivery) }));
  try {
    await dynamo.send(
      new PutCommand({
        TableName: TABLE_NAME,
        Item: toItem(delivery, extra),
        ConditionExpression: CONDITION.rowIsNew,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { delivery, created: true };
  } catch (err) {
    const old = (err as ConditionalCheckFailedException).Item;
    if (!isConditionalCheckFailed(err) || !old) throw err;
    return { delivery: fromItem(unmarshall(old as Record<string, AttributeValue>)), created: false };
  }
}

/** The row a delivery is known by: its tenant and id. */
export type DeliveryRef = Pick<Delivery, 'tenantId' | 'id'>;

/** Records that `cycle` is on the queue; a redelivery that started meanwhile is left alone. */
export async function markEnqueued(delivery: DeliveryRef, cycle: number): Promise<void> {
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: deliveryKey(delivery.tenantId, delivery.id),
        UpdateExpression: 'SET enqueuedCycle = :cycle REMOVE enqueueRequested',
        ConditionExpression: `${CONDITION.rowExists} AND #cycle = :cycle`,
        ExpressionAttributeNames: { '#cycle': 'cycle' },
        ExpressionAttributeValues: { ':cycle': cycle },
      }),
    );
  } catch (err) {
    if (!isConditionalCheckFailed(err)) throw err;
  }
}

export async function getDelivery(tenantId: string, deliveryId: string): Promise<Delivery | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: TABLE_NAME, Key: deliveryKey(tenantId, deliveryId), ConsistentRead: true }),
  );
  return Item ? fromItem(Item) : undefined;
}

/** The operator's lookup by bare id: its lookup row in gsi1, then the delivery. */
export async function findDelivery(deliveryId: string): Promise<Delivery> {
  const lookup = await findByIdIndex(PREFIX.webhookDeliveryId, deliveryId);
  const delivery = lookup && (await getDelivery(lookup.tenantId as string, deliveryId));
  if (!delivery) throw new NotFoundError('Delivery');
  return delivery;
}

export type AttemptRecord = {
  cycle: number;
  attempt: number;
  status: DeliveryStatus;
  nextRetryAt: string | null;
  /** Undefined keeps the previous error (a success after failures still shows what failed). */
  lastError?: string;
  now: Date;
};

/**
 * Records the result of attempt `attempt`. Guarded so that a duplicate or stale message (an
 * older cycle, an attempt already recorded) changes nothing; returns whether it applied.
 */
export async function recordAttempt(delivery: DeliveryRef, record: AttemptRecord): Promise<boolean> {
  const sets = ['attempts = :attempt', '#status = :status', 'nextRetryAt = :next', 'updatedAt = :now'];
  if (record.lastError !== undefined) sets.push('lastError = :error');
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: deliveryKey(delivery.tenantId, delivery.id),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: `${CONDITION.rowExists} AND #cycle = :cycle AND attempts < :attempt AND #status = :pending`,
        ExpressionAttributeNames: { '#status': 'status', '#cycle': 'cycle' },
        ExpressionAttributeValues: {
          ':attempt': record.attempt,
          ':status': record.status,
          ':next': record.nextRetryAt,
          ':now': nowIso(record.now),
          ':cycle': record.cycle,
          ':pending': 'pending',
          ...(record.lastError !== undefined && { ':error': record.lastError }),
        },
      }),
    );
    return true;
  } catch (err) {
    if (isConditionalCheckFailed(err)) return false;
    throw err;
  }
}

export type AttemptClaim = 'claimed' | 'taken' | 'stale';

/**
 * Claims attempt `attempt` of a delivery for one processor, before it posts: one conditional
 * write, so of two copies of the same queue message (an SQS redelivery while the first still runs,
 * a Lambda retry) exactly one posts and queues the next attempt; duplicate messages of a later
 * attempt are refused the same way, so one delivery never has two chains of attempts.
 * - `claimed`: this processor owns the attempt; the delivery as the claim left it comes with it
 *   (the claim is the sender's read of the row: no read before it).
 * - `taken`: another processor claimed it less than `staleAfterMs` ago; the caller lets the queue
 *   bring the message back later (by then it is done, or its claimer crashed and the claim is stale).
 * - `stale`: the delivery does not exist, the attempt is already recorded, the cycle moved on, the
 *   delivery settled, or a later attempt is claimed. Only the processor of this attempt queues the
 *   next one, and only after posting, so a later claim means this attempt was made even if its
 *   outcome was never recorded (its processor died between queueing and recording): taking the
 *   claim back would post again.
 */
export async function claimAttempt(
  delivery: DeliveryRef,
  claim: { cycle: number; attempt: number; nowMs: number; staleAfterMs: number },
): Promise<{ claim: 'claimed'; delivery: Delivery } | { claim: Exclude<AttemptClaim, 'claimed'> }> {
  try {
    const { Attributes } = await dynamo.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: deliveryKey(delivery.tenantId, delivery.id),
        UpdateExpression: 'SET claimedCycle = :cycle, claimedAttempt = :attempt, claimedAt = :now',
        // A redelivery starts a new cycle whose attempts count from 1 again: claims are per cycle.
        ConditionExpression:
          `${CONDITION.rowExists} AND #cycle = :cycle AND #status = :pending AND attempts < :attempt ` +
          'AND (attribute_not_exists(claimedCycle) OR claimedCycle <> :cycle OR claimedAttempt < :attempt ' +
          'OR (claimedAttempt = :attempt AND claimedAt < :staleBefore))',
        ExpressionAttributeNames: { '#status': 'status', '#cycle': 'cycle' },
        ExpressionAttributeValues: {
          ':attempt': claim.attempt,
          ':now': claim.nowMs,
          ':cycle': claim.cycle,
          ':pending': 'pending',
          ':staleBefore': claim.nowMs - claim.staleAfterMs,
        },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { claim: 'claimed', delivery: fromItem(Attributes!) };
  } catch (err) {
    if (!isConditionalCheckFailed(err)) throw err;
    const raw = (err as ConditionalCheckFailedException).Item;
    const old = raw ? unmarshall(raw as Record<string, AttributeValue>) : undefined;
    const stillOpen =
      old && (old.cycle ?? 1) === claim.cycle && old.status === 'pending' && (old.attempts as number) < claim.attempt;
    return { claim: stillOpen && old.claimedAttempt === claim.attempt ? 'taken' : 'stale' };
  }
}

/**
 * The endpoint's newest deliveries, newest first: one Query of its log (gsi2, `limit` entries)
 * and one BatchGetItem of the deliveries it names, however many deliveries the endpoint has.
 */
export async function listDeliveriesOf(tenantId: string, endpointId: string, limit = 50): Promise<Delivery[]> {
  const { Items } = await dynamo.send(
    new QueryCommand({
      TableName: TABLE_NAME,
      IndexName: GSIS.gsi2.indexName,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': GSIS.gsi2.partitionKey },
      ExpressionAttributeValues: { ':pk': logPk(tenantId, endpointId) },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return deliveriesAt(Items ?? [], false);
}

/**
 * Starts a new attempt cycle of a delivery, same id and same body: attempts from 1 again, with
 * the full backoff. The router sees `enqueueRequested` on the stream and queues attempt 1. Both
 * the delivery and its lookup row are kept 30 days from now.
 */
export async function requestRedelivery(deliveryId: string, now = new Date()): Promise<Delivery> {
  const current = await findDelivery(deliveryId);
  return (await startNewCycle(current, now))!;
}

/**
 * The new cycle itself. With `onlyIfStill`, only while the row is as it was read (failed, in that
 * cycle): of two recoveries racing for one delivery exactly one restarts it; undefined for the other.
 */
async function startNewCycle(
  current: DeliveryRef,
  now: Date,
  onlyIfStill?: { status: DeliveryStatus; cycle: number },
): Promise<Delivery | undefined> {
  try {
    const { Attributes } = await dynamo.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: deliveryKey(current.tenantId, current.id),
        UpdateExpression:
          'SET #cycle = #cycle + :one, #status = :pending, attempts = :zero, nextRetryAt = :now, lastError = :null, ' +
          'enqueueRequested = :true, updatedAt = :now, #ttl = :ttl',
        ConditionExpression:
          CONDITION.rowExists + (onlyIfStill ? ' AND #status = :wasStatus AND #cycle = :wasCycle' : ''),
        ExpressionAttributeNames: { '#cycle': 'cycle', '#status': 'status', '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: {
          ':one': 1,
          ':pending': 'pending',
          ':zero': 0,
          ':now': nowIso(now),
          ':null': null,
          ':true': true,
          ':ttl': expiresAt(now),
          ...(onlyIfStill && { ':wasStatus': onlyIfStill.status, ':wasCycle': onlyIfStill.cycle }),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const restarted = fromItem(Attributes!);
    await dynamo.send(new PutCommand({ TableName: TABLE_NAME, Item: lookupItem(restarted) }));
    return restarted;
  } catch (err) {
    if (onlyIfStill && isConditionalCheckFailed(err)) return undefined;
    throw err;
  }
}

/** A failed delivery sent again by a recovery: a new cycle unless it changed since it was read. */
export const restartFailedDelivery = (
  delivery: DeliveryRef & Pick<Delivery, 'cycle'>,
  now: Date,
): Promise<Delivery | undefined> => startNewCycle(delivery, now, { status: 'failed', cycle: delivery.cycle });

export type FailedDeliveriesPage = { deliveries: Delivery[]; examined: number; lastKey?: Record<string, unknown> };

/**
 * One page of an endpoint's deliveries that are failed and were last changed at or after
 * `endedSince`, among those whose event happened at or after `eventsFrom`, oldest event first:
 * a Query of the endpoint's log (gsi2; ids start with the event's time), `limit` entries
 * examined at most, and the deliveries they name read by key (strongly consistent), never a scan.
 * The log lags a write briefly: a delivery stored a moment ago may show on a later run.
 */
export async function failedDeliveriesPage(
  tenantId: string,
  endpointId: string,
  range: { eventsFromMs: number; endedSince: Date; limit: number; startKey?: Record<string, unknown> },
): Promise<FailedDeliveriesPage> {
  const rows = sortKeyStartsWith(PREFIX.webhookDelivery, GSIS.gsi2.sortKey);
  const { Items, LastEvaluatedKey } = await dynamo.send(
    new QueryCommand({
      TableName: TABLE_NAME,
      IndexName: GSIS.gsi2.indexName,
      KeyConditionExpression: '#pk = :pk AND #skRange BETWEEN :from AND :skTo',
      ExpressionAttributeNames: { ...rows.names, '#pk': GSIS.gsi2.partitionKey },
      ExpressionAttributeValues: {
        ':pk': logPk(tenantId, endpointId),
        ':from': logSk(uuidv7LowerBound(range.eventsFromMs)),
        ':skTo': rows.values[':skTo'],
      },
      ScanIndexForward: true,
      Limit: range.limit,
      ExclusiveStartKey: range.startKey,
    }),
  );
  const endedSince = nowIso(range.endedSince);
  const deliveries = (await deliveriesAt(Items ?? [], true)).filter(
    (delivery) => delivery.status === 'failed' && delivery.updatedAt >= endedSince,
  );
  return { deliveries, examined: Items?.length ?? 0, lastKey: LastEvaluatedKey };
}

/**
 * Whether a stream change is an operator's request to enqueue a delivery: the moment
 * `enqueueRequested` appears (a test delivery inserted, or a redelivery started). Later writes
 * while the flag is still set (the sender recording attempts) are not new requests.
 */
export function enqueueRequestOf(change: StreamChange): DeliveryRef | undefined {
  const { newImage, oldImage } = change;
  if (change.eventName === 'REMOVE' || newImage?.type !== DELIVERY_ROW_TYPE || newImage.enqueueRequested !== true)
    return undefined;
  const isNewRequest =
    change.eventName === 'INSERT' || oldImage?.enqueueRequested !== true || oldImage.cycle !== newImage.cycle;
  if (!isNewRequest) return undefined;
  return { tenantId: newImage.tenantId as string, id: newImage.id as string };
}
