/**
 * Probe: does DynamoDB Local's time for a Query that names only an index partition key (the
 * conversation: `gsi1pk = :pk`, Limit 51, descending) grow with the rows of that partition? Grows
 * one `gsi1` partition to 100, 1,000 and 10,000 rows (the bench's conversation sizes) and measures
 * the key alone and the key with a sort-key range. Run: `npx tsx bench/probes/index-partition.ts`.
 */
import { openProbeTable } from './probe-table';

const CONVERSATION = 'T#probe#CONVERSATION#+14155550100';
const FORMS = [
  ['pk only', 'gsi1pk = :pk', { ':pk': CONVERSATION }],
  ['pk + range', 'gsi1pk = :pk AND gsi1sk BETWEEN :a AND :b', { ':pk': CONVERSATION, ':a': 'MSG#', ':b': 'MSG$' }],
] as const;

async function main() {
  const probe = await openProbeTable();
  try {
    let have = 0;
    for (const size of [100, 1000, 10_000]) {
      const sks = Array.from({ length: size - have }, (_, i) => `MSG#${String(have + i).padStart(8, '0')}`);
      await probe.put(
        sks.map((sk) => ({ pk: 'T#probe', sk, gsi1pk: CONVERSATION, gsi1sk: sk, body: 'x'.repeat(300) })),
      );
      have = size;
      for (const [form, condition, values] of FORMS) {
        const { p50Ms } = await probe.measure({
          IndexName: 'gsi1',
          KeyConditionExpression: condition,
          ExpressionAttributeValues: values,
          ScanIndexForward: false,
          Limit: 51,
        });
        console.log(`${size} rows in the index partition, ${form}: p50 ${p50Ms} ms`);
      }
    }
  } finally {
    await probe.close();
  }
}
void main();
