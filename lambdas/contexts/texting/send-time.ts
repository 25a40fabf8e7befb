import { ValidationError } from '../../shared/errors';

/**
 * When a text may be scheduled for: at least a minute ahead (so the firing, which runs every
 * minute, can keep "within a minute after, never before") and at most 90 days (a reservation of
 * the organization's money has to end some time). Pure: the clock is the caller's.
 */
export const MIN_SCHEDULE_AHEAD_MS = 60_000;
export const MAX_SCHEDULE_AHEAD_MS = 90 * 24 * 60 * 60 * 1000;

/** A request's `sendAt` as an instant, or 400 naming `sendAt` outside the bounds. */
export function scheduledInstantOf(sendAt: string, now: Date): Date {
  const at = new Date(sendAt);
  const ahead = at.getTime() - now.getTime();
  if (!(ahead >= MIN_SCHEDULE_AHEAD_MS)) throw new ValidationError('sendAt: must be at least 60 seconds ahead');
  if (ahead > MAX_SCHEDULE_AHEAD_MS) throw new ValidationError('sendAt: must be at most 90 days ahead');
  return at;
}
