import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { CONDITION, num, transactWrite, type Item } from '../../shared/table/dynamo';
import { PREFIX, TENANT_SK, type Key } from '../../shared/table/keys';
import { MOVED_AT } from '../../shared/table/row-types';
import { tenantKey } from '../tenants/tenants';
import { getMessageItem, keyOf, messageKey, messageSidKey } from './messages';
import { createSpendShards, hasSpendShards, spendShardKey } from './spend';
import { moveLegacyThread } from './threads';

/**
 * The key-layout migration of texting's rows (run by `npm run admin -- layout migrate`, which
 * scans for them): messages, their sid lookup rows and threads move from the organization's
 * partition to partitions of their own, and the organization's spend moves onto its spend shards.
 * Every step is one transaction guarded on the row being as read, so it runs while the API serves:
 * a write that lands first makes the step read again, a write after it goes to the new key (the
 * service reads both layouts until then). Idempotent: a moved row is gone from where the scan looks.
 */
export type MoveOutcome = 'moved' | 'gone';

const ROUNDS = 4;

const read = async (key: Key): Promise<Item | undefined> =>
  (await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: key, ConsistentRead: true }))).Item;

/** The organization of a row kept in its partition (`T#<id>`). */
const tenantOfLegacyRow = (row: Item): string => (row.pk as string).slice(PREFIX.tenant.length);

/** `row` without its key, stamped as moved (the webhook router derives no event from the move's insert). */
function movedCopy(row: Item, key: Key, movedAt: number): Item {
  const { pk: _pk, sk: _sk, ...fields } = row;
  return { ...fields, ...key, [MOVED_AT]: movedAt };
}

/**
 * A message row from `T#<org>` / `MSG#<id>` to its own partition, guarded on what status
 * callbacks, the sweep and the sid change (status, sid, the worklist entry) being as read.
 */
export async function moveLegacyMessage(legacy: Item, now = Date.now()): Promise<MoveOutcome> {
  let row: Item | undefined = legacy;
  for (let round = 0; round < ROUNDS; round += 1) {
    if (!row) return 'gone';
    const tenantId = row.tenantId as string;
    const reasons = await transactWrite([
      { Put: { TableName: TABLE_NAME, Item: movedCopy(row, messageKey(tenantId, row.id as string), now), ConditionExpression: CONDITION.rowIsNew } },
      {
        Delete: {
          TableName: TABLE_NAME,
          Key: keyOf(row),
          ConditionExpression: `#status = :status AND #sid = :sid AND ${row.gsi2pk === undefined ? 'attribute_not_exists(#gsi2pk)' : 'attribute_exists(#gsi2pk)'}`,
          ExpressionAttributeNames: { '#status': 'status', '#sid': 'messageSid', '#gsi2pk': 'gsi2pk' },
          ExpressionAttributeValues: { ':status': row.status, ':sid': row.messageSid ?? '' },
        },
      },
    ]);
    if (!reasons) return 'moved';
    row = await read(keyOf(row));
  }
  throw new Error(`moveLegacyMessage: message ${String(legacy.id)} kept changing; run the migration again`);
}

/** A sid lookup row from `T#<org>` / `MSGSID#<sid>` to its own partition (the sid rows never change). */
export async function moveLegacySid(legacy: Item, now = Date.now()): Promise<MoveOutcome> {
  const tenantId = tenantOfLegacyRow(legacy);
  const sid = (legacy.sk as string).slice(PREFIX.messageSid.length);
  const reasons = await transactWrite([
    {
      Put: {
        TableName: TABLE_NAME,
        Item: movedCopy(legacy, messageSidKey(tenantId, sid), now),
        ConditionExpression: `${CONDITION.rowIsNew} OR messageId = :id`,
        ExpressionAttributeValues: { ':id': legacy.messageId },
      },
    },
    { Delete: { TableName: TABLE_NAME, Key: keyOf(legacy), ConditionExpression: CONDITION.rowExists } },
  ]);
  return reasons ? 'gone' : 'moved';
}

/** A thread from `T#<org>` / `THREAD#<number>` to its own partition, its `lastStatus` read again from its last message. */
export async function moveLegacyThreadRow(legacy: Item): Promise<MoveOutcome> {
  const tenantId = tenantOfLegacyRow(legacy);
  const statusOf = async (messageId: string) => (await getMessageItem(tenantId, messageId).catch(() => undefined))?.status as string | undefined;
  let row: Item | undefined = legacy;
  for (let round = 0; round < ROUNDS; round += 1) {
    if (!row) return 'gone';
    if (await moveLegacyThread(tenantId, row, statusOf)) return 'moved';
    row = await read(keyOf(row));
  }
  throw new Error(`moveLegacyThreadRow: thread ${String(legacy.counterpartNumber)} kept changing; run the migration again`);
}

/**
 * The spend an organization row still records (`spendCents`) onto its shards: the shards made
 * with it, or, for spend a function of the previous version charged on the row after the shards
 * were made (during the deploy), added to shard 0, its headroom taken down by as much.
 */
export async function moveLegacySpend(tenantRow: Item): Promise<MoveOutcome> {
  let row: Item | undefined = tenantRow;
  for (let round = 0; round < ROUNDS; round += 1) {
    if (!row) return 'gone';
    if (!hasSpendShards(row)) {
      if (await createSpendShards(row)) return 'moved';
    } else {
      const spent = num(row.spendCents);
      if (spent === null) return 'moved';
      const reasons = await transactWrite([
        {
          Update: {
            TableName: TABLE_NAME,
            Key: tenantKey(row.id as string),
            UpdateExpression: 'REMOVE #spend',
            ConditionExpression: '#spend = :spent',
            ExpressionAttributeNames: { '#spend': 'spendCents' },
            ExpressionAttributeValues: { ':spent': spent },
          },
        },
        {
          Update: {
            TableName: TABLE_NAME,
            Key: spendShardKey(row.id as string, 0),
            UpdateExpression: 'ADD #spend :spent, #headroom :minusSpent',
            ConditionExpression: CONDITION.rowExists,
            ExpressionAttributeNames: { '#spend': 'spendCents', '#headroom': 'headroomCents' },
            ExpressionAttributeValues: { ':spent': spent, ':minusSpent': -spent },
          },
        },
      ]);
      if (!reasons) return 'moved';
    }
    row = await read({ pk: row.pk as string, sk: TENANT_SK });
  }
  throw new Error(`moveLegacySpend: organization ${String(tenantRow.id)} kept changing; run the migration again`);
}
