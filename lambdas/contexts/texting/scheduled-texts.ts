import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, logger, metrics, MetricUnit, TABLE_NAME } from '../../shared/aws';
import { DomainError } from '../../shared/errors';
import type { Item } from '../../shared/table/dynamo';
import { NamedTransaction } from '../../shared/table/named-transaction';
import { withRowSequenceBump } from '../../shared/table/row-sequence';
import { GSIS } from '../../shared/table/table-schema';
import { updateExpression } from '../../shared/table/update-expression';
import { notOptedOutCheck } from '../consent/ledger';
import { policyOf, readOrganizationRow } from '../tenants/billing-policy';
import { quietHoursOf } from '../tenants/quiet-hours-policy';
import type { Carrier } from './carrier-port';
import { DUE_SHARDS, dueCutoff, duePk, scheduledToDelete } from './due-list';
import { handOver } from './hand-over';
import { fromItem, getMessageItem, keyOf, unsettledIndexKeys } from './messages';
import { heldUntil } from './quiet-hours-rule';
import { cancelScheduledText, followInThread, moveScheduled } from './scheduled-changes';
import type { Message } from './schemas';
import { roundLost } from '../../shared/table/rounds-lost';

/**
 * The firing of scheduled texts: `fireDueTexts` is one run, called every minute (a Lambda on an
 * EventBridge schedule on AWS, a timer in the local runtime: local/scheduled-texts.ts).
 *
 * Contract (for whoever schedules it):
 * - It reads only the due list (gsi2 `DUE#<shard>`, each shard from its oldest entry up to `now`:
 *   ./due-list.ts), never the messages; a text is due when its `sendAt` <= `now`.
 * - Each due text goes to the carrier at most once, whatever runs overlap or repeat: the move
 *   `scheduled -> queued` is one transaction guarded on the row still `scheduled` at the `sendAt`
 *   read, with the consent check; only the run whose write commits hands it over. Runs may overlap
 *   (a slow run and the next one) and a crashed run is simply continued by the next.
 * - At its time a text is judged again: a number that opted out meanwhile -> `canceled`
 *   (`opted_out`), refunded, never texted; an organization whose billing is blocked -> `canceled`
 *   (`billing`), refunded; a recipient whose quiet-hours window is closed at `now` under the
 *   policy then in force (changed since, or the window ended before the firing) -> moved to the
 *   window's next opening, its charge still reserved, whatever the mode (it was accepted already).
 *   Otherwise the carrier's outcome is handled as a send's (./hand-over.ts): accepted, unknown
 *   (stays queued; the settlement sweep settles it), refused or not sent (failed and refunded). A refusal is counted as sent (it reached the carrier), not thrown.
 * - `deadline` (epoch ms): no new text is started after it; what is left stays due for the next run
 *   (set it some seconds before the Lambda's timeout). `concurrency` texts are handled at once
 *   (default: one per shard). Throws only when the table fails on the due list itself; a text
 *   whose own handling failed is logged, counted in `errors`, and left for the next run.
 * - Never fires before `sendAt`; "within a minute after" holds when it runs every minute and a run
 *   finishes its due texts within the minute (the bench measures how many that is).
 */
export type FireOptions = {
  /** The clock (tests drive it); default the real time. */
  now?: Date;
  /** Epoch ms after which no further text is started. */
  deadline?: number;
  carrier: Carrier;
  /** Texts handled at once across the shards (default DUE_SHARDS). */
  concurrency?: number;
};

export type FireResult = {
  /** Due-list entries read. */
  examined: number;
  /** Texts this run handed to the carrier. */
  sent: number;
  /** Texts canceled at their time (opted out, billing blocked). */
  canceled: number;
  /** Texts whose recipient's window was closed at their time (quiet hours): moved to its next opening. */
  deferred: number;
  /** Entries another run or a cancel had already taken, or moved later meanwhile. */
  skipped: number;
  /** Texts whose handling failed (the table); they stay due. */
  errors: number;
  /** The latest a text of this run was handed over after its `sendAt`, in ms (0 when none was). */
  maxLateMs: number;
};

type Outcome = { kind: 'sent'; lateMs: number } | { kind: 'canceled' | 'deferred' | 'skipped' };

export async function fireDueTexts(options: FireOptions): Promise<FireResult> {
  const now = options.now ?? new Date();
  const result: FireResult = { examined: 0, sent: 0, canceled: 0, deferred: 0, skipped: 0, errors: 0, maxLateMs: 0 };
  const shards = Array.from({ length: DUE_SHARDS }, (_, shard) => shard);
  const workers = Math.max(1, Math.min(options.concurrency ?? DUE_SHARDS, DUE_SHARDS));
  const startedAt = Date.now();
  const run = {
    pastDeadline: () => options.deadline !== undefined && Date.now() >= options.deadline,
    elapsed: () => Date.now() - startedAt,
  };
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let shard = shards.shift(); shard !== undefined && !run.pastDeadline(); shard = shards.shift()) {
        await fireShard(shard, now, options.carrier, result, run);
      }
    }),
  );
  if (result.sent + result.canceled + result.deferred > 0) {
    metrics.addMetric('ScheduledTextsFired', MetricUnit.Count, result.sent);
    metrics.addMetric('ScheduledTextsCanceledAtTheirTime', MetricUnit.Count, result.canceled);
    metrics.addMetric('ScheduledTextsDeferredForQuietHours', MetricUnit.Count, result.deferred);
    metrics.addMetric('ScheduledTextsMaxLateMs', MetricUnit.Milliseconds, result.maxLateMs);
  }
  return result;
}

