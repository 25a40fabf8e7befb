import { z } from 'zod';
import { E164_PATTERN } from '../../lambdas/shared/phone';
import { PLANS, SCOPES, isScope } from '../../lambdas/contexts/tenants/scopes';
import { isSmsRateCents, SMS_RATE_CENTS_RULE } from '../../lambdas/contexts/tenants/sms-rate';
import {
  parseQuietHoursWindow,
  QUIET_HOURS_MODES,
  QUIET_HOURS_SCOPES,
  QUIET_HOURS_WINDOW_RULE,
} from '../../lambdas/contexts/tenants/quiet-hours-policy';
import type { BillingStatus } from '../../lambdas/contexts/tenants/tenants';
import { UsageError } from '../usage-error';
import type { OptionValues } from './registry';

/**
 * Validation of CLI option values, with messages that name the option (`--plan: must be one
 * of starter, pro, business`). Only modules that touch no table are imported here, so a wrong
 * call is reported before the CLI looks for a runtime.
 */
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: `must be one of ${values.join(', ')}` });

// tenants.ts, which owns the list, opens the table at import; `satisfies Record` makes a status
// missing here, or one too many, a compile error.
const BILLING_STATUSES = Object.keys({ active: 0, past_due: 0, suspended: 0 } satisfies Record<BillingStatus, 0>) as [
  BillingStatus,
  ...BillingStatus[],
];

const DURATION_UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/**
 * The grace period of `key rotate` and `webhook rotate-secret`: how long the old key or secret
 * keeps working beside the new one. A day by default, time to roll the new one out everywhere;
 * at most a week, so a forgotten rotation does not leave a leaked credential alive for long.
 */
export const ROTATION_GRACE = { defaultSeconds: 86_400, defaultText: '24h', maxSeconds: 7 * 86_400 } as const;

export const gracePeriod = () =>
  option.duration.pipe(
    z.number().max(ROTATION_GRACE.maxSeconds, `must be at most ${ROTATION_GRACE.maxSeconds / 86_400} days`),
  );

export const option = {
  text: z.string().min(1, 'must not be empty'),
  e164: z.string().regex(E164_PATTERN, 'must be an E.164 phone number such as +14155550123'),
  isoDateTime: z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time such as 2026-01-31T09:30:00Z' }),
  uuid: z.uuid({ error: 'must be a uuid' }),
  wholeNumber: z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().max(Number.MAX_SAFE_INTEGER, 'is too large')),
  /** Cents an organization pays per segment of a text (tenants/sms-rate.ts). */
  smsRateCents: z
    .string()
    .regex(/^\d+$/, SMS_RATE_CENTS_RULE)
    .transform(Number)
    .refine(isSmsRateCents, SMS_RATE_CENTS_RULE),
  slug: z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be lower-case letters, digits and single hyphens'),
  plan: oneOf(PLANS),
  billingStatus: oneOf(BILLING_STATUSES),
  quietHours: oneOf(QUIET_HOURS_MODES),
  quietHoursAppliesTo: oneOf(QUIET_HOURS_SCOPES),
  /** `HH:MM-HH:MM` inside 08:00-21:00 (tenants/quiet-hours-policy.ts). */
  quietHoursWindow: z
    .string()
    .transform(
      (raw, ctx) =>
        parseQuietHoursWindow(raw) ?? (ctx.addIssue({ code: 'custom', message: QUIET_HOURS_WINDOW_RULE }), z.NEVER),
    ),
  direction: oneOf(['inbound', 'outbound']),
  callStatus: z.string().regex(/^[a-z][a-z-]*$/, 'must be a lower-case status such as completed, no-answer, failed'),
  /** Comma-separated scopes, at least one. */
  scopes: z
    .string()
    .transform((raw) =>
      raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .superRefine((scopes, ctx) => {
      const unknown = scopes.filter((s) => !isScope(s));
      if (unknown.length > 0)
        ctx.addIssue({
          code: 'custom',
          message: `unknown scope ${unknown.join(', ')}; the scopes are ${SCOPES.join(', ')}`,
        });
      if (scopes.length === 0)
        ctx.addIssue({ code: 'custom', message: `must name at least one of ${SCOPES.join(', ')}` });
    })
    .transform((scopes) => scopes.filter(isScope)),
  httpUrl: z.string().refine((raw) => {
    try {
      return ['http:', 'https:'].includes(new URL(raw).protocol);
    } catch {
      return false;
    }
  }, 'must be an http or https URL such as http://localhost:4242/webhooks'),
  /** A duration such as 90s, 30m, 24h or 7d (0 alone: none), in seconds. */
  duration: z
    .string()
    .regex(/^(0|\d+[smhd])$/, 'must be a duration such as 30m, 24h or 7d (s, m, h, d; 0 for none)')
    .transform((raw) =>
      raw === '0'
        ? 0
        : Number(raw.slice(0, -1)) * DURATION_UNIT_SECONDS[raw.slice(-1) as keyof typeof DURATION_UNIT_SECONDS],
    ),
  /** A host name the organization approves for webhook targets (no scheme, port or path). */
  host: z
    .string()
    .regex(
      /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i,
      'must be a host name such as hooks.example.com (no https://, port or path)',
    ),
};

/** Parses option values with a zod object whose keys are the option names; the first problem is a UsageError. */
export function parseOptions<T extends z.ZodType>(schema: T, values: OptionValues): z.output<T> {
  const result = schema.safeParse(values);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const name = issue.path.length > 0 ? `--${issue.path.map(String).join('.')}` : 'options';
  const missing = issue.code === 'invalid_type' && issue.message.includes('received undefined');
  throw new UsageError(`${name}: ${missing ? 'is required' : issue.message}`);
}

/** The positional arguments a command declares, validated with the same schemas. */
export function parsePositional<T extends z.ZodType>(schema: T, name: string, value: string | undefined): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new UsageError(`<${name}>: ${value === undefined ? 'is required' : result.error.issues[0].message}`);
}

/** The parse of a command whose one positional is an id (`tenant show <tenantId>`), or that id of a longer parse. */
export const uuidPositional =
  (name: string) =>
  ({ positionals }: { positionals: string[] }): string =>
    parsePositional(option.uuid, name, positionals[0]);
