import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { NotFoundError } from '../../shared/errors';
import { uuidv7, uuidv7LowerBound } from '../../shared/ids';
import { isE164 } from '../../shared/phone';
import { batchGetByKey } from '../../shared/table/batch-get';
import { CONDITION, isConditionalCheckFailed, num, str, type Item } from '../../shared/table/dynamo';
import { OWNER_SK, PREFIX, tenantPk, tenantScopedPk } from '../../shared/table/keys';
import { queryPage, type Page } from '../../shared/table/paging';
import { CHANGED_AT, ROW_TYPES } from '../../shared/table/row-types';
import { FIRST_ROW_SEQUENCE, withRowSequenceBump } from '../../shared/table/row-sequence';
import { LOST_RACE, optimisticRounds } from '../../shared/table/optimistic-rounds';
import { NamedTransaction } from '../../shared/table/named-transaction';
import { atSite } from '../../shared/table/round-site';
import {
  attributeOfItem,
  updateExpression,
  type Condition,
  type UpdateParts,
} from '../../shared/table/update-expression';
import { GSIS } from '../../shared/table/table-schema';
import { ensureContactForNumber } from '../contacts/contacts';
import { numberClaimKey } from '../contacts/contact-rows';
import { TERMINAL_CALL_STATUSES } from './call-statuses';
import type { Call, ListCallsInput } from './schemas';
import { roundLost } from '../../shared/table/rounds-lost';

/**
 * Calls. Read-only through the API; written by `recordCall` (a whole call at once: the operator's
 * `simulate call`) and by `upsertCallByProviderSid` (the carrier's status callbacks, one leg event
 * at a time). Ids are UUIDv7 from `startedAt`, so the id order is the time order the list
 * promises and `since` is a key condition.
 */
export const callKey = (tenantId: string, callId: string) => ({
  pk: tenantPk(tenantId),
  sk: `${PREFIX.call}${callId}`,
});

const byDirectionPk = (tenantId: string, direction: Call['direction']) =>
  tenantScopedPk(tenantId, PREFIX.callsByDirection, direction);

/** Upper bound of every call sort key: `~` sorts after all hex digits and `-`. */
const LAST_CALL_SK_SUFFIX = '~';

export function toItem(tenantId: string, call: Call): Item {
  return {
    ...callKey(tenantId, call.id),
    [GSIS.gsi1.partitionKey]: byDirectionPk(tenantId, call.direction),
    [GSIS.gsi1.sortKey]: `${PREFIX.call}${call.id}`,
    type: ROW_TYPES.call,
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
export function externalNumberOf(
  input: Pick<RecordCallInput, 'direction' | 'fromNumber' | 'toNumber' | 'isInternal'>,
): string | null {
  if (input.isInternal) return null;
  const number = input.direction === 'inbound' ? input.fromNumber : input.toNumber;
  return isE164(number) ? number : null;
}

/** The contact of the call's external party (auto-created when new), or null when there is none. */
async function contactOfCall(
  tenantId: string,
  call: Pick<RecordCallInput, 'direction' | 'fromNumber' | 'toNumber' | 'isInternal'>,
  at: Date,
): Promise<string | null> {
  const external = externalNumberOf(call);
  return external
    ? ensureContactForNumber(tenantId, external, call.direction === 'inbound' ? 'auto_inbound' : 'auto_outbound', at)
    : null;
}

/**
 * Records a call, making sure its external number has a contact (auto-created, `auto_inbound` or
 * `auto_outbound`, reusing whichever contact already holds the number).
 */
export async function recordCall(tenantId: string, input: RecordCallInput): Promise<Call> {
  const contactId = await contactOfCall(tenantId, input, input.startedAt);
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
  // A call recorded whole may be terminal at once: its insert is then the event (CHANGED_AT).
  const item = { ...toItem(tenantId, call), [CHANGED_AT]: Date.now(), ...FIRST_ROW_SEQUENCE };
  await dynamo.send(new PutCommand({ TableName: TABLE_NAME, Item: item, ConditionExpression: CONDITION.rowIsNew }));
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
      : useIndex
        ? { ...callKey(tenantId, input.cursor!), [GSIS.gsi1.partitionKey]: pk, [GSIS.gsi1.sortKey]: cursorSk }
        : callKey(tenantId, input.cursor!),
    fromItem,
    idOf: (call) => call.id,
  });
}

// ---------- calls from the carrier: one row per logical call, across its legs ----------

