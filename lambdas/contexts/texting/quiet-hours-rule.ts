import { QuietHoursError } from './errors';
import type { MessageCategory } from './message-categories';
import { nextAllowedInstant, quietHoursApply, type QuietHoursPolicy } from './quiet-hours';

/**
 * What the organization's quiet-hours policy does to a text's time (docs/api.md, "Quiet hours"): the window
 * arithmetic is ./quiet-hours.ts; this is the rule a send, a reschedule and the firing apply with it.
 */
export type TextToHold = { to: string; category?: MessageCategory };

/**
 * The instant a text asked for `at` goes: `at` itself when the policy leaves the text alone or the recipient's
 * window is open then; otherwise, with `refuse`, 422 `quiet_hours` naming `allowedAt`; with `defer`, `allowedAt`.
 */
export async function instantUnderQuietHours(text: TextToHold, at: Date, policy: QuietHoursPolicy): Promise<Date> {
  const allowedAt = await heldUntil(text, at, policy);
  if (allowedAt === null) return at;
  if (policy.mode === 'refuse') throw new QuietHoursError(allowedAt);
  return allowedAt;
}

/**
 * Null when the text may go at `at`; else the next instant its recipient's window opens. The firing uses it
 * whatever the mode: a scheduled text was accepted already, so under `refuse` too it waits rather than fails.
 */
export async function heldUntil(text: TextToHold, at: Date, policy: QuietHoursPolicy): Promise<Date | null> {
  if (!quietHoursApply(policy, text.category)) return null;
  return nextAllowedInstant(text.to, at, policy);
}
