import * as z from 'zod/mini';
import { decodeFeedCursor, encodeFeedCursor } from '../../lambdas/contexts/contacts/feed-cursor';
import { uuidv7, uuidv7Time } from '../../lambdas/shared/ids';

/**
 * The feed's cursor stays what the spec says of every cursor, a uuid, while it carries a walk's
 * watermark (docs/decisions.md, "The feed's cursor stays a uuid").
 */
const isUuid = (value: string) => z.uuid().safeParse(value).success;

describe('the feed cursor', () => {
  it('is the change id itself while the walk carries no watermark', () => {
    const change = uuidv7();

    expect(encodeFeedCursor(change, undefined)).toBe(change);
    expect(decodeFeedCursor(change)).toEqual({ after: change });
  });

  it('carries a watermark in a UUIDv8 that goes on right after its change, at or before the watermark', () => {
    // Prepare: a change, the next change in the index (another millisecond, or the same one), a watermark behind them
    const at = Date.now();
    const change = uuidv7(at);
    const watermarkMs = at - 2 * 60 * 1000 - 1234;

    // Act
    const cursor = encodeFeedCursor(change, watermarkMs);
    const decoded = decodeFeedCursor(cursor);

    // Assess: a uuid of version 8; the position is not before the change nor past the next millisecond's
    expect(isUuid(cursor)).toBe(true);
    expect(cursor[14]).toBe('8');
    expect(decoded.after! >= change).toBe(true);
    expect(decoded.after! < uuidv7(at + 1)).toBe(true);
    expect(uuidv7Time(decoded.after!)).toBe(at);
    expect(decoded.watermarkMs).toBeLessThanOrEqual(watermarkMs);
    expect(decoded.watermarkMs).toBeGreaterThan(watermarkMs - 60_000);
  });

  it('keeps a later change of the same millisecond after the position, short of a one-in-2^50 tie', () => {
    const at = Date.now();
    const changes = Array.from({ length: 200 }, () => uuidv7(at)).sort();

    for (let i = 0; i < changes.length - 1; i += 1) {
      const { after } = decodeFeedCursor(encodeFeedCursor(changes[i], at - 1));
      expect(after! >= changes[i] && after! < changes[i + 1]).toBe(true);
    }
  });
});
