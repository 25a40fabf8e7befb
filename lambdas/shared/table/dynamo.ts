import { TransactionCanceledException, ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { dynamo } from '../aws';
import { isContention } from './contention';

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
  if (
    !(err instanceof TransactionCanceledException) &&
    (err as { name?: string })?.name !== 'TransactionCanceledException'
  ) {
    return undefined;
  }
  const reasons = (err as TransactionCanceledException).CancellationReasons ?? [];
  return reasons.map((reason) => ({
    code: reason.Code ?? 'None',
    item: reason.Item ? unmarshall(reason.Item) : undefined,
  }));
}

/** The reason of item `index` when it failed its condition, else undefined. */
export function failedCondition(
  reasons: CancellationReason[] | undefined,
  index: number,
): CancellationReason | undefined {
  const reason = reasons?.[index];
  return reason?.code === 'ConditionalCheckFailed' ? reason : undefined;
}

/** One item of a TransactWriteItems request (a Put, Update, Delete or ConditionCheck). */
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * Runs a transaction. Returns undefined when it committed, or the per-item reasons when DynamoDB
 * cancelled it for a condition (an answer for the caller to read). Contention (a conflict with
 * another transaction, a throttle) was already retried by the client (./contention.ts) and is
 * thrown when it outlasted the retries, like every other error.
 */
export async function transactWrite(items: TransactItem[]): Promise<CancellationReason[] | undefined> {
  try {
    await dynamo.send(new TransactWriteCommand({ TransactItems: items }));
    return undefined;
  } catch (err) {
    const reasons = cancellationReasons(err);
    if (!reasons || isContention(err)) throw err;
    return reasons;
  }
}

export const isConditionalCheckFailed = (err: unknown): boolean =>
  err instanceof ConditionalCheckFailedException ||
  (err as { name?: string })?.name === 'ConditionalCheckFailedException';

/** Strips the table's key and bookkeeping attributes; entity `fromItem`s pick their fields from what is left. */
export type Item = Record<string, unknown>;

export const nowIso = (now: Date = new Date()): string => now.toISOString();

/** A nullable string attribute: absent and null both read as null. */
export const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
export const num = (value: unknown): number | null => (typeof value === 'number' ? value : null);
