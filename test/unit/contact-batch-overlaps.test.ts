import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { overlaps, upsertContacts } from '../../lambdas/contexts/contacts/contact-batch';
import { ContactBatchItem } from '../../lambdas/contexts/contacts/requests/upsert-contacts';

/**
 * Issue 38, part 9: a batch judges its items against each other before writing. A later item naming (by its number or
 * external id, as the claims read say) a contact an earlier item names is `conflict`, whatever order their writes
 * would take; without the claims nothing can be judged, so nothing is written.
 */
const ddb = mockClient(DynamoDBDocumentClient);
const TENANT = '01900000-0000-7000-8000-000000000001';
const [X, Z] = ['01900000-0000-7000-8000-00000000000a', '01900000-0000-7000-8000-00000000000b'];
const [A, B, C, D] = ['+14155550101', '+14155550102', '+14155550103', '+14155550104'];

/** The directory as the batch read it: X holds `crm-x` and A, Z holds `crm-z` and C. */
const claims = {
  numberClaims: new Map([
    [A, { contactId: X, named: true }],
    [C, { contactId: Z, named: true }],
  ]),
  externalIdClaims: new Map([
    ['crm-x', X],
    ['crm-z', Z],
  ]),
};
const pending = (items: { phoneNumber: string; externalId?: string }[]) =>
  items.map((item, index) => ({ index, item: { displayName: `Item ${index}`, ...item } }));

beforeEach(() => ddb.reset());

describe('overlaps', () => {
  it('refuses the later of two items naming one contact, by number or by external id, naming the field and the earlier item', () => {
    // Act
    const refused = overlaps(
      pending([
        { phoneNumber: B, externalId: 'crm-x' }, // moves X from A to B
        { phoneNumber: A, externalId: 'crm-z' }, // moves Z onto A, which names X
        { phoneNumber: C }, // names Z, which only a refused item named
        { phoneNumber: D }, // new
        { phoneNumber: '+14155550105', externalId: 'crm-new' }, // new
      ]),
      claims,
    );

    // Assess
    expect([...refused.keys()]).toEqual([1]);
    expect(refused.get(1)).toEqual({
      index: 1,
      status: 'conflict',
      contactId: X,
      externalId: 'crm-z',
      error:
        `contacts[1].phoneNumber: names contact ${X}, which contacts[0] names too; a batch changes each contact once, ` +
        'so nothing was written for this item: send it in a later batch',
      code: 'contact_conflict',
    });
  });

  it('judges in request order: the same two items the other way round refuse the other one', () => {
    // Act
    const refused = overlaps(pending([{ phoneNumber: A }, { phoneNumber: B, externalId: 'crm-x' }]), claims);

    // Assess
    expect([...refused.entries()].map(([index, r]) => [index, r.contactId, r.error?.split(':')[0]])).toEqual([
      [1, X, 'contacts[1].externalId'],
    ]);
  });

  it('leaves items naming one contact by both its number and its external id, or distinct contacts, alone', () => {
    expect(
      overlaps(
        pending([
          { phoneNumber: A, externalId: 'crm-x' },
          { phoneNumber: C, externalId: 'crm-z' },
        ]),
        claims,
      ).size,
    ).toBe(0);
  });
});

it('writes nothing and answers every item unavailable when the claims cannot be read (too busy)', async () => {
  // Prepare
  ddb.on(BatchGetCommand).rejects(
    Object.assign(new Error('Throughput exceeded'), {
      name: 'ProvisionedThroughputExceededException',
    }),
  );

  // Act
  const results = await upsertContacts(TENANT, pending([{ phoneNumber: A }, { phoneNumber: B, externalId: 'crm-x' }]));

  // Assess
  expect(results.map((r) => [r.index, r.status, r.code])).toEqual([
    [0, 'unavailable', 'temporarily_unavailable'],
    [1, 'unavailable', 'temporarily_unavailable'],
  ]);
  expect(ddb).not.toHaveReceivedCommand(TransactWriteCommand);
  expect(ddb).not.toHaveReceivedCommand(GetCommand);
});

describe('customFields keys JavaScript holds as any other (issue 38, part 9)', () => {
  it('keeps constructor, prototype and toString as keys of their own, never dropped', () => {
    // Act
    const parsed = ContactBatchItem.safeParse(
      JSON.parse(
        '{"displayName":"Ada","phoneNumber":"+14155550100","customFields":{"constructor":"a","prototype":"b","toString":"c"}}',
      ),
    );

    // Assess
    expect(parsed.success).toBe(true);
    expect(parsed.data?.customFields).toEqual({ constructor: 'a', prototype: 'b', toString: 'c' });
  });
});
