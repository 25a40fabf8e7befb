import { TransactionCanceledException, ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';

/** Named conditions, so every conditional write says what it guards in words. */
export const CONDITION = {
  rowIsNew: 'attribute_not_exists(pk)',
  rowExists: 'attribute_exists(pk)',
} as const;

export type CancellationReason = { code: string; item?: Record<string, unknown> };

/**
 * The per-item reasons of a cancelled transaction, in `TransactItems` order, with the old item
 * unmarshalled where the write asked for `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`.
 * Returns undefined for any other error, so callers rethrow what they do not understand.
 */
export function cancellationReasons(err: unknown): CancellationReason[] | undefined {
  if (!(err instanceof TransactionCanceledException) && (err as { name?: string })?.name !== 'TransactionCanceledException') {
    return undefined;
  }
  const reasons = (err as TransactionCanceledException).CancellationReasons ?? [];
  return reasons.map((reason) => ({
    code: reason.Code ?? 'None',
    item: reason.Item ? unmarshall(reason.Item) : undefined,
  }));
}

/** The reason of item `index` when it failed its condition, else undefined. */
export function failedCondition(reasons: CancellationReason[] | undefined, index: number): CancellationReason | undefined {
  const reason = reasons?.[index];
  return reason?.code === 'ConditionalCheckFailed' ? reason : undefined;
}

/**
 * Runs a transaction again when DynamoDB cancelled it for colliding with another transaction on
 * the same rows (`TransactionConflict`), which is transient: the retry sees the other's result.
 * Condition failures are not retried; they are answers.
 */
export async function retryOnTransactionConflict<T>(write: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await write();
    } catch (err) {
      const conflict = cancellationReasons(err)?.some((reason) => reason.code === 'TransactionConflict');
      if (!conflict || attempt >= attempts) throw err;
      // Jittered, growing pause so colliding writers do not collide again in lockstep.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
    }
  }
}

export const isConditionalCheckFailed = (err: unknown): boolean =>
  err instanceof ConditionalCheckFailedException || (err as { name?: string })?.name === 'ConditionalCheckFailedException';

/** Strips the table's key and bookkeeping attributes; entity `fromItem`s pick their fields from what is left. */
export type Item = Record<string, unknown>;

export const nowIso = (now: Date = new Date()): string => now.toISOString();

/** A nullable string attribute: absent and null both read as null. */
export const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
export const num = (value: unknown): number | null => (typeof value === 'number' ? value : null);