/** Provider call sid of the parent leg -> our call id, inside the tenant (sids stay internal). */
export const callSidKey = (tenantId: string, providerCallSid: string) => ({
  pk: tenantPk(tenantId),
  sk: `${PREFIX.callSid}${providerCallSid}`,
});

/** Outside every tenant: which organization a provider call belongs to (callbacks naming no number). */
export const callSidOwnerKey = (providerCallSid: string) => ({
  pk: `${PREFIX.callSidOwner}${providerCallSid}`,
  sk: OWNER_SK,
});

/** Consistent: the row may have been written a moment ago by a concurrent callback of the same call. */
export async function findCallIdByProviderSid(tenantId: string, providerCallSid: string): Promise<string | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: TABLE_NAME, Key: callSidKey(tenantId, providerCallSid), ConsistentRead: true }),
  );
  return typeof Item?.callId === 'string' ? Item.callId : undefined;
}

export async function findCallByProviderSid(tenantId: string, providerCallSid: string): Promise<Call | undefined> {
  const callId = await findCallIdByProviderSid(tenantId, providerCallSid);
  if (!callId) return undefined;
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: TABLE_NAME, Key: callKey(tenantId, callId), ConsistentRead: true }),
  );
  return Item ? fromItem(Item) : undefined;
}

export async function findTenantIdByProviderCallSid(providerCallSid: string): Promise<string | undefined> {
  const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: callSidOwnerKey(providerCallSid) }));
  return typeof Item?.tenantId === 'string' ? Item.tenantId : undefined;
}

/** queued < ringing < in-progress < terminal. A call only moves up; terminal is final. */
const TERMINAL_RANK = 3;
const PROGRESS_RANK: Record<string, number> = { queued: 0, initiated: 0, ringing: 1, 'in-progress': 2 };

export const isTerminalCallStatus = (status: string): boolean =>
  (TERMINAL_CALL_STATUSES as readonly string[]).includes(status);

export const callStatusRank = (status: string): number =>
  isTerminalCallStatus(status) ? TERMINAL_RANK : (PROGRESS_RANK[status] ?? 0);

/**
 * Whose end is the call's end. `parent`: the leg that reached the organization (a PSTN caller);
 * its children (agents, a transfer) come and go inside it. `child`: the softphone placed the
 * call, so the dialled leg's outcome (no-answer, busy, completed) is the call's.
 */
export type OutcomeLeg = 'parent' | 'child';

/** What one leg says the call is. A higher rank (a leg that knows more) replaces a lower one. */
export type CallClassification = {
  rank: number;
  direction: Call['direction'];
  isInternal: boolean;
  fromNumber: string;
  toNumber: string;
  outcomeLeg: OutcomeLeg;
};

/** One provider callback about one leg, in the call's terms. */
export type CallLegChange = {
  /** When the provider says it happened. */
  at: Date;
  classification: CallClassification;
  /** A non-terminal status (ringing, in-progress) of a leg that speaks for the call. */
  progress?: string;
  /** The far end picked up; the earliest answer stays. */
  answeredAt?: Date;
  /** The organization's person on the call, seen at `answeredAt` (else `at`); the earliest stays. */
  agentId?: string;
  end?: {
    status: string;
    durationSec: number | null;
    endedAt: Date;
    /** Only when the row says this kind of leg carries the outcome (see OutcomeLeg). */
    onlyIfOutcomeLeg?: OutcomeLeg;
    /** Ends with this instead when nobody answered (a softphone's own leg 'completes' either way). */
    unansweredStatus?: string;
  };
  /** Every external number the leg showed: each gets its auto-created contact. */
  externalNumbers: string[];
};

export type UpsertedCall = { callId: string; created: boolean };

/**
 * Applies one leg's callback to the call of `providerCallSid` (the parent leg's sid), creating
 * the call on the first callback of any of its legs. Every write is conditional on the row's own
 * state (ranks, earliest times) rather than on something read before (the call row is read only to
 * leave out the writes it would refuse: applyLegChange), so callbacks arriving twice, out of order or
 * concurrently converge on the same row and never move it backwards.
 */
