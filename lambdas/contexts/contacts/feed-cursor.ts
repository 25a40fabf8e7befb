/**
 * The cursor of the feed of changes is a uuid, as the spec says of every `nextCursor`
 * (docs/decisions.md, "The feed's cursor stays a uuid"). Most pages hand on the change id of the last
 * entry read: a UUIDv7, the exact position to go on after. Once a walk has passed an entry younger
 * than the visibility bound, it must also remember its watermark (contact-changes.ts); its cursors
 * are then UUIDv8 (RFC 9562's layout for an application's own bits): the position's 48-bit time, the
 * first 50 of its 74 random bits, and the watermark as whole minutes before that time (24 bits).
 */

const RANDOM_BITS = 74n;
const KEPT_RANDOM_BITS = 50n;
const MARK_BITS = RANDOM_BITS - KEPT_RANDOM_BITS;
const MARK_MAX = (1n << MARK_BITS) - 1n;
const MARK_UNIT_MS = 60_000;
const RAND_B_BITS = 62n;

type Parts = { ms: number; version: number; random: bigint };

function partsOf(uuid: string): Parts {
  const hex = uuid.replace(/-/g, '').toLowerCase();
  const randA = BigInt(`0x${hex.slice(13, 16)}`);
  const randB = BigInt(`0x${hex.slice(16)}`) & ((1n << RAND_B_BITS) - 1n);
  return { ms: parseInt(hex.slice(0, 12), 16), version: parseInt(hex[12], 16), random: (randA << RAND_B_BITS) | randB };
}

function uuidOf({ ms, version, random }: Parts): string {
  const randA = random >> RAND_B_BITS;
  const randB = random & ((1n << RAND_B_BITS) - 1n);
  const hex =
    ms.toString(16).padStart(12, '0') +
    version.toString(16) +
    randA.toString(16).padStart(3, '0') +
    ((1n << (RAND_B_BITS + 1n)) | randB).toString(16).padStart(16, '0'); // the RFC variant, 0b10
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The cursor after the change id `change`, carrying the walk's watermark when it has one (rounded
 * down to the minute: an earlier watermark only re-reads a little more).
 */
export function encodeFeedCursor(change: string, watermarkMs: number | undefined): string {
  if (watermarkMs === undefined) return change;
  const { ms, random } = partsOf(change);
  const minutes = BigInt(Math.ceil(Math.max(0, ms - watermarkMs) / MARK_UNIT_MS));
  if (minutes > MARK_MAX) throw new RangeError('feed cursor: watermark too far behind its position');
  return uuidOf({ ms, version: 8, random: ((random >> MARK_BITS) << MARK_BITS) | minutes });
}

/**
 * Where a page goes on (`after`: every change id above it) and the watermark its walk carries. A
 * UUIDv8 cursor goes on after every change id sharing its kept bits: two entries of one directory
 * sharing a millisecond and those 50 random bits (a chance of one in 2^50 per pair) would lose the
 * second one to this walk, never to the next, since the watermark lies before both.
 */
export function decodeFeedCursor(cursor: string | undefined): { after?: string; watermarkMs?: number } {
  if (cursor === undefined) return {};
  const { ms, version, random } = partsOf(cursor);
  if (version !== 8) return { after: cursor.toLowerCase() };
  const minutes = random & MARK_MAX;
  return {
    after: uuidOf({ ms, version: 7, random: random | MARK_MAX }),
    watermarkMs: ms - Number(minutes) * MARK_UNIT_MS,
  };
}
