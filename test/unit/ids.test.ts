import { uuidv7, uuidv7LowerBound, uuidv7Time } from '../../lambdas/shared/ids';
import { z } from 'zod';

describe('uuidv7', () => {
  it('encodes the given instant, version 7 and the RFC variant', () => {
    const at = Date.parse('2026-11-21T12:34:56.789Z');

    const id = uuidv7(at);

    expect(uuidv7Time(id)).toBe(at);
    expect(id[14]).toBe('7');
    expect(['8', '9', 'a', 'b']).toContain(id[19]);
    expect(z.uuid().safeParse(id).success).toBe(true);
  });

  it('sorts by time as a string, whatever order the ids are minted in', () => {
    const later = uuidv7(Date.parse('2026-01-02T00:00:00Z'));
    const earlier = uuidv7(Date.parse('2026-01-01T00:00:00Z'));

    expect([later, earlier].sort()).toEqual([earlier, later]);
  });

  it('gives a lower bound that every id of that millisecond or later sorts at or above, and earlier ids below', () => {
    const ms = Date.parse('2026-05-05T05:05:05.005Z');

    const bound = uuidv7LowerBound(ms);

    expect(uuidv7(ms) >= bound).toBe(true);
    expect(uuidv7(ms + 1) >= bound).toBe(true);
    expect(uuidv7(ms - 1) < bound).toBe(true);
  });

  it('rounds a fractional millisecond up, so "since" never includes an earlier millisecond', () => {
    expect(uuidv7(1000) < uuidv7LowerBound(1000.4)).toBe(true);
  });
});
