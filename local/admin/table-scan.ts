import { z } from 'zod';
import type { ScanCommandInput } from '@aws-sdk/lib-dynamodb';
import { option } from './options';

/**
 * The paginated, resumable Scan of the table that the operator's migrations run (never a request
 * path): after every page it prints the cursor to stderr, so an interrupted run goes on with
 * `--cursor`; `--pages` stops after that many pages and returns `nextCursor`; `--page-size` bounds
 * the rows each page reads.
 */
type Row = Record<string, unknown>;

/** A Scan position as the operator carries it between runs: the LastEvaluatedKey, base64url JSON. */
const encodeCursor = (key: Record<string, unknown>): string => Buffer.from(JSON.stringify(key)).toString('base64url');

const cursorOption = z.string().transform((raw, ctx) => {
  try {
    const key: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
    if (key && typeof key === 'object' && 'pk' in key && 'sk' in key) return key as Record<string, unknown>;
  } catch {
    // reported below
  }
  ctx.addIssue({ code: 'custom', message: 'must be a cursor printed by an earlier run' });
  return z.NEVER;
});

export const SCAN_OPTIONS = { cursor: { type: 'string' }, pages: { type: 'string' }, 'page-size': { type: 'string' } } as const;
export const SCAN_USAGE = '[--cursor <c>] [--pages <n>] [--page-size <n>]';
export const scanOptionsSchema = {
  cursor: cursorOption.optional(),
  pages: option.wholeNumber.optional(),
  'page-size': option.wholeNumber.optional(),
};

export type ScanArgs = { cursor?: Record<string, unknown>; pages?: number; 'page-size'?: number };
export type ScanProgress = { pages: number; scanned: number; nextCursor: string | null };

/** Runs `onRow` on every row the filtered Scan finds, page by page; `progress` names what was done so far. */
export async function scanTable(
  args: ScanArgs,
  filter: Pick<ScanCommandInput, 'FilterExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'>,
  onRow: (row: Row) => Promise<void>,
  progress: () => string,
): Promise<ScanProgress> {
  const [{ ScanCommand }, { dynamo, TABLE_NAME }] = await Promise.all([import('@aws-sdk/lib-dynamodb'), import('../../lambdas/shared/aws')]);
  const result: ScanProgress = { pages: 0, scanned: 0, nextCursor: null };
  let startKey = args.cursor;
  do {
    const page = await dynamo.send(new ScanCommand({ TableName: TABLE_NAME, ...filter, ExclusiveStartKey: startKey, Limit: args['page-size'] }));
    result.pages += 1;
    result.scanned += page.ScannedCount ?? 0;
    for (const row of page.Items ?? []) await onRow(row);
    startKey = page.LastEvaluatedKey;
    result.nextCursor = startKey ? encodeCursor(startKey) : null;
    if (result.nextCursor) process.stderr.write(`${progress()}; resume with --cursor ${result.nextCursor}\n`);
  } while (startKey && (args.pages === undefined || result.pages < args.pages));
  return result;
}
