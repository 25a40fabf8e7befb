import { z } from 'zod';
import { parseOptions } from '../options';
import { defineCommand } from '../registry';

/**
 * `consent backfill`: the one-off migration to the consent ledger. Before the ledger, consent was
 * stored on contact rows; this copies every recorded consent (`opted_in`, `opted_out`) into its
 * number's ledger row, at the time it was recorded. The ledger keeps the later change, so running it
 * again, or after the number texted a newer keyword, changes nothing: it is idempotent and a run
 * that stopped can simply be started again. It reads the whole table (a paginated Scan for contact
 * rows): an operator's migration, never a request path.
 */
export const consentBackfill = defineCommand({
  words: ['consent', 'backfill'],
  summary: "Copy consent recorded on contacts (before the consent ledger) into each number's ledger row; idempotent, safe to re-run",
  usage: '',
  options: {},
  parse: ({ values }) => parseOptions(z.object({}), values),
  run: async () => {
    const [{ ScanCommand }, { dynamo, TABLE_NAME }, { recordConsentChange }] = await Promise.all([
      import('@aws-sdk/lib-dynamodb'),
      import('../../../lambdas/shared/aws'),
      import('../../../lambdas/contexts/contacts/consent-copies'),
    ]);
    const result = { scanned: 0, contactsWithConsent: 0, recorded: 0, newerOnRecord: 0 };
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await dynamo.send(
        new ScanCommand({
          TableName: TABLE_NAME,
          FilterExpression: '#type = :contact AND #status IN (:in, :out) AND attribute_type(#number, :string)',
          ExpressionAttributeNames: { '#type': 'type', '#status': 'consentStatus', '#number': 'normalizedNumber' },
          ExpressionAttributeValues: { ':contact': 'contact', ':in': 'opted_in', ':out': 'opted_out', ':string': 'S' },
          ExclusiveStartKey: startKey,
        }),
      );
      result.scanned += page.ScannedCount ?? 0;
      for (const row of page.Items ?? []) {
        result.contactsWithConsent += 1;
        const at = new Date((row.consentAt as string | undefined) ?? (row.updatedAt as string));
        const recorded = await recordConsentChange(row.tenantId as string, row.normalizedNumber as string, {
          status: row.consentStatus as 'opted_in' | 'opted_out',
          source: (row.consentSource as string | undefined) ?? 'sms_keyword',
          at,
          note: (row.consentNote as string | undefined) ?? 'Copied from the contact (consent backfill)',
        });
        if (recorded) result.recorded += 1;
        else result.newerOnRecord += 1;
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return result;
  },
});
