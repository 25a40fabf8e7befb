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
 * write retried after a lost answer can count twice). No imports: entity modules of any context
 * and the event derivation read the same name.
 */
export const ROW_SEQUENCE = 'sequence';

/** The attribute a new row is written with. */
export const FIRST_ROW_SEQUENCE = { [ROW_SEQUENCE]: 1 } as const;

type UpdateParts = {
  UpdateExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
};

const NAME = '#rowSequence';
const STEP = ':rowSequenceStep';
/** `ADD` as a clause keyword (not inside a placeholder such as `#ADDRESS`). */
const ADD_CLAUSE = /(^|\s)ADD\s+/i;

/**
 * The same update, also adding one to the row's sequence number. An update that already has an
 * `ADD` clause gets the counter in it (DynamoDB allows each clause once).
 */
export function withRowSequenceBump<T extends UpdateParts>(update: T): T {
  const expression = update.UpdateExpression ?? '';
  const counter = `${NAME} ${STEP}`;
  const UpdateExpression = ADD_CLAUSE.test(expression)
    ? expression.replace(ADD_CLAUSE, (clause) => `${clause}${counter}, `)
    : `${expression} ADD ${counter}`.trim();
  return {
    ...update,
    UpdateExpression,
    ExpressionAttributeNames: { ...update.ExpressionAttributeNames, [NAME]: ROW_SEQUENCE },
    ExpressionAttributeValues: { ...update.ExpressionAttributeValues, [STEP]: 1 },
  };
}

/** A row's sequence number; 0 for none (`webhook.test` is about no row). */
export const rowSequenceOf = (item: Record<string, unknown> | undefined): number => {
  const value = item?.[ROW_SEQUENCE];
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : 0;
};
