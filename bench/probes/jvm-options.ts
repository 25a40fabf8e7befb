/**
 * DynamoDB Local's CPU per call under each set of JVM options, side by side (bench/README section 11, "CPU per
 * request, 2026-11-29 round 4"). One DynamoDB Local per set, all started and loaded at once, so each meets the same
 * load from the rest of the machine: on a shared machine, runs one after another differed by a fifth with the same
 * options. Each gets the service's table (its six indexes and its stream) and the same mix of calls, a send's shapes:
 * a put with index keys, a conditional update, a transaction of a put, an update and a condition check, a read, a
 * batched read of three rows and a page of a partition. After `--warmup` seconds (the JIT's start-up), the JVM's CPU
 * over `--seconds` is divided by the rounds of the mix it served.
 *
 *   npx tsx bench/probes/jvm-options.ts --options '-XX:+UseG1GC' --options '-XX:+UseSerialGC' [--warmup 60]
 *     [--seconds 60] [--concurrency 8]
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.AWS_REGION ??= 'local';
// The shared config the local modules load reads it; this probe's table is its own.
process.env.TABLE_NAME ??= 'jvm-options';

import {
  BatchGetItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';

const args = process.argv.slice(2);
const optionValue = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const OPTION_SETS = args.flatMap((arg, i) => (arg === '--options' ? [args[i + 1]] : []));
const WARMUP_S = Number(optionValue('--warmup') ?? 60);
const SECONDS = Number(optionValue('--seconds') ?? 60);
const CONCURRENCY = Number(optionValue('--concurrency') ?? 8);
const TABLE = 'jvm-options';
const TENANTS = 20;
const s = (value: string): AttributeValue => ({ S: value });

/** One round of the mix for `tenant`'s `n`-th text: 8 calls, 4 of them writes. */
async function round(client: DynamoDBClient, tenant: number, n: number): Promise<void> {
  const pk = `T#${tenant}#MSG#${n % 400}`;
  const body = 'x'.repeat(160);
  const message = {
    pk: s(pk),
    sk: s('MESSAGE'),
    gsi1pk: s(`T#${tenant}#THREADS`),
    gsi1sk: s(String(Date.now())),
    gsi2pk: s(`T#${tenant}#OUT`),
    gsi2sk: s(`${Date.now()}#${n}`),
    id: s(`id-${tenant}-${n}`),
    tenantId: s(`t${tenant}`),
    body: s(body),
    status: s('queued'),
  };
  await client.send(new PutItemCommand({ TableName: TABLE, Item: message }));
  await client.send(
    new UpdateItemCommand({
      TableName: TABLE,
      Key: { pk: s(pk), sk: s('MESSAGE') },
      UpdateExpression: 'SET #s = :s, sid = :sid',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(sid)',
      ExpressionAttributeNames: { '#s': 'status' },
      ExpressionAttributeValues: { ':s': s('sent'), ':sid': s(`SM${n}`) },
    }),
  );
  await client.send(
    new TransactWriteItemsCommand({
      TransactItems: [
        { Put: { TableName: TABLE, Item: { ...message, pk: s(`${pk}#LEDGER`), sk: s(`E#${n}`) } } },
        {
          Update: {
            TableName: TABLE,
            Key: { pk: s(`T#${tenant}`), sk: s(`SPEND#${n % 4}`) },
            UpdateExpression: 'ADD cents :c',
            ExpressionAttributeValues: { ':c': { N: '1' } },
          },
        },
        {
          ConditionCheck: {
            TableName: TABLE,
            Key: { pk: s(`T#${tenant}#CONSENT`), sk: s('CONSENT') },
            ConditionExpression: 'attribute_not_exists(optedOut)',
          },
        },
      ],
    }),
  );
  await client.send(
    new GetItemCommand({ TableName: TABLE, Key: { pk: s(pk), sk: s('MESSAGE') }, ConsistentRead: true }),
  );
  const keys = [0, 1, 2].map((k) => ({ pk: s(`T#${tenant}#MSG#${(n + k) % 400}`), sk: s('MESSAGE') }));
  await client.send(new BatchGetItemCommand({ RequestItems: { [TABLE]: { Keys: keys, ConsistentRead: true } } }));
  await client.send(
    new QueryCommand({
      TableName: TABLE,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :p',
      ExpressionAttributeValues: { ':p': s(`T#${tenant}#THREADS`) },
      ScanIndexForward: false,
      Limit: 20,
    }),
  );
}

type Engine = {
  options: string;
  pid: number | undefined;
  client: DynamoDBClient;
  rounds: number;
  stop: () => Promise<void>;
};

async function startEngine(options: string): Promise<Engine> {
  const { localDynamoClient, startDynamoDbLocal } = await import('../../local/dynamodb-local');
  const { ensureTable } = await import('../../local/create-table');
  const ddb = await startDynamoDbLocal({ jvmOptions: options });
  const client = localDynamoClient(ddb.endpoint);
  await ensureTable(client, TABLE);
  return { options, pid: ddb.pid, client, rounds: 0, stop: ddb.stop };
}

async function main(): Promise<void> {
  if (OPTION_SETS.length === 0) throw new Error('--options <JVM options>: at least one');
  const { processCpuMs } = await import('../support/webhook-bench');
  const engines = await Promise.all(OPTION_SETS.map(startEngine));
  let stopAt = Date.now() + (WARMUP_S + SECONDS) * 1000;
  const load = engines.map((engine) =>
    Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, worker) => {
        for (let n = worker; Date.now() < stopAt; n += CONCURRENCY) {
          await round(engine.client, n % TENANTS, n);
          engine.rounds += 1;
        }
      }),
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, WARMUP_S * 1000));
  const before = engines.map((e) => ({ cpu: processCpuMs(e.pid) ?? 0, rounds: e.rounds, at: Date.now() }));
  await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  const after = engines.map((e) => ({ cpu: processCpuMs(e.pid) ?? 0, rounds: e.rounds, at: Date.now() }));
  stopAt = 0;
  await Promise.all(load);
  engines.forEach((engine, i) => {
    const rounds = after[i].rounds - before[i].rounds;
    const perRound = (after[i].cpu - before[i].cpu) / Math.max(1, rounds);
    const perSecond = rounds / ((after[i].at - before[i].at) / 1000);
    console.log(
      `${engine.options}: ${rounds} rounds (${perSecond.toFixed(1)}/s), JVM CPU ${perRound.toFixed(2)} ms per round ` +
        `of 8 calls`,
    );
  });
  for (const engine of engines) {
    engine.client.destroy();
    await engine.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
