import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { NotFoundError, ValidationError } from '../../shared/errors';
import { uuidv7 } from '../../shared/ids';
import { isE164 } from '../../shared/phone';
import { CONDITION, nowIso, num, str, type Item, type TransactItem } from '../../shared/table/dynamo';
import { OWNER_SK, PREFIX, TENANT_SK, tenantPk } from '../../shared/table/keys';
import { NamedTransaction } from '../../shared/table/named-transaction';
import { batchGetByKey } from '../../shared/table/batch-get';
import { queryAll } from '../../shared/table/query-all';
import { GSIS } from '../../shared/table/table-schema';
import { NumberTakenError } from './errors';
import {
  DEFAULT_QUIET_HOURS,
  type OrganizationQuietHours,
  parseQuietHoursWindow,
  QUIET_HOURS_WINDOW_RULE,
  quietHoursOf,
} from './quiet-hours-policy';
import type { Plan } from './scopes';
import { DEFAULT_SMS_RATE_CENTS, isSmsRateCents, SMS_RATE_CENTS_RULE } from './sms-rate';
import { roundLost } from '../../shared/table/rounds-lost';

export const BILLING_STATUSES = ['active', 'past_due', 'suspended'] as const;
export type BillingStatus = (typeof BILLING_STATUSES)[number];

/** An organization: the row every other row of its data hangs under. */
export type Tenant = {
  id: string;
  name: string;
  slug: string;
  plan: Plan;
  smsNumber: string | null;
  numbers: string[];
  billingStatus: BillingStatus;
  spendingLimitCents: number | null;
  /** What one segment of a text costs the organization (./sms-rate.ts). */
  smsRateCents: number;
  /** Whether texts wait for (or are refused outside) their recipient's local hours (./quiet-hours-policy.ts). */
  quietHours: OrganizationQuietHours;
  approvedHosts: string[];
  createdAt: string;
  updatedAt: string;
};

export type TenantInput = {
  name: string;
  slug?: string;
  plan?: Plan;
  smsNumber?: string | null;
  numbers?: string[];
  billingStatus?: BillingStatus;
  spendingLimitCents?: number | null;
  smsRateCents?: number;
  /** Any part left out keeps its current value (off, all texts, 08:00-21:00 for a new organization). */
  quietHours?: Partial<OrganizationQuietHours>;
};

export type TenantUpdate = Partial<Omit<TenantInput, 'numbers'>> & { addNumbers?: string[]; approveHosts?: string[] };

export const tenantKey = (tenantId: string) => ({ pk: tenantPk(tenantId), sk: TENANT_SK });

/** Raised by every change of the spending limit (./billing-policy.ts reads it, texting's spend shards follow it). */
export const LIMIT_VERSION_ATTRIBUTE = 'limitVersion';

export const slugify = (name: string): string =>
  name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60) || 'org';

/**
 * The gsi3 entry that lists every organization for the operator (`tenant list`), in creation order
 * (ids are time-ordered). One index partition for all of them: written only when an organization
 * is created or changed, read only by the operator. Older rows get it at their next update.
 */
const allTenantsListing = (tenantId: string) => ({
  [GSIS.gsi3.partitionKey]: PREFIX.tenants,
  [GSIS.gsi3.sortKey]: tenantId,
});

export function toItem(tenant: Tenant): Item {
  return { ...tenantKey(tenant.id), ...allTenantsListing(tenant.id), type: 'tenant', ...tenant };
}

export function fromItem(item: Item): Tenant {
  return {
    id: item.id as string,
    name: item.name as string,
    slug: item.slug as string,
    plan: item.plan as Plan,
    smsNumber: str(item.smsNumber),
    numbers: (item.numbers as string[] | undefined) ?? [],
    billingStatus: item.billingStatus as BillingStatus,
    spendingLimitCents: num(item.spendingLimitCents),
    smsRateCents: item.smsRateCents as number,
    quietHours: quietHoursOf(item),
    approvedHosts: (item.approvedHosts as string[] | undefined) ?? [],
    createdAt: item.createdAt as string,
    updatedAt: item.updatedAt as string,
  };
}

/** The operator's rate, refused unless it is one (the CLI checks it first, with the same rule). */
function checkedSmsRate(smsRateCents: number): number {
  if (!isSmsRateCents(smsRateCents)) throw new ValidationError(`smsRateCents: ${SMS_RATE_CENTS_RULE}`);
  return smsRateCents;
}

/** The operator's quiet hours, refused unless the window is one (the CLI checks it first, with the same rule). */
function checkedQuietHours(policy: OrganizationQuietHours): OrganizationQuietHours {
  if (!parseQuietHoursWindow(`${policy.window.start}-${policy.window.end}`))
    throw new ValidationError(`quietHours.window: ${QUIET_HOURS_WINDOW_RULE}`);
  return policy;
}

