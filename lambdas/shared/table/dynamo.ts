import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { NamedTransaction, type Refusal } from './named-transaction';

/** Named conditions, so every conditional write says what it guards in words. */
export const CONDITION = {
  rowIsNew: 'attribute_not_exists(pk)',
  rowExists: 'attribute_exists(pk)',
} as const;

/** One item of a TransactWriteItems request (a Put, Update, Delete or ConditionCheck). */
export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * Runs a transaction whose refusal nobody reads item by item: undefined when it committed, the refusal when
 * DynamoDB cancelled it for a condition. Name the items (./named-transaction.ts) to ask which one failed.
 */
export async function transactWrite(items: TransactItem[]): Promise<Refusal | undefined> {
  return new NamedTransaction().add('items', ...items).write();
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
