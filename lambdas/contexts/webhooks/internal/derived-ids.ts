import { createHash } from 'node:crypto';

/**
 * A UUID computed, not drawn: the same inputs always give the same id. A replayed stream
 * record must produce the same event id and the same delivery ids, or replays would create
 * duplicates. The first 48 bits are the time, laid out as in UUIDv7, so derived ids sort by
 * time (the delivery log lists newest first by id); the rest is a SHA-256 of the parts.
 * Version 8 ("custom", RFC 9562 section 5.8) because the bits are not random.
 */
export function derivedUuid(ms: number, ...parts: string[]): string {
  if (!Number.isFinite(ms) || ms < 0 || ms > 0xffffffffffff) throw new RangeError('derivedUuid: time out of range');
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(Math.trunc(ms), 0, 6);
  // Parts are joined with a byte no id or type contains, so ("a", "bc") and ("ab", "c") differ.
  createHash('sha256').update(parts.join('\u0000')).digest().copy(bytes, 6, 0, 10);
  bytes[6] = (bytes[6] & 0x0f) | 0x80; // version 8
  bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 4122 variant
  const h = bytes.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