export async function createTenant(input: TenantInput, now = new Date()): Promise<Tenant> {
  const at = nowIso(now);
  const numbers = [...new Set([...(input.numbers ?? []), ...(input.smsNumber ? [input.smsNumber] : [])])];
  const tenant: Tenant = {
    id: uuidv7(now),
    name: input.name,
    slug: input.slug ?? slugify(input.name),
    plan: input.plan ?? 'pro',
    smsNumber: input.smsNumber ?? null,
    numbers,
    billingStatus: input.billingStatus ?? 'active',
    spendingLimitCents: input.spendingLimitCents ?? null,
    smsRateCents: checkedSmsRate(input.smsRateCents ?? DEFAULT_SMS_RATE_CENTS),
    quietHours: checkedQuietHours({ ...DEFAULT_QUIET_HOURS, ...input.quietHours }),
    approvedHosts: [],
    createdAt: at,
    updatedAt: at,
  };
  await writeWithNumbers(
    { Put: { TableName: TABLE_NAME, Item: toItem(tenant), ConditionExpression: CONDITION.rowIsNew } },
    tenant,
  );
  return tenant;
}

/** `consistent`: a strongly consistent read (the authorizer's, right after a plan change flushed its cache). */
export async function getTenant(
  tenantId: string,
  { consistent = false }: { consistent?: boolean } = {},
): Promise<Tenant | undefined> {
  const { Item } = await dynamo.send(
    new GetCommand({ TableName: TABLE_NAME, Key: tenantKey(tenantId), ...(consistent && { ConsistentRead: true }) }),
  );
  return Item ? fromItem(Item) : undefined;
}

/** Every organization, oldest first: the operator's listing (an index query, never a scan). */
export async function listTenants(): Promise<Tenant[]> {
  const items = await queryAll({
    IndexName: GSIS.gsi3.indexName,
    KeyConditionExpression: '#pk = :pk',
    ExpressionAttributeNames: { '#pk': GSIS.gsi3.partitionKey },
    ExpressionAttributeValues: { ':pk': PREFIX.tenants },
  });
  return items.map(fromItem);
}

/** The organization as an operator's change leaves it (nothing written yet). */
function changedTenant(current: Tenant, change: TenantUpdate, now: Date): Tenant {
  return {
    ...current,
    ...(change.name !== undefined && { name: change.name }),
    ...(change.slug !== undefined && { slug: change.slug }),
    ...(change.plan !== undefined && { plan: change.plan }),
    ...(change.smsNumber !== undefined && { smsNumber: change.smsNumber }),
    ...(change.billingStatus !== undefined && { billingStatus: change.billingStatus }),
    ...(change.spendingLimitCents !== undefined && { spendingLimitCents: change.spendingLimitCents }),
    ...(change.smsRateCents !== undefined && { smsRateCents: checkedSmsRate(change.smsRateCents) }),
    quietHours: checkedQuietHours({ ...current.quietHours, ...change.quietHours }),
    numbers: [
      ...new Set([...current.numbers, ...(change.addNumbers ?? []), ...(change.smsNumber ? [change.smsNumber] : [])]),
    ],
    approvedHosts: [...new Set([...current.approvedHosts, ...(change.approveHosts ?? []).map((h) => h.toLowerCase())])],
    updatedAt: nowIso(now),
  };
}

// Spend is changed only by sends (on its shards: texting/spend.ts); everything else is the
// operator's. A new rate prices the texts sent from then on; a text keeps the cost it was charged (its refund too).
const OPERATOR_FIELDS = [
  'name',
  'slug',
  'plan',
  'smsNumber',
  'billingStatus',
  'spendingLimitCents',
  'smsRateCents',
  'quietHours',
  'numbers',
  'approvedHosts',
  'updatedAt',
] as const;

/**
 * The update of the organization row from `current` to `next`. Guarding on updatedAt makes a concurrent operator
 * change fail loudly instead of being silently overwritten. A change of the limit raises its version, which is how
 * the spend shards learn they must be settled again (texting/spend.ts).
 */
function tenantRowUpdate(current: Tenant, next: Tenant): TransactItem {
  const fields = OPERATOR_FIELDS;
  const limitChanges = next.spendingLimitCents !== current.spendingLimitCents;
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: tenantKey(current.id),
      UpdateExpression:
        `SET ${fields.map((f) => `#${f} = :${f}`).join(', ')}` + (limitChanges ? ' ADD #limitVersion :one' : ''),
      ConditionExpression: `${CONDITION.rowExists} AND #updatedAt = :previousUpdatedAt`,
      ExpressionAttributeNames: {
        ...Object.fromEntries(fields.map((f) => [`#${f}`, f])),
        ...(limitChanges && { '#limitVersion': LIMIT_VERSION_ATTRIBUTE }),
      },
      ExpressionAttributeValues: {
        ...(limitChanges && { ':one': 1 }),
        ...Object.fromEntries(fields.map((f) => [`:${f}`, next[f]])),
        ':previousUpdatedAt': current.updatedAt,
      },
    },
  };
}

