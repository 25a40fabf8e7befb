import { randomBytes } from 'node:crypto';

/**
 * UUIDv7 (RFC 9562) minted from a given instant. Ids sort by the row's own time (a call's
 * `startedAt`, a contact's `createdAt`), so lists ordered by id are ordered by time and a cursor
 * (an id) is a position in time that survives the deletion of the row it names.
 * The `uuid` package cannot be used as-is: its v7 keeps a monotonic counter across calls, which
 * is right for "now" and wrong for historical timestamps arriving out of order.
 */
export function uuidv7(at: Date | number = Date.now()): string {
  const ms = typeof at === 'number' ? at : at.getTime();
  if (!Number.isFinite(ms) || ms < 0 || ms > 0xffffffffffff) throw new RangeError('uuidv7: time out of range');
  const bytes = randomBytes(16);
  const hex = Math.trunc(ms).toString(16).padStart(12, '0');
  for (let i = 0; i < 6; i += 1) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x70; // version 7
  bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 4122 variant
  const h = bytes.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * The smallest id string that any UUIDv7 minted at or after `ms` sorts at or above: the 48-bit
 * time prefix in canonical form ("xxxxxxxx-xxxx"). Used as a key-condition lower bound.
 */
export function uuidv7LowerBound(ms: number): string {
  const hex = Math.max(0, Math.ceil(ms)).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}`;
}

/** The instant a UUIDv7 was minted from. */
export function uuidv7Time(id: string): number {
  return parseInt(id.replace(/-/g, '').slice(0, 12), 16);
}
