import { TZDate } from '@date-fns/tz';
import type { OrganizationQuietHours } from '../tenants/quiet-hours-policy';
import { recipientPlace } from './recipient-place';

/**
 * Quiet hours: a text goes only inside its recipient's window, in the recipient's local time (design.md section
 * 11). The window is the federal 8:00-21:00 (47 CFR 64.1200(c)(1)), narrowed by the state of the number's area
 * code, narrowed again by the organization's own window; windows narrow, never widen. The rules and their statutes
 * are documented in docs/api.md ("Quiet hours").
 */
export type QuietHoursMode = 'off' | 'refuse' | 'defer';

/**
 * `appliesTo` `marketing`: only texts a request marks `"category": "marketing"`; `window`: the organization's own,
 * `HH:MM` local to the recipient, inside 08:00-21:00 (it can only narrow). The shape the organization row holds
 * (tenants/quiet-hours-policy.ts, read by `quietHoursOf`).
 */
export type QuietHoursPolicy = OrganizationQuietHours & { mode: QuietHoursMode };

export const FEDERAL_WINDOW = { start: '08:00', end: '21:00' } as const;

/** The v1 default: no text is held or refused for the hour. */
export const QUIET_HOURS_OFF: QuietHoursPolicy = { mode: 'off', appliesTo: 'all', window: { ...FEDERAL_WINDOW } };

/** Whether the policy holds a text of this category to the window at all. */
export function quietHoursApply(
  policy: QuietHoursPolicy,
  category: 'marketing' | 'transactional' | undefined,
): boolean {
  if (policy.mode === 'off') return false;
  return policy.appliesTo === 'all' || category === 'marketing';
}

/** A window within one local day, in minutes after midnight: open from `start` (inclusive) to `end` (exclusive). */
type Span = { start: number; end: number };

/** Each state's window by local weekday (0 = Sunday), from the statute cited beside it. */
const STATE_WINDOWS: Record<string, (weekday: number) => Span> = {
  // Fla. Stat. 501.616(6)(a): 8 a.m. to 8 p.m.
  FL: () => ({ start: 480, end: 1200 }),
  // Okla. Stat. tit. 15, 775C.4: 8 a.m. to 8 p.m.
  OK: () => ({ start: 480, end: 1200 }),
  // Md. Code, Com. Law 14-3201 (Stop the Spam Calls Act of 2023): 8 a.m. to 8 p.m.
  MD: () => ({ start: 480, end: 1200 }),
  // Wash. RCW 80.36.390 and 19.158.110: 8 a.m. to 8 p.m.
  WA: () => ({ start: 480, end: 1200 }),
  // Conn. Gen. Stat. 42-288a: 9 a.m. to 8 p.m.
  CT: () => ({ start: 540, end: 1200 }),
  // Tex. Bus. & Com. Code 304.004 as amended by SB 140 (2025): 9 a.m. to 9 p.m., noon to 9 p.m. on Sunday.
  TX: (weekday) => ({ start: weekday === 0 ? 720 : 540, end: 1260 }),
};

/**
 * A number whose zone cannot be told: no zone in the data (an international freephone number), or zones that share
 * no open hour under the organization's window (a toll-free number, which the data places in every North American
 * zone from Guam to St. John's, shares 22:00-00:30 UTC under the federal window alone). A North American number is
 * then held to the hours open in every zone of the contiguous United States (Eastern to Pacific: 11:00-21:00
 * Eastern under the federal window); any other number to the first zone the data lists, or to UTC.
 */
export const UNKNOWN_ZONE_FALLBACK = [
  'America/New_York',
  'America/Chicago',
  'America/Denver',
  'America/Phoenix',
  'America/Los_Angeles',
];

/** How far ahead an opening is looked for: a week and a day covers every weekday rule. */
const SEARCH_DAYS = 8;

const minutesOf = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

type Rules = { state: string | null; window: Span };

/** The window of a local weekday: federal, narrowed by the state's rule, narrowed by the organization's. */
function spanOf(rules: Rules, weekday: number): Span {
  const state = rules.state ? STATE_WINDOWS[rules.state]?.(weekday) : undefined;
  return {
    start: Math.max(rules.window.start, state?.start ?? 0),
    end: Math.min(rules.window.end, state?.end ?? 1440),
  };
}

function openIn(zone: string, rules: Rules, at: Date): boolean {
  const local = new TZDate(at.getTime(), zone);
  const span = spanOf(rules, local.getDay());
  const seconds = local.getHours() * 3600 + local.getMinutes() * 60 + local.getSeconds();
  return seconds >= span.start * 60 && seconds < span.end * 60;
}

const openInAll = (zones: string[], rules: Rules, at: Date): boolean => zones.every((zone) => openIn(zone, rules, at));

/**
 * The first instant from `at` (itself included) open in every zone, or null if none within the search. The
 * common window opens when one of the zones' windows opens, so only those instants are tried, in order.
 */
function firstOpenInstant(zones: string[], rules: Rules, at: Date): Date | null {
  if (zones.length === 0) return null;
  if (openInAll(zones, rules, at)) return at;
  const candidates: number[] = [];
  for (const zone of zones) {
    const today = new TZDate(at.getTime(), zone);
    for (let day = 0; day <= SEARCH_DAYS; day += 1) {
      const date = new TZDate(today.getFullYear(), today.getMonth(), today.getDate() + day, zone);
      const start = spanOf(rules, date.getDay()).start;
      const opening = new TZDate(date.getFullYear(), date.getMonth(), date.getDate(), 0, start, 0, zone).getTime();
      if (opening > at.getTime()) candidates.push(opening);
    }
  }
  const first = candidates.sort((a, b) => a - b).find((instant) => openInAll(zones, rules, new Date(instant)));
  return first === undefined ? null : new Date(first);
}

/**
 * Null when `at` is inside the recipient's window (or the policy is off), else the next instant the window opens
 * for that number. Several zones for the number's prefix: only the hours open in all of them.
 */
export async function nextAllowedInstant(
  phoneNumber: string,
  at: Date,
  policy: QuietHoursPolicy,
): Promise<Date | null> {
  if (policy.mode === 'off') return null;
  const place = await recipientPlace(phoneNumber);
  const window = { start: minutesOf(policy.window.start), end: minutesOf(policy.window.end) };
  const first =
    firstOpenInstant(place.zones, { state: place.state, window }, at) ??
    firstOpenInstant(place.northAmerican ? UNKNOWN_ZONE_FALLBACK : [], { state: null, window }, at) ??
    firstOpenInstant([place.zones[0] ?? 'UTC'], { state: place.state, window }, at);
  if (first === null)
    throw new Error(
      `No allowed instant within ${SEARCH_DAYS} days (window ${policy.window.start}-${policy.window.end})`,
    );
  return first.getTime() === at.getTime() ? null : first;
}
