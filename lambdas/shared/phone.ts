/** E.164 as the spec states it: `+`, then 7 to 15 digits, the first not 0. */
export const E164_PATTERN = /^\+[1-9]\d{6,14}$/;

export const isE164 = (value: string): boolean => E164_PATTERN.test(value);

/** The digits of a number, for searching ("555 01" finds +1415555012...). */
export const digitsOf = (value: string): string => value.replace(/\D/g, '');

/**
 * ITU-T E.164 country calling codes of one and two digits. Country codes are prefix-free, so
 * every code not starting with one of these has three digits: two short lists decide the length
 * of any code without a table of all ~200.
 */
const ONE_DIGIT_CODES = new Set(['1', '7']);
const TWO_DIGIT_CODES = new Set(
  '20 27 30 31 32 33 34 36 39 40 41 43 44 45 46 47 48 49 51 52 53 54 55 56 57 58 60 61 62 63 64 65 66 81 82 84 86 90 91 92 93 94 95 98'.split(
    ' ',
  ),
);

/** How many leading digits of an E.164 number (digits only, no `+`) are its country code. */
export function countryCodeLength(digits: string): number {
  if (ONE_DIGIT_CODES.has(digits.slice(0, 1))) return 1;
  return TWO_DIGIT_CODES.has(digits.slice(0, 2)) ? 2 : 3;
}