/** One shard of the due list, oldest first, up to `now`, a page at a time. */
async function fireShard(
  shard: number,
  now: Date,
  carrier: Carrier,
  result: FireResult,
  run: { pastDeadline: () => boolean; elapsed: () => number },
): Promise<void> {
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: TABLE_NAME,
        IndexName: GSIS.gsi2.indexName,
        KeyConditionExpression: '#pk = :pk AND #sk < :cutoff',
        ExpressionAttributeNames: { '#pk': GSIS.gsi2.partitionKey, '#sk': GSIS.gsi2.sortKey },
        ExpressionAttributeValues: { ':pk': duePk(shard), ':cutoff': dueCutoff(now) },
        Limit: 100,
        ExclusiveStartKey: startKey,
      }),
    );
    for (const entry of page.Items ?? []) {
      if (run.pastDeadline()) return;
      result.examined += 1;
      await fireOneCounted(entry, now, carrier, result, run.elapsed);
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

async function fireOneCounted(
  entry: Item,
  now: Date,
  carrier: Carrier,
  result: FireResult,
  elapsed: () => number,
): Promise<void> {
  try {
    const outcome = await fireOne(entry.tenantId as string, entry.id as string, now, carrier, elapsed);
    if (outcome.kind === 'sent') {
      result.sent += 1;
      result.maxLateMs = Math.max(result.maxLateMs, outcome.lateMs);
    } else result[outcome.kind] += 1;
  } catch (err) {
    result.errors += 1;
    logger.error('Could not fire a scheduled text; the next run tries again', {
      messageId: entry.id,
      error: (err as Error).message,
    });
  }
}

/**
 * One due text: judged again at its time (billing, quiet hours, consent), then moved `scheduled -> queued` in
 * one transaction with the consent check (the guard: only the run whose write commits hands it
 * over), then handed to the carrier exactly as a send is.
 */
export async function fireOne(
  tenantId: string,
  messageId: string,
  now: Date,
  carrier: Carrier,
  elapsed: () => number = () => 0,
): Promise<Outcome> {
  const row = await getMessageItem(tenantId, messageId);
  const message = fromItem(row);
  if (message.status !== 'scheduled' || !message.sendAt || new Date(message.sendAt) > now) return { kind: 'skipped' };
  const organizationRow = await readOrganizationRow(tenantId);
  if (policyOf(organizationRow).billingStatus !== 'active') return cancelAtItsTime(tenantId, messageId, 'billing');
  // Judged at the run's clock (its `now` plus the time it has taken), the instant the text would go.
  const text = { to: message.toNumber, category: message.category };
  const allowedAt = await heldUntil(text, new Date(now.getTime() + elapsed()), quietHoursOf(organizationRow));
  if (allowedAt) return (await moveScheduled(row, message, allowedAt)) ? { kind: 'deferred' } : { kind: 'skipped' };
  const refusal = await new NamedTransaction<'message' | 'consent' | 'scheduledTo'>(FIRE_SITE)
    .add('message', queueWrite(row, message, now))
    .add('consent', notOptedOutCheck(tenantId, message.toNumber))
    .add('scheduledTo', scheduledToDelete(tenantId, message.toNumber, messageId))
    .write();
  if (refusal) {
    if (refusal.failed('message')) {
      roundLost(FIRE_SITE);
      return { kind: 'skipped' }; // fired, canceled or moved meanwhile
    }
    if (refusal.failed('consent')) return cancelAtItsTime(tenantId, messageId, 'opted_out');
    throw new Error(`fireOne: message ${messageId} was refused (${refusal.codes})`);
  }
  const queued: Message = { ...message, status: 'queued' };
  await followInThread(queued, 'queued');
  try {
    await handOver(queued, carrier);
  } catch (err) {
    // The carrier's refusal is the text's outcome (failed, refunded, its event raised): nobody to answer.
    if (!(err instanceof DomainError)) throw err;
  }
  // Late by the run's clock: `now` plus the time this run has taken so far.
  return { kind: 'sent', lateMs: Math.max(0, now.getTime() + elapsed() - new Date(message.sendAt).getTime()) };
}

/** Where a scheduled text is fired (shared/table/rounds-lost.ts): lost to a cancel or a move meanwhile. */
const FIRE_SITE = 'texting.fire';

/**
 * `scheduled -> queued`, guarded on the row as read (still scheduled, same time): it leaves the due
 * list and enters the settlement worklist from now, so the sweep's grace counts from the handover.
 */
function queueWrite(row: Item, message: Message, now: Date) {
  return {
    Update: {
      TableName: TABLE_NAME,
      Key: keyOf(row),
      ...updateExpression(
        withRowSequenceBump({ set: { status: 'queued', ...unsettledIndexKeys(message, now.toISOString()) } }),
        {
          expression: '#status = :scheduled AND #sendAt = :sendAt',
          names: { '#status': 'status', '#sendAt': 'sendAt' },
          values: { ':scheduled': 'scheduled', ':sendAt': message.sendAt },
        },
      ),
    },
  };
}

async function cancelAtItsTime(tenantId: string, messageId: string, reason: 'billing' | 'opted_out'): Promise<Outcome> {
  try {
    await cancelScheduledText(tenantId, messageId, reason);
    return { kind: 'canceled' };
  } catch (err) {
    if (err instanceof DomainError && err.code === 'not_scheduled') return { kind: 'skipped' };
    throw err;
  }
}
