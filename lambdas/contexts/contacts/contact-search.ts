import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { PREFIX } from '../../shared/table/keys';
import type { Page } from '../../shared/table/paging';
import type { Contact } from './schemas';
import { searchPk } from './search-rows';
import { drivingTermOf, indexTokenOf, matchesSearch, searchIndexOf, searchTermsOf } from './search-terms';

type SearchInput = { search: string; limit: number; cursor?: string; includeAutoCreated: boolean };

/**
 * GET /contacts?search=: one page of the contacts matching every word of the query, newest
 * first like the list. It reads the index partition of one query word (the most selective: see
 * `drivingTermOf`), newest first from the cursor, fetches those contacts and checks each against
 * the whole query, as it stands now: so it reads `limit + 1` entries and contacts, plus those it
 * skips (contacts matching that word but not the others, auto-created ones when they are
 * excluded), never the directory. The cursor is the last contact's id, a position in that
 * partition, so paging goes on where it left off whatever was created, renamed or deleted since.
 */
export async function searchPage(
  tenantId: string,
  input: SearchInput,
  readContacts: (contactIds: readonly string[]) => Promise<Contact[]>,
): Promise<Page<Contact>> {
  const terms = searchTermsOf(input.search);
  if (terms.length === 0) return { items: [], nextCursor: null }; // only separators: nothing to match
  const pk = searchPk(tenantId, indexTokenOf(drivingTermOf(terms)));
  const found: Contact[] = [];
  let startKey: Record<string, unknown> | undefined = input.cursor
    ? { pk, sk: `${PREFIX.contact}${input.cursor}` }
    : undefined;
  do {
    const { Items, LastEvaluatedKey } = await dynamo.send(
      new QueryCommand({
        TableName: TABLE_NAME,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': 'pk' },
        ExpressionAttributeValues: { ':pk': pk },
        ScanIndexForward: false,
        Limit: input.limit + 1,
        ExclusiveStartKey: startKey,
      }),
    );
    const ids = (Items ?? []).map((row) => (row.sk as string).slice(PREFIX.contact.length));
    const byId = new Map((await readContacts(ids)).map((contact) => [contact.id, contact]));
    for (const id of ids) {
      const contact = byId.get(id); // missing: deleted since its entry was read
      if (
        contact &&
        (input.includeAutoCreated || !contact.isAutoCreated) &&
        matchesSearch(searchIndexOf(contact), terms)
      )
        found.push(contact);
    }
    startKey = LastEvaluatedKey;
  } while (startKey && found.length <= input.limit);

  if (found.length <= input.limit) return { items: found, nextCursor: null };
  const items = found.slice(0, input.limit);
  return { items, nextCursor: items[items.length - 1].id };
}
