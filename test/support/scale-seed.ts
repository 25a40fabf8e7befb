import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchPutItems } from '../../lambdas/shared/table/batch-write';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { uuidv7 } from '../../lambdas/shared/ids';
import type { Item } from '../../lambdas/shared/table/dynamo';
import { newContactRows } from '../../lambdas/contexts/contacts/contact-rows';
import { sidItem, toItem as messageItem } from '../../lambdas/contexts/texting/messages';
import type { Message } from '../../lambdas/contexts/texting/schemas';
import { toItem as threadItem } from '../../lambdas/contexts/texting/threads';

/**
 * Large organizations seeded through the service's own write path, in batches: contacts as the
 * rows `createContact` writes (`newContactRows`: number claim, contact, every search entry);
 * texts as the rows `storeMessage` writes (the message, its carrier-sid row, the thread as the
 * message leaves it), built by the entity modules' own `toItem`s. A transaction per contact or
 * text would take the better part of an hour at 100,000. Used by `npm run bench -- --scale-only`
 * and the paging scale test.
 */

/** Runs `work(0..count-1)` with at most `concurrency` calls in flight. */
export async function inParallel(
  count: number,
  concurrency: number,
  work: (index: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next;
      next += 1;
      await work(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

/** A distinct E.164 number per index in the +1 415 5xx xxxx space (up to 10,000,000 of them). */
export const numberFor = (index: number, prefix = '+1415'): string =>
  `${prefix}${String(5_000_000 + index).padStart(7, '0')}`;

const START = Date.parse('2026-01-01T00:00:00.000Z');

/** An inbound text from `from`, `minutes` minutes after the seed epoch. */
export function inboundText(tenantId: string, from: string, minutes: number, body = 'Is the order ready?'): Message {
  const at = new Date(START + minutes * 60_000);
  return {
    id: uuidv7(at),
    tenantId,
    direction: 'inbound',
    fromNumber: from,
    toNumber: '+15005550006',
    counterpartNumber: from,
    body,
    status: 'received',
    messageSid: `SM${uuidv7(at).replace(/-/g, '')}`,
    agentId: null,
    isRead: false,
    createdAt: at.toISOString(),
  };
}

/**
 * Writes rows 25 to a call (BatchWriteItem's limit), asking again with backoff for what the engine
 * left unprocessed. `client` defaults to the service's shared one; the bench's scale section seeds
 * straight into DynamoDB Local while the requests it measures go through the limits engine.
 */
export const putInBatches = (items: Item[], concurrency = 8, client: DynamoDBDocumentClient = dynamo): Promise<void> =>
  batchPutItems(client, TABLE_NAME, items, concurrency);

/** Where a seed starts numbering (so a seed can grow in steps) and the client it writes with. */
export type SeedOptions = { first?: number; client?: DynamoDBDocumentClient };

const rowsOf = (message: Message) => [messageItem(message), sidItem(message, message.messageSid)];

/** `count` threads, one text each, numbered `first..first+count-1`. */
export async function seedThreads(
  tenantId: string,
  count: number,
  { first = 0, client }: SeedOptions = {},
): Promise<void> {
  const texts = Array.from({ length: count }, (_, i) => inboundText(tenantId, numberFor(first + i), first + i));
  await putInBatches(
    texts.flatMap((text) => [...rowsOf(text), threadItem(tenantId, text, 1, 1)]),
    undefined,
    client,
  );
}

/** `count` texts in one conversation with `counterpart`, a minute apart, after the `first` it already has. */
export async function seedConversation(
  tenantId: string,
  counterpart: string,
  count: number,
  { first = 0, client }: SeedOptions = {},
): Promise<void> {
  if (count === 0) return;
  const texts = Array.from({ length: count }, (_, i) =>
    inboundText(tenantId, counterpart, first + i, `Message ${first + i}`),
  );
  const total = first + count;
  await putInBatches(
    [...texts.flatMap(rowsOf), threadItem(tenantId, texts[count - 1], total, total)],
    undefined,
    client,
  );
}

const FIRST_NAMES = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Frances', 'John', 'Margaret', 'Ken'];
const COMPANIES = [
  'Analytical',
  'Compilers Inc',
  'Turing Ltd',
  'Structured',
  'Liskov Labs',
  'Knuth & Sons',
  'Allen Systems',
  'Backus',
  'Hamilton Aero',
  'Unix Co',
];

/**
 * `count` named contacts. Names and companies repeat every 10 (a common term matches a tenth of
 * the directory); contact `rareIndex` alone is called "Zebulon Quixote" (the rare term).
 */
export async function seedContacts(
  tenantId: string,
  count: number,
  { first = 0, rareIndex = 7, client }: SeedOptions & { rareIndex?: number } = {},
): Promise<void> {
  // In slices, so 100,000 contacts (some 4 million rows) never sit in memory at once.
  const SLICE = 1_000;
  for (let start = 0; start < count; start += SLICE) {
    const rows = Array.from({ length: Math.min(SLICE, count - start) }, (_, i) => {
      const n = first + start + i;
      const displayName = n === rareIndex ? 'Zebulon Quixote' : `${FIRST_NAMES[n % 10]} Person${n}`;
      return newContactRows(
        tenantId,
        { displayName, phoneNumber: numberFor(n, '+1646'), company: COMPANIES[n % 10] },
        new Date(START + n * 1000),
      );
    });
    await putInBatches(rows.flat(), undefined, client);
  }
}
