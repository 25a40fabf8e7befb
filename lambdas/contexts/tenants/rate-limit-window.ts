/**
 * The arithmetic of the fixed one-minute window and the headers that report it. Kept apart from
 * the DynamoDB counter (rate-limit.ts) so the local runtime's per-network limiter can use it
 * without opening the table.
 */
export const WINDOW_MS = 60_000;

export type RateLimitState = {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets (at least 1). */
  resetSeconds: number;
};

export function windowOf(now: number): { start: number; resetSeconds: number } {
  const start = Math.floor(now / WINDOW_MS) * WINDOW_MS;
  return { start, resetSeconds: Math.max(1, Math.ceil((start + WINDOW_MS - now) / 1000)) };
}

/**
 * The headers of spec section 8 (`RateLimit-Limit`, `-Remaining`, `-Reset`, seconds) and the
 * current IETF draft's structured fields (`RateLimit-Policy`, `RateLimit`), for clients that
 * read either.
 */
export function rateLimitHeaders(state: RateLimitState, windowSeconds = WINDOW_MS / 1000): Record<string, string> {
  return {
    'RateLimit-Limit': String(state.limit),
    'RateLimit-Remaining': String(state.remaining),
    'RateLimit-Reset': String(state.resetSeconds),
    'RateLimit-Policy': `"default";q=${state.limit};w=${windowSeconds}`,
    RateLimit: `"default";r=${state.remaining};t=${state.resetSeconds}`,
  };
}
