import { createTestTable } from '../support/table';
import { consumeKeyBudget } from '../../lambdas/contexts/tenants/rate-limit';

beforeAll(createTestTable);

describe('the per-key limiter on DynamoDB Local', () => {
  it('allows exactly 120 of 150 concurrent requests in one window, never more', async () => {
    const now = Date.parse('2026-11-21T10:00:10.000Z');

    const states = await Promise.all(
      Array.from({ length: 150 }, () => consumeKeyBudget('tenant-a', 'key-1', 120, now)),
    );

    expect(states.filter((s) => s.allowed)).toHaveLength(120);
    expect(states.filter((s) => !s.allowed).every((s) => s.remaining === 0)).toBe(true);
    expect(new Set(states.filter((s) => s.allowed).map((s) => s.remaining)).size).toBe(120);
  });

  it('gives each key of one organization its own budget, and a new window a fresh one', async () => {
    const now = Date.parse('2026-11-21T11:00:59.000Z');
    for (let i = 0; i < 3; i += 1) await consumeKeyBudget('tenant-a', 'key-2', 3, now);

    const sameKey = await consumeKeyBudget('tenant-a', 'key-2', 3, now);
    const otherKey = await consumeKeyBudget('tenant-a', 'key-3', 3, now);
    const nextWindow = await consumeKeyBudget('tenant-a', 'key-2', 3, now + 1_000);

    expect(sameKey.allowed).toBe(false);
    expect(otherKey).toMatchObject({ allowed: true, remaining: 2 });
    expect(nextWindow).toMatchObject({ allowed: true, remaining: 2, resetSeconds: 60 });
  });
});
