import { num, type Item } from '../../shared/table/dynamo';
import { isSmsRateCents } from '../tenants/sms-rate';

/**
 * What a text costs: segments x the organization's rate. Spend changes only inside the
 * transactions that change a text's fate (./spend.ts keeps it): the charge with the `queued`
 * message, the refund with the status change that fails it. So charges minus refunds is always
 * the cost of the texts that did not fail.
 */

/**
 * The organization's rate, which its row holds from its creation on (the operator's, or the
 * default: tenants/sms-rate.ts). A row without a valid one is refused, never priced at a guess.
 */
export const smsRateCentsOf = (tenantItem: Item): number => {
  const rate = num(tenantItem.smsRateCents);
  if (!isSmsRateCents(rate))
    throw new Error(
      `The organization row ${String(tenantItem.id)} holds no valid smsRateCents (${String(tenantItem.smsRateCents)})`,
    );
  return rate;
};

// ---------- segments ----------

/** GSM 03.38 default alphabet: one septet each. */
const GSM7_BASIC = new Set(
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ ' +
    '!"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà',
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
