import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from './aws';
import { CONDITION, num, str, type Item } from './dynamo';
import { NotFoundError } from './errors';
import { uuidv7, uuidv7LowerBound } from './ids';
import { PREFIX, tenantPk, tenantScopedPk } from './keys';
import { queryPage, type Page } from './paging';
import { isE164 } from './phone';
import { ensureContactForNumber } from './contacts';
import type { Call, ListCallsInput } from './schemas';
import { GSIS } from './table-schema';

/**
 * Calls. Read-only through the API; written by `recordCall`, which the carrier callbacks and the
 * operator's `simulate call` both use. Ids are UUIDv7 from `startedAt`, so the id order is the
 * time order the list promises and `since` is a key condition.
 */
export const callKey = (tenantId: string, callId: string) => ({ pk: tenantPk(tenantId), sk: `${PREFIX.call}${callId}` });

const byDirectionPk = (tenantId: string, direction: Call['direction']) =>
  tenantScopedPk(tenantId, PREFIX.callsByDirection, direction);

/** Upper bound of every call sort key: `~` sorts after all hex digits and `-`. */
const LAST_CALL_SK_SUFFIX = '~';

export function toItem(tenantId: string, call: Call): Item {
  return {
    ...callKey(tenantId, call.id),
    [GSIS.gsi1.partitionKey]: byDirectionPk(tenantId, call.direction),
    [GSIS.gsi1.sortKey]: `${PREFIX.call}${call.id}`,
    type: 'call',
    tenantId,
    ...call,
  };
}

export function fromItem(item: Item): Call {
  return {
    id: item.id as string,
    direction: item.direction as Call['direction'],
    fromNumber: item.fromNumber as string,
    toNumber: item.toNumber as string,
    status: item.status as string,
    startedAt: item.startedAt as string,
    answeredAt: str(item.answeredAt),
    endedAt: str(item.endedAt),
    durationSec: num(item.durationSec),
    isInternal: item.isInternal === true,
    agentId: str(item.agentId),
    contactId: str(item.contactId),
  };
}

export type RecordCallInput = {
  direction: Call['direction'];
  fromNumber: string;
  toNumber: string;
  status: string;
  startedAt: Date;
  answeredAt?: Date | null;
  endedAt?: Date | null;
  durationSec?: number | null;
  isInternal?: boolean;
  agentId?: string | null;
};

/** The external party of a call, when there is one on the public network. */
export function externalNumberOf(input: Pick<RecordCallInput, 'direction' | 'fromNumber' | 'toNumber' | 'isInternal'>): string | null {
  if (input.isInternal) return null;
  const number = input.direction === 'inbound' ? input.fromNumber : input.toNumber;
  return isE164(number) ? number : null;
}

/**
 * Records a call, making sure its external number has a contact (auto-created, `auto_inbound` or
 * `auto_outbound`, reusing whichever contact already holds the number).
 */
export async function recordCall(tenantId: string, input: RecordCallInput): Promise<Call> {
  const external = externalNumberOf(input);
  const contactId = external
    ? await ensureContactForNumber(tenantId, external, input.direction === 'inbound' ? 'auto_inbound' : 'auto_outbound', input.startedAt)
    : null;
  const call: Call = {
    id: uuidv7(input.startedAt),
    direction: input.direction,
    fromNumber: input.fromNumber,
    toNumber: input.toNumber,
    status: input.status,
    startedAt: input.startedAt.toISOString(),
    answeredAt: input.answeredAt?.toISOString() ?? null,
    endedAt: input.endedAt?.toISOString() ?? null,
    durationSec: input.durationSec ?? null,
    isInternal: input.isInternal ?? false,
    agentId: input.agentId ?? null,
    contactId,
  };
  await dynamo.send(new PutCommand({ TableName: TABLE_NAME, Item: toItem(tenantId, call), ConditionExpression: CONDITION.rowIsNew }));
  return call;
}

export async function getCall(tenantId: string, callId: string): Promise<Call> {
  const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: callKey(tenantId, callId) }));
  if (!Item) throw new NotFoundError('Call');
  return fromItem(Item);
}

/** GET /calls: newest first; `direction` picks the per-direction index, `since` bounds the key range. */
export async function listCalls(tenantId: string, input: ListCallsInput): Promise<Page<Call>> {
  const useIndex = input.direction !== undefined;
  const pk = useIndex ? byDirectionPk(tenantId, input.direction!) : tenantPk(tenantId);
  const lower = `${PREFIX.call}${input.since ? uuidv7LowerBound(Date.parse(input.since)) : ''}`;
  const upper = `${PREFIX.call}${LAST_CALL_SK_SUFFIX}`;
  const cursorSk = input.cursor ? `${PREFIX.call}${input.cursor}` : undefined;
  // A cursor older than `since` has nothing after it (and DynamoDB refuses a start key outside the range).
  if (cursorSk && cursorSk < lower) return { items: [], nextCursor: null };
  const skName = useIndex ? GSIS.gsi1.sortKey : 'sk';
  return queryPage({
    query: {
      TableName: TABLE_NAME,
      ...(useIndex && { IndexName: GSIS.gsi1.indexName }),
      KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :lower AND :upper',
      ExpressionAttributeNames: { '#pk': useIndex ? GSIS.gsi1.partitionKey : 'pk', '#sk': skName },
      ExpressionAttributeValues: { ':pk': pk, ':lower': lower, ':upper': upper },
      ScanIndexForward: false,
    },
    limit: input.limit,
    startKey: !cursorSk
      ? undefined
      : (useIndex
        ? { ...callKey(tenantId, input.cursor!), [GSIS.gsi1.partitionKey]: pk, [GSIS.gsi1.sortKey]: cursorSk }
        : callKey(tenantId, input.cursor!)),
    fromItem,
    idOf: (call) => call.id,
  });
}
