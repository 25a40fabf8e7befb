/** E.164 as the spec states it: `+`, then 7 to 15 digits, the first not 0. */
export const E164_PATTERN = /^\+[1-9]\d{6,14}$/;

export const isE164 = (value: string): boolean => E164_PATTERN.test(value);

/** The digits of a number, for searching ("555 01" finds +1415555012...). */
export const digitsOf = (value: string): string => value.replace(/\D/g, '');
