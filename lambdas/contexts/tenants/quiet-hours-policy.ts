/**
 * The organization's quiet-hours policy as its row holds it (attribute `quietHours`), and the operator's rules
 * for it. The window arithmetic is texting's (texting/quiet-hours.ts, whose `QuietHoursPolicy` is this shape): a
 * text is held to its recipient's local hours, a rule of sending. No imports, so the CLI can validate options
 * without opening the table.
 */
export const QUIET_HOURS_MODES = ['off', 'refuse', 'defer'] as const;
export const QUIET_HOURS_SCOPES = ['all', 'marketing'] as const;

export type OrganizationQuietHours = {
  mode: (typeof QUIET_HOURS_MODES)[number];
  appliesTo: (typeof QUIET_HOURS_SCOPES)[number];
  /** `HH:MM` local to the recipient, inside 08:00-21:00. */
  window: { start: string; end: string };
};

/** Every organization until its operator says otherwise: v1's answers unchanged. */
export const DEFAULT_QUIET_HOURS: OrganizationQuietHours = {
  mode: 'off',
  appliesTo: 'all',
  window: { start: '08:00', end: '21:00' },
};

/**
 * A window of at least four hours: the zones of one number's prefix span up to three hours (Eastern to Pacific,
 * the fallback for a number whose zone cannot be told), so a shorter one could leave no hour open in all of them.
 */
export const MIN_WINDOW_MINUTES = 240;

export const QUIET_HOURS_WINDOW_RULE =
  'must be HH:MM-HH:MM inside 08:00-21:00 (it can only narrow the federal window), at least 4 hours long';

const minutes = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** `08:30-20:00` -> its window, or null when it breaks QUIET_HOURS_WINDOW_RULE. */
export function parseQuietHoursWindow(text: string): OrganizationQuietHours['window'] | null {
  const match = /^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d)$/.exec(text);
  if (!match) return null;
  const start = `${match[1]}:${match[2]}`;
  const end = `${match[3]}:${match[4]}`;
  if (minutes(start) < 480 || minutes(end) > 1260 || minutes(end) - minutes(start) < MIN_WINDOW_MINUTES) return null;
  return { start, end };
}

const isOneOf = <T extends string>(values: readonly T[], value: unknown): value is T =>
  typeof value === 'string' && (values as readonly string[]).includes(value);

/** The policy of an organization row; a row written before the policy existed (or holding none) is off. */
export function quietHoursOf(organizationRow: Record<string, unknown>): OrganizationQuietHours {
  const stored = organizationRow.quietHours as Partial<OrganizationQuietHours> | undefined;
  if (!stored) return DEFAULT_QUIET_HOURS;
  const window = stored.window && parseQuietHoursWindow(`${stored.window.start}-${stored.window.end}`);
  return {
    mode: isOneOf(QUIET_HOURS_MODES, stored.mode) ? stored.mode : DEFAULT_QUIET_HOURS.mode,
    appliesTo: isOneOf(QUIET_HOURS_SCOPES, stored.appliesTo) ? stored.appliesTo : DEFAULT_QUIET_HOURS.appliesTo,
    window: window ?? DEFAULT_QUIET_HOURS.window,
  };
}
