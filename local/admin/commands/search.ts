import { z } from 'zod';
import { parseOptions } from '../options';
import { defineCommand } from '../registry';
import { SCAN_OPTIONS, SCAN_USAGE, scanOptionsSchema, scanTable } from '../table-scan';

/**
 * `search backfill`: the one-off migration to the contact search index. Contacts written before
 * it have no search rows (and search cannot find them); this files each one under its entries
 * (lambdas/contexts/contacts/search-backfill.ts). It reads the whole table with a paginated
 * Scan (../table-scan.ts: resumable with `--cursor`). Idempotent: an indexed contact is skipped,
 * so a second run writes nothing.
 */
export const searchBackfill = defineCommand({
  words: ['search', 'backfill'],
  summary: 'File contacts written before the search index under their search entries; idempotent, resumable with --cursor',
  usage: SCAN_USAGE,
  options: SCAN_OPTIONS,
  parse: ({ values }) => parseOptions(z.object(scanOptionsSchema), values),
  run: async (args) => {
    const { indexContactRow } = await import('../../../lambdas/contexts/contacts/search-backfill');
    const counts = { indexed: 0, alreadyIndexed: 0, deleted: 0 };
    const scan = await scanTable(
      args,
      {
        FilterExpression: '#type = :contact AND attribute_not_exists(#searchIndex)',
        ExpressionAttributeNames: { '#type': 'type', '#searchIndex': 'searchIndex' },
        ExpressionAttributeValues: { ':contact': 'contact' },
      },
      async (row) => {
        counts[await indexContactRow(row)] += 1;
      },
      () => `search backfill: ${counts.indexed} indexed so far`,
    );
    return { pages: scan.pages, scanned: scan.scanned, ...counts, nextCursor: scan.nextCursor };
  },
});
