import { ValidationError } from '../../shared/errors';
import type { Item } from '../../shared/table/dynamo';
import type { Condition, UpdateParts } from '../../shared/table/update-expression';
import { CUSTOM_FIELDS_LENGTH, customFieldsLength, customFieldsOf } from './contact-rows';
import { CUSTOM_FIELD_LIMITS } from './requests/contact-fields';

/**
 * A write of custom fields, merged key by key (docs/decisions.md, "Custom fields merge per key"): the keys an update
 * names are set (`null` removes one) and the others are kept. Each key is its own document path with its own
 * condition (still the value read), so two writers of different keys both commit, and one writing a key another
 * changed meanwhile reads again. The documented limits hold on the merged fields whatever runs concurrently: the
 * condition checks the map's key count (`size`) and the stored total length (`customFieldsLength`, moved by `ADD`
 * in the same write) against what this write adds, at the moment it commits.
 */
export type CustomFieldsWrite = {
  parts: Pick<UpdateParts, 'set' | 'remove' | 'add' | 'mapKeys'>;
  condition?: Condition;
  /** The fields the contact has after the write, as far as this write knows (the read's, with its keys merged). */
  merged: Record<string, string> | null;
};

const ATTRIBUTE = 'customFields';
const NONE: CustomFieldsWrite = { parts: {}, merged: null };

/** The fields after an update, from the fields read: each key given is set, or removed when `null`. */
export function mergedCustomFields(
  stored: Record<string, string> | null,
  given: Record<string, string | null>,
): Record<string, string> | null {
  const merged: Record<string, string> = { ...stored };
  for (const [key, value] of Object.entries(given)) {
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  return customFieldsOf(merged);
}

/** 400 naming `customFields` when the merged fields break a documented limit (the request alone kept them). */
function checkLimits(merged: Record<string, string> | null): void {
  const count = Object.keys(merged ?? {}).length;
  if (count > CUSTOM_FIELD_LIMITS.maxFields)
    throw new ValidationError(
      `customFields: the contact would have ${count} fields, at most ${CUSTOM_FIELD_LIMITS.maxFields} are allowed`,
    );
  if (customFieldsLength(merged) > CUSTOM_FIELD_LIMITS.maxTotalLength)
    throw new ValidationError(
      `customFields: the contact's keys and values together would be over ${CUSTOM_FIELD_LIMITS.maxTotalLength} characters`,
    );
}

/**
 * The whole map written at once, when the row has none to merge into (or one stored before its length was):
 * guarded on the map as read, so it happens once and a concurrent writer of the same row reads again.
 */
function wholeMap(row: Item, merged: Record<string, string> | null): CustomFieldsWrite {
  const condition: Condition =
    row[ATTRIBUTE] === undefined
      ? { expression: 'attribute_not_exists(#customFieldsAsRead)', names: { '#customFieldsAsRead': ATTRIBUTE } }
      : {
          expression: '#customFieldsAsRead = :customFieldsAsRead',
          names: { '#customFieldsAsRead': ATTRIBUTE },
          values: { ':customFieldsAsRead': row[ATTRIBUTE] },
        };
  if (merged === null && row[ATTRIBUTE] === undefined) return NONE;
  const parts = merged
    ? { set: { [ATTRIBUTE]: merged, [CUSTOM_FIELDS_LENGTH]: customFieldsLength(merged) } }
    : { remove: [ATTRIBUTE, CUSTOM_FIELDS_LENGTH] };
  return { parts, condition, merged };
}

/**
 * The write of an update's `customFields` over the row read: nothing (`undefined`), all removed (`null`), the
 * whole map (a row without one), else key by key.
 */
export function customFieldsWrite(row: Item, given: Record<string, string | null> | null | undefined) {
  if (given === undefined) return NONE;
  if (given === null)
    return row[ATTRIBUTE] === undefined ? NONE : { parts: { remove: [ATTRIBUTE, CUSTOM_FIELDS_LENGTH] }, merged: null };
  const stored = (row[ATTRIBUTE] ?? null) as Record<string, string> | null;
  const merged = mergedCustomFields(stored, given);
  checkLimits(merged);
  if (row[ATTRIBUTE] === undefined || typeof row[CUSTOM_FIELDS_LENGTH] !== 'number') return wholeMap(row, merged);
  return byKey(stored ?? {}, given, merged);
}

/** Each changed key its own path and condition; the count and the length held by the condition at commit. */
function byKey(
  stored: Record<string, string>,
  given: Record<string, string | null>,
  merged: Record<string, string> | null,
): CustomFieldsWrite {
  const changed = Object.entries(given).filter(([key, value]) => (stored[key] ?? null) !== value);
  if (changed.length === 0) return { parts: {}, merged };
  const set = changed.filter(([, value]) => value !== null) as [string, string][];
  const removed = changed.filter(([, value]) => value === null).map(([key]) => key);
  // The same placeholders as the update's paths (update-expression.ts numbers set keys first, then removed ones).
  const keyConditions = [...set.map(([key]) => key), ...removed].map((key, i) =>
    stored[key] === undefined
      ? `attribute_not_exists(#${ATTRIBUTE}.#${ATTRIBUTE}_k${i})`
      : `#${ATTRIBUTE}.#${ATTRIBUTE}_k${i} = :${ATTRIBUTE}_was${i}`,
  );
  const was = Object.fromEntries(
    [...set.map(([key]) => key), ...removed].flatMap((key, i) =>
      stored[key] === undefined ? [] : [[`:${ATTRIBUTE}_was${i}`, stored[key]]],
    ),
  );
  const added = set.filter(([key]) => stored[key] === undefined).length - removed.length;
  const lengthDelta = customFieldsLength(merged) - customFieldsLength(stored);
  return {
    parts: {
      mapKeys: { attribute: ATTRIBUTE, set: Object.fromEntries(set), remove: removed },
      add: { [CUSTOM_FIELDS_LENGTH]: lengthDelta },
    },
    condition: {
      expression: [
        ...keyConditions,
        `size(#${ATTRIBUTE}) <= :customFieldsMaxBefore`,
        `#${CUSTOM_FIELDS_LENGTH} <= :customFieldsLengthMaxBefore`,
      ].join(' AND '),
      names: { [`#${CUSTOM_FIELDS_LENGTH}`]: CUSTOM_FIELDS_LENGTH },
      values: {
        ...was,
        ':customFieldsMaxBefore': CUSTOM_FIELD_LIMITS.maxFields - added,
        ':customFieldsLengthMaxBefore': CUSTOM_FIELD_LIMITS.maxTotalLength - lengthDelta,
      },
    },
    merged,
  };
}