export async function upsertCallByProviderSid(
  tenantId: string,
  providerCallSid: string,
  change: CallLegChange,
): Promise<UpsertedCall> {
  const numbers = [...new Set(change.externalNumbers.filter(isE164))];
  // The external numbers' claims and the call's sid row in one strongly consistent read. A first callback racing
  // this one may create the call after it: the create's condition on the sid row lets exactly one of them do it.
  const sidKey = callSidKey(tenantId, providerCallSid);
  const rowAt = await batchGetByKey([sidKey, ...numbers.map((n) => numberClaimKey(tenantId, n))], {
    consistentRead: true,
  });
  const contactId = await ensureContactsOf(tenantId, change, numbers, (n) => ({
    row: rowAt(numberClaimKey(tenantId, n)),
  }));
  const callId = rowAt(sidKey)?.callId;
  const known = typeof callId === 'string' ? callId : undefined;
  return atSite(LEG_SITE, () => applyCallback(tenantId, providerCallSid, change, contactId, known));
}

/** Where a callback's conditional writes of its call are made (shared/table/round-site.ts). */
const LEG_SITE = 'calls.leg';

async function applyCallback(
  tenantId: string,
  providerCallSid: string,
  change: CallLegChange,
  contactId: string | null,
  known: string | undefined,
): Promise<UpsertedCall> {
  if (known) {
    await applyLegChange(tenantId, known, change, contactId, false);
    return { callId: known, created: false };
  }
  // Two first callbacks of one call race here: the sid row's condition lets exactly one create it.
  const inserted = await insertCall(tenantId, providerCallSid, change, contactId);
  const created = inserted.kind === 'created';
  await applyLegChange(tenantId, inserted.callId, change, contactId, created);
  return { callId: inserted.callId, created };
}

/**
 * Contacts for every external number (`numbers`, their claims as read with the call's sid row); returns the one of
 * the classification's external party.
 */
async function ensureContactsOf(
  tenantId: string,
  change: CallLegChange,
  numbers: string[],
  claimRead: (number: string) => { row: Item | undefined },
): Promise<string | null> {
  const { classification: c, at } = change;
  const source = c.direction === 'inbound' ? 'auto_inbound' : 'auto_outbound';
  const ids = new Map(
    await Promise.all(
      numbers.map(async (n) => [n, await ensureContactForNumber(tenantId, n, source, at, claimRead(n))] as const),
    ),
  );
  const external = externalNumberOf(c);
  return external ? (ids.get(external) ?? (await contactOfCall(tenantId, c, at))) : null;
}

type Inserted = { kind: 'created' | 'exists'; callId: string };

