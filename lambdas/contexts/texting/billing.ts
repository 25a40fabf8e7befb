import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { CONDITION, isConditionalCheckFailed, num, type Item } from '../../shared/table/dynamo';
import { tenantKey } from '../tenants/tenants';
import { BillingBlockedError, SpendingLimitReachedError } from './errors';

/**
 * What a text costs and the one place spend changes. Cost = segments x the organization's rate.
 * The check (billing status, spending limit) and the charge are one conditional UpdateItem on the
 * organization row, so concurrent sends can never overspend: DynamoDB serialises updates of an item.
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

/** What the send path read from the organization row; the charge is guarded on the limit it saw. */
export type BillingSnapshot = { spendingLimitCents: number | null };

/**
 * Charges a text to the organization: billing status active and spend + cost within the limit,
 * checked and added in one conditional update. DynamoDB cannot add inside a condition, so the
 * condition compares the current spend with `limit - cost`, guarded on the limit being the one
 * read; if the operator changed the limit meanwhile the charge is tried again with the new one.
 */
export async function chargeForText(tenantId: string, costCents: number, snapshot: BillingSnapshot): Promise<void> {
  let limit = snapshot.spendingLimitCents;
  for (let round = 0; round < 3; round += 1) {
    const withinLimit =
      limit === null
        ? '(attribute_not_exists(#limit) OR attribute_type(#limit, :nullType))'
        : '#limit = :limit AND (attribute_not_exists(#spend) OR #spend <= :maxSpendBefore)';
    try {
      await dynamo.send(
        new UpdateCommand({
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
        }),
      );
      return;
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw err;
      const current = oldItemOf(err);
      if (!current) throw new Error('chargeForText: the organization row is missing', { cause: err });
      if (current.billingStatus !== 'active') throw new BillingBlockedError();
      const currentLimit = num(current.spendingLimitCents);
      if (currentLimit === limit) throw new SpendingLimitReachedError();
      limit = currentLimit; // the operator changed the limit between our read and the charge
    }
  }
  throw new Error('chargeForText: the spending limit kept changing; giving up');
}

/** Gives back a charge whose text never reached the carrier. Unconditional: ADD is atomic. */
export async function refundText(tenantId: string, costCents: number): Promise<void> {
  await dynamo.send(
    new UpdateCommand({
      TableName: TABLE_NAME,
      Key: tenantKey(tenantId),
      UpdateExpression: 'ADD #spend :refund',
      ConditionExpression: CONDITION.rowExists,
      ExpressionAttributeNames: { '#spend': 'spendCents' },
      ExpressionAttributeValues: { ':refund': -costCents },
    }),
  );
}

/** The row a failed conditional write saw (`ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`). */
function oldItemOf(err: unknown): Item | undefined {
  const raw = (err as { Item?: Record<string, unknown> }).Item;
  if (!raw) return undefined;
  // The document client does not translate errors: the old item arrives in wire format.
  return unmarshall(raw as Parameters<typeof unmarshall>[0]);
}
