import { z } from 'zod';
import { parseOptions } from '../options';
import { defineCommand } from '../registry';
import { SCAN_OPTIONS, SCAN_USAGE, scanOptionsSchema, scanTable } from '../table-scan';

/**
 * `layout migrate`: the one-off migration of a stage deployed before texts, threads and spend had
 * partition keys of their own and contacts carried their number's consent. It scans the table
 * (../table-scan.ts: resumable with `--cursor`) for rows of the old layout and moves each in one
 * transaction guarded on the row being unchanged (lambdas/contexts/texting/layout-migration.ts,
 * contacts/consent-copies.ts): message rows and their sid rows, threads (their `lastStatus` read
 * again from their last message), an organization's spend onto its spend shards, and the consent
 * copy onto contacts written before it. It runs while the API serves (which reads both layouts
 * until then) and is idempotent: a second run finds nothing to do.
 */
export const layoutMigrate = defineCommand({
  words: ['layout', 'migrate'],
  summary: 'Move rows of the old key layout (texts, threads, spend, contacts without their consent copy); idempotent, resumable with --cursor',
  usage: SCAN_USAGE,
  options: SCAN_OPTIONS,
  parse: ({ values }) => parseOptions(z.object(scanOptionsSchema), values),
  run: async (args) => {
    const [migration, { copyConsentOntoContact }] = await Promise.all([
      import('../../../lambdas/contexts/texting/layout-migration'),
      import('../../../lambdas/contexts/contacts/consent-copies'),
    ]);
    const moved = { messages: 0, messageSids: 0, threads: 0, organizations: 0, contacts: 0, gone: 0 };
    const count = (what: keyof typeof moved, outcome: string) => {
      // A contact whose copy already equals its ledger row needs nothing: not counted.
      if (outcome !== 'alreadyCopied') moved[outcome === 'moved' || outcome === 'copied' ? what : 'gone'] += 1;
    };
    const scan = await scanTable(
      args,
      {
        FilterExpression: [
          '(#type = :message AND begins_with(sk, :messagePrefix))',
          '(#type = :messageSid AND begins_with(sk, :sidPrefix))',
          '(#type = :thread AND begins_with(sk, :threadPrefix))',
          // An organization that never spent gets its shards at its first send; one whose row records spend moves it.
          '(#type = :tenant AND attribute_exists(#spend))',
          // Every contact with a number: a copy from before the ledger can be stale (compared, not trusted).
          '(#type = :contact AND attribute_exists(#number))',
        ].join(' OR '),
        ExpressionAttributeNames: { '#type': 'type', '#spend': 'spendCents', '#number': 'normalizedNumber' },
        ExpressionAttributeValues: {
          ':message': 'message',
          ':messagePrefix': 'MSG#',
          ':messageSid': 'messageSid',
          ':sidPrefix': 'MSGSID#',
          ':thread': 'thread',
          ':threadPrefix': 'THREAD#',
          ':tenant': 'tenant',
          ':contact': 'contact',
        },
      },
      async (row) => {
        if (row.type === 'message') count('messages', await migration.moveLegacyMessage(row));
        else if (row.type === 'messageSid') count('messageSids', await migration.moveLegacySid(row));
        else if (row.type === 'thread') count('threads', await migration.moveLegacyThreadRow(row));
        else if (row.type === 'tenant') count('organizations', await migration.moveLegacySpend(row));
        else if (row.type === 'contact') count('contacts', await copyConsentOntoContact(row));
      },
      () => `layout migrate: ${JSON.stringify(moved)} so far`,
    );
    return { pages: scan.pages, scanned: scan.scanned, moved, nextCursor: scan.nextCursor };
  },
});
