import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from './aws';
import { CONDITION, isConditionalCheckFailed, nowIso, num, str, type Item } from './dynamo';
import { NotFoundError } from './errors';
import { uuidv7 } from './ids';
import { TENANT_SK, tenantPk } from './keys';
import type { Plan } from './scopes';

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
  spendCents: number;
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
};

export type TenantUpdate = Partial<Omit<TenantInput, 'numbers'>> & { addNumbers?: string[]; approveHosts?: string[] };

export const tenantKey = (tenantId: string) => ({ pk: tenantPk(tenantId), sk: TENANT_SK });

export const slugify = (name: string): string =>
  name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60) || 'org';

export function toItem(tenant: Tenant): Item {
  return { ...tenantKey(tenant.id), type: 'tenant', ...tenant };
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
    spendCents: num(item.spendCents) ?? 0,
    approvedHosts: (item.approvedHosts as string[] | undefined) ?? [],
    createdAt: item.createdAt as string,
    updatedAt: item.updatedAt as string,
  };
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
    spendCents: 0,
    approvedHosts: [],
    createdAt: at,
    updatedAt: at,
  };
  await dynamo.send(new PutCommand({ TableName: TABLE_NAME, Item: toItem(tenant), ConditionExpression: CONDITION.rowIsNew }));
  return tenant;
}

export async function getTenant(tenantId: string): Promise<Tenant | undefined> {
  const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: tenantKey(tenantId) }));
  return Item ? fromItem(Item) : undefined;
}

/** Applies an operator's change (the portal's job) in one conditional update. */
export async function updateTenant(tenantId: string, change: TenantUpdate, now = new Date()): Promise<Tenant> {
  const current = await getTenant(tenantId);
  if (!current) throw new NotFoundError('Tenant');
  const next: Tenant = {
    ...current,
    ...(change.name !== undefined && { name: change.name }),
    ...(change.slug !== undefined && { slug: change.slug }),
    ...(change.plan !== undefined && { plan: change.plan }),
    ...(change.smsNumber !== undefined && { smsNumber: change.smsNumber }),
    ...(change.billingStatus !== undefined && { billingStatus: change.billingStatus }),
    ...(change.spendingLimitCents !== undefined && { spendingLimitCents: change.spendingLimitCents }),
    numbers: [...new Set([...current.numbers, ...(change.addNumbers ?? []), ...(change.smsNumber ? [change.smsNumber] : [])])],
    approvedHosts: [...new Set([...current.approvedHosts, ...(change.approveHosts ?? []).map((h) => h.toLowerCase())])],
    updatedAt: nowIso(now),
  };
  // Spend is changed only by sends; everything else is the operator's. Guarding on updatedAt
  // makes a concurrent operator change fail loudly instead of being silently overwritten.
  const fields = ['name', 'slug', 'plan', 'smsNumber', 'billingStatus', 'spendingLimitCents', 'numbers', 'approvedHosts', 'updatedAt'] as const;
  try {
    await dynamo.send(
      new UpdateCommand({
        TableName: TABLE_NAME,
        Key: tenantKey(tenantId),
        UpdateExpression: `SET ${fields.map((f) => `#${f} = :${f}`).join(', ')}`,
        ConditionExpression: `${CONDITION.rowExists} AND #updatedAt = :previousUpdatedAt`,
        ExpressionAttributeNames: Object.fromEntries(fields.map((f) => [`#${f}`, f])),
        ExpressionAttributeValues: {
          ...Object.fromEntries(fields.map((f) => [`:${f}`, next[f]])),
          ':previousUpdatedAt': current.updatedAt,
        },
      }),
    );
  } catch (err) {
    if (isConditionalCheckFailed(err)) throw new Error('The organization changed concurrently; try again', { cause: err });
    throw err;
  }
  return next;
}