/** Applies an operator's change (the portal's job) in one conditional update. */
export async function updateTenant(tenantId: string, change: TenantUpdate, now = new Date()): Promise<Tenant> {
  const current = await getTenant(tenantId);
  if (!current) throw new NotFoundError('Tenant');
  const next = changedTenant(current, change, now);
  try {
    await writeWithNumbers(tenantRowUpdate(current, next), next);
  } catch (err) {
    if (err instanceof TenantRowConflict)
      throw new Error('The organization changed concurrently; try again', { cause: err });
    throw err;
  }
  return next;
}

// ---------- number -> organization lookup rows (carrier callbacks) ----------

/**
 * `NUMBER_OWNER#<e164>` -> tenantId: how a carrier callback, which names only phone numbers,
 * finds its organization. Outside every tenant partition by necessity, like the API-key rows.
 */
export const numberOwnerKey = (number: string) => ({ pk: `${PREFIX.numberOwner}${number}`, sk: OWNER_SK });

/** The organization that registered this number, if any. */
export async function findTenantIdByNumber(number: string): Promise<string | undefined> {
  const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: numberOwnerKey(number) }));
  return typeof Item?.tenantId === 'string' ? Item.tenantId : undefined;
}

/**
 * The organizations that registered these numbers, in one read (a carrier callback asks for both of a leg's
 * numbers): one BatchGetItem for several, the GetItem of `findTenantIdByNumber` for one. Numbers no one
 * registered are absent.
 */
export async function findTenantIdsByNumbers(asked: readonly string[]): Promise<Map<string, string>> {
  const numbers = [...new Set(asked)]; // BatchGetItem refuses a key asked twice
  const owners = new Map<string, string>();
  if (numbers.length === 1) {
    const tenantId = await findTenantIdByNumber(numbers[0]);
    if (tenantId) owners.set(numbers[0], tenantId);
    return owners;
  }
  const rowAt = await batchGetByKey(numbers.map(numberOwnerKey));
  for (const number of numbers) {
    const tenantId = rowAt(numberOwnerKey(number))?.tenantId;
    if (typeof tenantId === 'string') owners.set(number, tenantId);
  }
  return owners;
}

/** One transaction holds the tenant row and one lookup row per number (the rest of 100 items). */
const MAX_NUMBERS = 99;

class TenantRowConflict extends Error {}

/**
 * Writes the tenant row and (re)asserts a lookup row for each of its numbers in one transaction,
 * so a number is never registered without its owner row, nor claimed by two organizations under
 * concurrency.
 */
async function writeWithNumbers(tenantWrite: TransactItem, tenant: Tenant): Promise<void> {
  const invalid = tenant.numbers.find((n) => !isE164(n));
  if (invalid !== undefined)
    throw new ValidationError('numbers: each must be an E.164 phone number such as +14155550123');
  if (tenant.numbers.length > MAX_NUMBERS)
    throw new ValidationError(`numbers: at most ${MAX_NUMBERS} per organization`);
  // One name per number, so a refusal names the number another organization holds.
  const transaction = new NamedTransaction<'tenant' | `number ${string}`>(TENANT_SITE).add('tenant', tenantWrite);
  for (const number of tenant.numbers) {
    transaction.add(`number ${number}`, {
      Put: {
        TableName: TABLE_NAME,
        Item: { ...numberOwnerKey(number), type: 'numberOwner', tenantId: tenant.id, number },
        ConditionExpression: 'attribute_not_exists(pk) OR tenantId = :tenantId',
        ExpressionAttributeValues: { ':tenantId': tenant.id },
      },
    });
  }
  const refusal = await transaction.write();
  if (!refusal) return;
  if (refusal.failed('tenant')) {
    roundLost(TENANT_SITE); // the row changed since it was read: answered as a conflict, to try again
    throw new TenantRowConflict('tenant row condition failed', { cause: refusal.error });
  }
  const taken = tenant.numbers.find((number) => refusal.failed(`number ${number}`));
  if (taken !== undefined) throw new NumberTakenError(taken);
  throw refusal.error;
}

/** Where an organization row is written with its numbers (shared/table/rounds-lost.ts). */
const TENANT_SITE = 'tenants.write';
