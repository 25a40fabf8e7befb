/**
 * What an organization pays for one segment of a text it sends, in whole cents: set by the
 * operator (`tenant create|update --sms-rate-cents`) and held on the organization row, which every
 * organization is created with. A text costs its segments times this (texting/billing.ts). No
 * imports: the operator CLI validates its option with it before it opens the table.
 */

/** The rate of an organization created without one. */
export const DEFAULT_SMS_RATE_CENTS = 1;

/**
 * At least a cent: a free text would leave the spending limit nothing to count. At most a dollar a
 * segment, far above any carrier's price: more is a typo, not a price.
 */
export const SMS_RATE_CENTS_RANGE = { min: 1, max: 100 } as const;

export const isSmsRateCents = (value: unknown): value is number =>
  Number.isInteger(value) &&
  (value as number) >= SMS_RATE_CENTS_RANGE.min &&
  (value as number) <= SMS_RATE_CENTS_RANGE.max;

/** How a wrong rate is worded, after the name of the field or option. */
export const SMS_RATE_CENTS_RULE = `must be a whole number of cents from ${SMS_RATE_CENTS_RANGE.min} to ${SMS_RATE_CENTS_RANGE.max}`;
