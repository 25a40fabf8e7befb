/**
 * Probe: does DynamoDB Local's time for `pk = :pk AND begins_with(sk, :prefix)` (Limit 51,
 * descending) grow with rows of OTHER sort-key prefixes in the same partition, while its
 * ScannedCount stays 51? And does the same condition written as a range,
 * `sk BETWEEN :prefix AND :successor` (what `sortKeyStartsWith` in lambdas/shared/table/keys.ts
 * writes), stay flat? Seeds 2,000 CONTACT# rows, measures, adds rows under MSG#, measures again,
 * then grows the contacts themselves to 100,000. Run: `npx tsx bench/probes/begins-with.ts`.
 */
import { openProbeTable } from './probe-table';

const PK = 'T#probe';
const rows = (prefix: string, from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    pk: PK,
    sk: `${prefix}${String(from + i).padStart(8, '0')}`,
    pad: 'x'.repeat(300),
  }));

const FORMS = [
  ['begins_with', 'pk = :pk AND begins_with(sk, :p)', { ':pk': PK, ':p': 'CONTACT#' }],
  ['BETWEEN', 'pk = :pk AND sk BETWEEN :lo AND :hi', { ':pk': PK, ':lo': 'CONTACT#', ':hi': 'CONTACT$' }],
] as const;

async function main() {
  const probe = await openProbeTable();
  const measure = async (label: string) => {
    for (const [form, condition, values] of FORMS) {
      const { p50Ms, scanned } = await probe.measure({
        KeyConditionExpression: condition,
        ExpressionAttributeValues: values,
        ScanIndexForward: false,
        Limit: 51,
      });
      console.log(`${label}, ${form}: ScannedCount ${scanned}, p50 ${p50Ms} ms`);
    }
  };
  try {
    await probe.put(rows('CONTACT#', 0, 2000));
    await measure('2,000 contacts, nothing else in the partition');
    await probe.put(rows('MSG#', 0, 20_000));
    await measure('2,000 contacts and 20,000 MSG# rows in the partition');
    await probe.put(rows('MSG#', 20_000, 80_000));
    await measure('2,000 contacts and 100,000 MSG# rows in the partition');
    await probe.put(rows('CONTACT#', 2000, 98_000));
    await measure('100,000 contacts and 100,000 MSG# rows in the partition');
  } finally {
    await probe.close();
  }
}
void main();
