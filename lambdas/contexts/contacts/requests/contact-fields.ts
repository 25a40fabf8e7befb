import * as z from 'zod/mini';
import '../../../shared/schemas/zod-english';
import { e164 } from '../../../shared/schemas/phone-number';

/**
 * The limits of `customFields` (docs/decisions.md, "A directory a CRM can sync"): a flat object of
 * strings, small enough that the largest contact stays a few KB (an item is charged per KB, on the
 * table and on each index it is in) and that a page of 100 of the largest contacts still fits a
 * Lambda response whole (test/unit/response-size.test.ts). Control characters, which JSON spells
 * with six bytes each, are refused (tab, line feed and carriage return excepted).
 */
export const CUSTOM_FIELD_LIMITS = {
  maxFields: 50,
  keyPattern: /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/,
  maxValueLength: 500,
  /** Keys and values together, in characters. */
  maxTotalLength: 2000,
} as const;

/**
 * Whether a text holds a C0 control character or DEL; tab, line feed and carriage return only where `lineBreaks` allows
 * them.
 */
function hasControlCharacters(text: string, lineBreaks: boolean): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (lineBreaks && (code === 9 || code === 10 || code === 13)) continue;
    if (code < 32 || code === 127) return true;
  }
  return false;
}

/**
 * Keys a JavaScript object cannot hold as its own: a parser that assigned them would change the object's prototype and
 * drop the field without a word, so they are refused by name before any parsing.
 */
const RESERVED_KEYS = new Set(['__proto__']);

const reservedKeyOf = (input: unknown): string | undefined =>
  input && typeof input === 'object' ? Object.keys(input).find((key) => RESERVED_KEYS.has(key)) : undefined;

/** A value of `null` removes the key (on an update); the limits count the values given. */
const customFieldsChecked = z.record(z.string(), z.nullable(z.string())).check(
  z.superRefine((given, ctx) => {
    const fields = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== null)) as Record<
      string,
      string
    >;
    const entries = Object.entries(fields);
    if (entries.length > CUSTOM_FIELD_LIMITS.maxFields) {
      ctx.addIssue({
        code: 'custom',
        message: `must have at most ${CUSTOM_FIELD_LIMITS.maxFields} fields`,
        input: fields,
      });
      return;
    }
    for (const [key, value] of entries) {
      if (!CUSTOM_FIELD_LIMITS.keyPattern.test(key)) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: 'key must be 1 to 64 letters, digits, `_`, `-` or `.`, not starting with `-` or `.`',
          input: key,
        });
        return;
      }
      if (value.length > CUSTOM_FIELD_LIMITS.maxValueLength) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `must be at most ${CUSTOM_FIELD_LIMITS.maxValueLength} characters`,
          input: value,
        });
        return;
      }
      if (hasControlCharacters(value, true)) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: 'must not contain control characters (tab and line breaks are allowed)',
          input: value,
        });
        return;
      }
    }
    const total = entries.reduce((sum, [key, value]) => sum + key.length + value.length, 0);
    if (total > CUSTOM_FIELD_LIMITS.maxTotalLength) {
      ctx.addIssue({
        code: 'custom',
        message: `keys and values together must be at most ${CUSTOM_FIELD_LIMITS.maxTotalLength} characters`,
        input: fields,
      });
    }
  }),
);

/** An external id as requests give it (a contact's field, and `GET /contacts?externalId=`). */
export const externalId = z.string().check(
  z.minLength(1),
  z.maxLength(255),
  z.refine((text) => !hasControlCharacters(text, false), 'must not contain control characters'),
);

/** The fields a request may write on a contact, with the spec's limits (create and update). */
export const contactFields = {
  displayName: z.string().check(z.minLength(1), z.maxLength(200)),
  phoneNumber: e164,
  company: z.optional(z.nullable(z.string().check(z.maxLength(200)))),
  tag: z.optional(z.nullable(z.string().check(z.maxLength(60)))),
  notes: z.optional(z.nullable(z.string().check(z.maxLength(5000)))),
  externalId: z.optional(z.nullable(externalId)).register(z.globalRegistry, {
    description:
      "Your own id for the contact (a CRM record's id), 1 to 255 characters without control characters, compared " +
      'exactly. Unique within the organization: ' +
      'another contact holding it is 409 `contact_conflict` naming that contact. `null` removes it. `GET ' +
      '/contacts?externalId=` finds the contact.',
  }),
  customFields: z
    .optional(
      z.nullable(
        z.pipe(
          z.unknown().check(
            z.superRefine((input, ctx) => {
              const reserved = reservedKeyOf(input);
              if (reserved !== undefined)
                ctx.addIssue({
                  code: 'custom',
                  path: [reserved],
                  message: 'is a reserved key',
                  input,
                  continue: false,
                });
            }),
          ),
          customFieldsChecked,
        ),
      ),
    )
    .register(z.globalRegistry, {
      description:
        'Your own properties of the contact: a flat object of strings. At most 50 fields; keys 1 to 64 letters, ' +
        'digits, `_`, `-` or `.` ' +
        '(not starting with `-` or `.`); values up to 500 characters, without control characters but tab and line ' +
        'breaks; keys and ' +
        "values together up to 2,000 characters, `__proto__` refused; the limits hold for the contact's fields after " +
        'the change too. The keys given are set one by one (a key given `null` is removed) and the others are kept, ' +
        'so two writers of different keys both win; `customFields: null` removes them all.',
    }),
};
