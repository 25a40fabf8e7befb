import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { TABLE_NAME } from '../../shared/aws';
import { CONDITION, num, type Item } from '../../shared/table/dynamo';
import { tenantKey } from '../tenants/tenants';
import { BillingBlockedError, SpendingLimitReachedError } from './errors';

/**
 * What a text costs and the one place spend changes. Cost = segments x the organization's rate.
 * Spend changes only inside the transactions that change a text's fate: the charge with the
 * `queued` message, the refund with the status change that fails it. So charges minus refunds is
 * always the cost of the texts that did not fail.
 */

/** Cents per segment when the organization row has no `smsRateCents` of its own. */
export const DEFAULT_SMS_RATE_CENTS = 1;

/** The organization's rate: the row's `smsRateCents` (set by the operator), else the default. */
export const smsRateCentsOf = (tenantItem: Item): number => {
  const rate = num(tenantItem.smsRateCents);
  return rate !== null && Number.isInteger(rate) && rate >= 0 ? rate : DEFAULT_SMS_RATE_CENTS;
};

// ---------- segments ----------

/** GSM 03.38 default alphabet: one septet each. */
const GSM7_BASIC = new Set(
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà',
);
/** GSM 03.38 extension table: escape + character, two septets each. */
const GSM7_EXTENDED = new Set('\f^{}\\[~]|€');

export type Encoding = 'GSM-7' | 'UCS-2';
export type SegmentCount = { encoding: Encoding; segments: number };

/** Single-message capacity and per-part capacity once split (the rest of a part is the UDH). */
const CAPACITY: Record<Encoding, { single: number; part: number }> = {
  'GSM-7': { single: 160, part: 153 },
  'UCS-2': { single: 70, part: 67 },
};

/**
 * How many segments a body is sent as. GSM-7 when every character is in the GSM alphabet
 * (extension characters count 2), otherwise UCS-2 counting UTF-16 code units (so an emoji counts 2).
 * A split never cuts an escape pair or a surrogate pair in half, as handsets and carriers do.
 */
export function segmentsOf(body: string): SegmentCount {
  const chars = Array.from(body); // code points, so a surrogate pair stays one unit of packing
  const gsm = chars.every((c) => GSM7_BASIC.has(c) || GSM7_EXTENDED.has(c));
  const encoding: Encoding = gsm ? 'GSM-7' : 'UCS-2';
  const widths = chars.map((c) => (gsm ? (GSM7_EXTENDED.has(c) ? 2 : 1) : c.length));
  const total = widths.reduce((sum, w) => sum + w, 0);
  const { single, part } = CAPACITY[encoding];
  if (total <= single) return { encoding, segments: 1 };
  let segments = 1;
  let used = 0;
  for (const width of widths) {
    if (used + width > part) {
      segments += 1;
      used = 0;
    }
    used += width;
  }
  return { encoding, segments };
}

export const costCentsOf = (body: string, rateCents: number): number => segmentsOf(body).segments * rateCents;

// ---------- charge and refund ----------

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** What the send path read from the organization row; the charge is guarded on the limit it saw. */
export type BillingSnapshot = { spendingLimitCents: number | null };

/**
 * The charge's share of the send transaction: billing status active and spend + cost within the
 * limit, checked and added in one conditional update of the organization row, so concurrent sends
 * can never overspend (DynamoDB serialises a transaction's items with every other write of them).
 * DynamoDB cannot add inside a condition, so the condition compares the current spend with
 * `limit - cost`, guarded on the limit being the one read (`chargeRefusal` tells a changed limit
 * from a reached one). The old row comes back on failure, to say which.
 */
export function chargeUpdate(tenantId: string, costCents: number, snapshot: BillingSnapshot): TransactItem {
  const limit = snapshot.spendingLimitCents;
  // A row that has never been charged has no spend (counted as 0): it may take the charge only if
  // the cost alone fits the limit, which is known here, so that branch is left out when it does not.
  const noSpendYet = limit !== null && limit - costCents >= 0 ? 'attribute_not_exists(#spend) OR ' : '';
  const withinLimit =
    limit === null
      ? '(attribute_not_exists(#limit) OR attribute_type(#limit, :nullType))'
      : `#limit = :limit AND (${noSpendYet}#spend <= :maxSpendBefore)`;
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: tenantKey(tenantId),
      UpdateExpression: 'ADD #spend :cost',
      ConditionExpression: `${CONDITION.rowExists} AND #billingStatus = :active AND ${withinLimit}`,
      ExpressionAttributeNames: { '#spend': 'spendCents', '#limit': 'spendingLimitCents', '#billingStatus': 'billingStatus' },
      ExpressionAttributeValues: {
        ':cost': costCents,
        ':active': 'active',
        ...(limit === null ? { ':nullType': 'NULL' } : { ':limit': limit, ':maxSpendBefore': limit - costCents }),
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/**
 * Why the organization row refused a charge, from the row it returned: billing blocked, limit
 * reached, or `limitChanged` (the operator changed it after our read: charge again with the new one).
 */
export function chargeRefusal(oldRow: Item | undefined, snapshot: BillingSnapshot): Error | { limitChanged: BillingSnapshot } {
  if (!oldRow) return new Error('charge: the organization row is missing');
  if (oldRow.billingStatus !== 'active') return new BillingBlockedError();
  const currentLimit = num(oldRow.spendingLimitCents);
  if (currentLimit === snapshot.spendingLimitCents) return new SpendingLimitReachedError();
  return { limitChanged: { spendingLimitCents: currentLimit } };
}

/**
 * Gives back the charge of a text that failed, in the same transaction as the status change that
 * fails it: the message's condition (it was not failed before) makes the refund happen once.
 */
export function refundUpdate(tenantId: string, costCents: number): TransactItem {
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: tenantKey(tenantId),
      UpdateExpression: 'ADD #spend :refund',
      ConditionExpression: CONDITION.rowExists,
      ExpressionAttributeNames: { '#spend': 'spendCents' },
      ExpressionAttributeValues: { ':refund': -costCents },
    },
  };
}
