import type { Scope } from '../../lambdas/contexts/tenants/scopes';
import type { SmokeClient } from './client';

/**
 * What one smoke check is, and what the checks of a run share. A check returns a short detail on
 * success, throws a SmokeFailure (or anything) on failure, and a SmokeSkip when what it needs is
 * missing (an earlier check failed, or the deployment has no data to look at).
 */
export class SmokeSkip extends Error {}

export type Me = {
  tenant: { id: string; name: string } | null;
  permissions: string[];
  rateLimit: { requestsPerMinute: number };
};

export type SmokeContext = {
  client: SmokeClient;
  /** Marks what the run creates (the contact's name) and names the run in the output. */
  runId: string;
  /** A number no one has: `+999` (a country code ITU has not assigned) and 12 random digits. */
  markedNumber: string;
  /** GET /me's answer, once its check passed. */
  me?: Me;
  callId?: string;
  /** The contact the run created; `deleted` once the run's DELETE succeeded. */
  contact?: { id: string; deleted: boolean };
  /** A conversation to read: the newest thread's number, else the marked number (an empty conversation). */
  counterpart?: string;
};

export type Check = {
  name: string;
  /**
   * The scope the route needs. When GET /me says the key lacks it, the check instead expects the
   * contract's 403 `insufficient_scope` from `probe` (one request, nothing written).
   */
  scope?: Scope;
  probe?: { method: string; path: string };
  run: (ctx: SmokeContext) => Promise<string>;
};

export type CheckResult = { name: string; status: 'pass' | 'fail' | 'skip'; detail: string };

/** Stops a check that depends on something an earlier check did not produce. */
export function needs<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new SmokeSkip(`needs ${what}`);
  return value;
}