/** The call, its sid row and its owner row in one transaction: two first callbacks make one call. */
async function insertCall(
  tenantId: string,
  providerCallSid: string,
  change: CallLegChange,
  contactId: string | null,
): Promise<Inserted> {
  const call = firstCallOf(change, contactId);
  const refusal = await new NamedTransaction<'callSid' | 'sidOwner' | 'call'>('calls.insert')
    .add('callSid', {
      Put: {
        TableName: TABLE_NAME,
        Item: { ...callSidKey(tenantId, providerCallSid), type: 'callSid', callId: call.id },
        ConditionExpression: CONDITION.rowIsNew,
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    })
    .add('sidOwner', {
      Put: {
        TableName: TABLE_NAME,
        Item: { ...callSidOwnerKey(providerCallSid), type: 'callSidOwner', tenantId },
        ConditionExpression: `${CONDITION.rowIsNew} OR tenantId = :tenantId`,
        ExpressionAttributeValues: { ':tenantId': tenantId },
      },
    })
    .add('call', {
      Put: {
        TableName: TABLE_NAME,
        Item: { ...firstCallItem(tenantId, providerCallSid, call, change), ...FIRST_ROW_SEQUENCE },
        ConditionExpression: CONDITION.rowIsNew,
      },
    })
    .write();
  if (!refusal) return { kind: 'created', callId: call.id };
  const existing = refusal.failed('callSid')?.item;
  if (existing) {
    roundLost('calls.insert'); // another first callback of the call made it
    return { kind: 'exists', callId: existing.callId as string };
  }
  if (refusal.failed('sidOwner'))
    throw new Error('upsertCallByProviderSid: this provider call belongs to another organization', {
      cause: refusal.error,
    });
  throw refusal.error;
}

/** The call as its first callback knows it; the later facts (answer, end, duration) come by applyLegChange. */
function firstCallOf(change: CallLegChange, contactId: string | null): Call {
  const { classification: c } = change;
  // The earliest instant this callback knows of (a child's `completed` implies its earlier answer).
  const startedAt = change.answeredAt && change.answeredAt < change.at ? change.answeredAt : change.at;
  return {
    id: uuidv7(startedAt),
    direction: c.direction,
    fromNumber: c.fromNumber,
    toNumber: c.toNumber,
    status: change.progress ?? 'queued',
    startedAt: startedAt.toISOString(),
    answeredAt: null,
    endedAt: null,
    durationSec: null,
    isInternal: c.isInternal,
    agentId: null,
    contactId,
  };
}

/**
 * The new call's row with the ranks later callbacks compare against. Unknown facts are absent
 * rather than null, so "not yet known" is `attribute_not_exists`.
 */
function firstCallItem(tenantId: string, providerCallSid: string, call: Call, change: CallLegChange): Item {
  return Object.fromEntries(
    Object.entries({
      ...toItem(tenantId, call),
      statusRank: callStatusRank(call.status),
      classRank: change.classification.rank,
      outcomeLeg: change.classification.outcomeLeg,
      providerCallSid,
    }).filter(([, v]) => v !== null),
  );
}

/**
 * Each fact is its own conditional update: a failed condition means "already known or newer". A known call's row is
 * read first (strongly consistent, one read) and a fact the row already refuses is not written: each condition, once
 * false, stays false (ranks only rise, the earliest times only fall, a terminal status is final), so the write would
 * be refused, at a write's price and a trip, as surely as it is skipped. A callback in order (most are) writes only
 * what it adds; the conditions still guard the writes that go, against a concurrent callback.
 */
async function applyLegChange(
  tenantId: string,
  callId: string,
  change: CallLegChange,
  contactId: string | null,
  fresh: boolean,
): Promise<void> {
  const key = callKey(tenantId, callId);
  const row = fresh ? undefined : await readCallRow(key);
  // True unless the row as read refuses the fact's condition (a missing row refuses every one).
  const mayWrite = (passes: (row: Item) => boolean) => fresh || (row !== undefined && passes(row));
  if (!fresh) {
    const { rank } = change.classification;
    if (mayWrite((r) => below(r.classRank, rank))) {
      const classified = classificationUpdate(tenantId, change.classification, contactId);
      await updateIf(key, classified, { expression: '#classRank < :rank', values: { ':rank': rank } });
    }
    const progressRank = change.progress ? callStatusRank(change.progress) : undefined;
    if (change.progress && progressRank !== undefined && mayWrite((r) => below(r.statusRank, progressRank))) {
      await updateIf(
        key,
        { set: { status: change.progress, statusRank: progressRank } },
        { expression: '#statusRank < :rank', values: { ':rank': progressRank } },
      );
    }
  }
  if (change.answeredAt) {
    const at = change.answeredAt.toISOString();
    const answered =
      mayWrite((r) => earlier(r, 'answeredAt', at)) &&
      (await updateIfReturning(
        key,
        { set: { answeredAt: at } },
        {
          expression: `${CONDITION.rowExists} AND (attribute_not_exists(#answeredAt) OR #answeredAt > :at)`,
          values: { ':at': at },
        },
      ));
    // The call had ended as unanswered before this (concurrent) proof of an answer arrived: the
    // row takes the status the provider reported. Terminal to terminal, so no second event. Only
    // then: once the answer is written, no unanswered ending can land (its condition needs none).
    if (answered && 'statusIfAnswered' in answered) {
      await updateIf(
        key,
        { set: { status: attributeOfItem('statusIfAnswered') }, remove: ['statusIfAnswered'] },
        { expression: 'attribute_exists(#statusIfAnswered)' },
      );
    }
  }
  if (change.agentId) {
    const at = (change.answeredAt ?? change.at).toISOString();
    if (mayWrite((r) => earlier(r, 'agentAt', at)))
      await updateIf(
        key,
        { set: { agentId: change.agentId, agentAt: at } },
        {
          expression: `${CONDITION.rowExists} AND (attribute_not_exists(#agentAt) OR #agentAt > :at)`,
          values: { ':at': at },
        },
      );
  }
  const end = change.end;
  if (end && mayWrite((r) => below(r.statusRank, TERMINAL_RANK) && outcomeLegMatches(r, end)))
    await endCall(key, end, row);
}

/** A known call's row, strongly consistent (the facts skipped are judged on it). */
async function readCallRow(key: ReturnType<typeof callKey>): Promise<Item | undefined> {
  const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: key, ConsistentRead: true }));
  return Item;
}

/** `#outcomeLeg = :outcomeLeg` when the end names its leg, as DynamoDB reads it. */
const outcomeLegMatches = (row: Item, end: NonNullable<CallLegChange['end']>): boolean =>
  !end.onlyIfOutcomeLeg || row.outcomeLeg === end.onlyIfOutcomeLeg;

