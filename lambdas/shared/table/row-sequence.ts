/**
 * A per-row sequence number: 1 when a row that can raise webhook events (a call, a message, a
 * voicemail) is first written, plus one in every later write that changes what an event about it
 * shows. Events carry it as `sequence`, so a receiver can tell a stale event about a resource from
 * a newer one whatever order they arrive in (docs/decisions.md, "Events: the fate of every text").
 *
 * It rides inside the write that makes the change (an `ADD` clause, an attribute of the Put), so it
 * costs no extra request and no extra write unit, only a few bytes of the row; and being part of
 * that write it moves exactly when the change commits: a refused conditional write, a cancelled
 * transaction or a replayed stream record never bumps it. Numbers only grow; they may skip (a
 * write retried after a lost answer can count twice). No imports but a type: entity modules of any
 * context and the event derivation read the same name.
 */
import type { UpdateParts } from './update-expression';

export const ROW_SEQUENCE = 'sequence';

/** The attribute a new row is written with. */
export const FIRST_ROW_SEQUENCE = { [ROW_SEQUENCE]: 1 } as const;

/**
 * The same update (the parts `shared/table/update-expression.ts` builds an expression from), also
 * adding one to the row's sequence number.
 */
export function withRowSequenceBump(parts: UpdateParts): UpdateParts {
  return { ...parts, add: { ...parts.add, [ROW_SEQUENCE]: 1 } };
}

/** A row's sequence number; 0 for none (`webhook.test` is about no row). */
export const rowSequenceOf = (item: Record<string, unknown> | undefined): number => {
  const value = item?.[ROW_SEQUENCE];
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : 0;
};
