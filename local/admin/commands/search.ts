import { z } from 'zod';
import { option, parseOptions } from '../options';
import { defineCommand } from '../registry';

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

/**
 * `search backfill`: the one-off migration to the contact search index. Contacts written before
 * it have no search rows (and search cannot find them); this files each one under its entries
 * (lambdas/contexts/contacts/search-backfill.ts). It reads the whole table with a paginated
 * Scan: an operator's migration, never a request path. Idempotent: an indexed contact is skipped,
 * so a second run writes nothing. Resumable: after every page it prints the cursor to stderr, and
 * `--cursor` starts there; `--pages` stops after that many pages and returns `nextCursor`.
 */
export const searchBackfill = defineCommand({
  words: ['search', 'backfill'],
  summary: 'File contacts written before the search index under their search entries; idempotent, resumable with --cursor',
  usage: '[--cursor <c>] [--pages <n>] [--page-size <n>]',
  options: { cursor: { type: 'string' }, pages: { type: 'string' }, 'page-size': { type: 'string' } },
  parse: ({ values }) =>
    parseOptions(z.object({ cursor: cursorOption.optional(), pages: option.wholeNumber.optional(), 'page-size': option.wholeNumber.optional() }), values),
  run: async (args) => {
    const [{ ScanCommand }, { dynamo, TABLE_NAME }, { indexContactRow }] = await Promise.all([
      import('@aws-sdk/lib-dynamodb'),
      import('../../../lambdas/shared/aws'),
      import('../../../lambdas/contexts/contacts/search-backfill'),
    ]);
    const result = { pages: 0, scanned: 0, indexed: 0, alreadyIndexed: 0, deleted: 0, nextCursor: null as string | null };
    let startKey = args.cursor;
    do {
      const page = await dynamo.send(
        new ScanCommand({
          TableName: TABLE_NAME,
          FilterExpression: '#type = :contact AND attribute_not_exists(#searchIndex)',
          ExpressionAttributeNames: { '#type': 'type', '#searchIndex': 'searchIndex' },
          ExpressionAttributeValues: { ':contact': 'contact' },
          ExclusiveStartKey: startKey,
          Limit: args['page-size'],
        }),
      );
      result.pages += 1;
      result.scanned += page.ScannedCount ?? 0;
      for (const row of page.Items ?? []) result[await indexContactRow(row)] += 1;
      startKey = page.LastEvaluatedKey;
      result.nextCursor = startKey ? encodeCursor(startKey) : null;
      if (result.nextCursor) process.stderr.write(`search backfill: ${result.indexed} indexed so far; resume with --cursor ${result.nextCursor}\n`);
    } while (startKey && (args.pages === undefined || result.pages < args.pages));
    return result;
  },
});