/** `#rank < :rank` as DynamoDB reads it: false when the attribute is missing or not a number. */
const below = (value: unknown, rank: number): boolean => typeof value === 'number' && value < rank;

/** `attribute_not_exists(#name) OR #name > :at` as DynamoDB reads it. */
const earlier = (row: Item, name: string, at: string): boolean =>
  !(name in row) || (typeof row[name] === 'string' && (row[name] as string) > at);

function classificationUpdate(tenantId: string, c: CallClassification, contactId: string | null): UpdateParts {
  return {
    set: {
      direction: c.direction,
      isInternal: c.isInternal,
      fromNumber: c.fromNumber,
      toNumber: c.toNumber,
      [GSIS.gsi1.partitionKey]: byDirectionPk(tenantId, c.direction),
      classRank: c.rank,
      outcomeLeg: c.outcomeLeg,
      contactId: contactId ?? undefined,
    },
    remove: contactId ? [] : ['contactId'],
  };
}

/**
 * The terminal status lands once (`statusRank < terminal`), which is what makes the webhook
 * router emit `call.completed` exactly once. "Answered or not" is decided by the row itself.
 */
async function endCall(
  key: ReturnType<typeof callKey>,
  end: NonNullable<CallLegChange['end']>,
  row?: Item,
): Promise<void> {
  const at = end.endedAt.toISOString();
  const write = (status: string, answered?: boolean) =>
    updateIf(
      key,
      {
        set: {
          status,
          statusRank: TERMINAL_RANK,
          endedAt: at,
          // The terminal status is the call.completed event: its time, to the millisecond.
          [CHANGED_AT]: Date.now(),
          durationSec: end.durationSec ?? undefined,
          statusIfAnswered: answered === false ? end.status : undefined,
        },
      },
      {
        expression: [
          '#statusRank < :terminal',
          ...(end.onlyIfOutcomeLeg ? ['#outcomeLeg = :outcomeLeg'] : []),
          ...(answered === undefined
            ? []
            : [answered ? 'attribute_exists(#answeredAt)' : 'attribute_not_exists(#answeredAt)']),
        ].join(' AND '),
        names: {
          '#statusRank': 'statusRank',
          ...(end.onlyIfOutcomeLeg && { '#outcomeLeg': 'outcomeLeg' }),
          ...(answered !== undefined && { '#answeredAt': 'answeredAt' }),
        },
        values: { ':terminal': TERMINAL_RANK, ...(end.onlyIfOutcomeLeg && { ':outcomeLeg': end.onlyIfOutcomeLeg }) },
      },
    );
  const unanswered = end.unansweredStatus;
  if (!unanswered) {
    await write(end.status);
    return;
  }
  // Both writes refused: the row already knows its end (a repeated callback), or an answer landed
  // between the two, which one more round decides. Refused twice, it is the former. The one the row
  // as read says will pass goes first (the two conditions exclude each other).
  const answeredFirst = row === undefined || 'answeredAt' in row;
  const asAnswered = () => write(end.status, true);
  const asUnanswered = () => write(unanswered, false);
  await optimisticRounds(END_ROUNDS, async (round) =>
    (answeredFirst ? (await asAnswered()) || (await asUnanswered()) : (await asUnanswered()) || (await asAnswered())) ||
    round === END_ROUNDS.rounds - 1
      ? true
      : LOST_RACE,
  );
}

/** Rounds of ending a call whose answer may land between the "answered" and the "not answered" write. */
const END_ROUNDS = { what: 'end a call', rounds: 2, site: 'calls.end' };

/** True when written; false when the condition said the row already knows as much or more. */
async function updateIf(key: ReturnType<typeof callKey>, parts: UpdateParts, condition: Condition): Promise<boolean> {
  return (await updateIfReturning(key, parts, condition)) !== undefined;
}

/** The row as the write left it; undefined when the condition said the row already knows as much or more. */
async function updateIfReturning(
  key: ReturnType<typeof callKey>,
  parts: UpdateParts,
  condition: Condition,
): Promise<Item | undefined> {
  try {
    // Every fact a call row learns may show in its call.completed event: each write counts in its sequence number.
    const { Attributes } = await dynamo.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: key,
        ...updateExpression(withRowSequenceBump(parts), condition),
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Attributes ?? {};
  } catch (err) {
    if (isConditionalCheckFailed(err)) return undefined;
    throw err;
  }
}
