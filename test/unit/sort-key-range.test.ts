import { PREFIX, sortKeyStartsWith } from '../../lambdas/shared/table/keys';

/**
 * `sortKeyStartsWith` replaces `begins_with(sk, prefix)` by a BETWEEN range, so the range must
 * hold exactly the sort keys a `begins_with` would: DynamoDB orders string keys by their UTF-8
 * bytes, which `Buffer.compare` reproduces.
 */
const inRange = (key: string, from: string, to: string): boolean =>
  Buffer.compare(Buffer.from(key), Buffer.from(from)) >= 0 && Buffer.compare(Buffer.from(key), Buffer.from(to)) <= 0;

const SORT_KEY_PREFIXES = Object.values(PREFIX).filter((prefix) => prefix.endsWith('#'));

/** Sort keys as the key builders write them, for every prefix, plus the bare ones and near misses. */
const SORT_KEYS = [
  ...SORT_KEY_PREFIXES.flatMap((prefix) => [
    prefix,
    `${prefix}0`,
    `${prefix}01J9Z0Q7X4`,
    `${prefix}+14155550100`,
    `${prefix}zz~`,
  ]),
  'TENANT',
  'APIKEY',
  'OWNER',
  'CONTACT',
  'CONTACTS',
  'CONTACT"9',
  'CONTACTS#1',
  'MSG',
  'MSGSID#SM1',
];

describe('sortKeyStartsWith', () => {
  it.each(SORT_KEY_PREFIXES)('the range of %s holds exactly the sort keys that begin with it', (prefix) => {
    // Prepare
    const { values } = sortKeyStartsWith(prefix);

    // Act
    const held = SORT_KEYS.filter((key) => inRange(key, values[':skFrom'], values[':skTo']));

    // Assess
    expect(held).toEqual(SORT_KEYS.filter((key) => key.startsWith(prefix)));
    expect(held.length).toBeGreaterThan(0);
  });

  it('writes a BETWEEN on the named sort key, for an index as for the table', () => {
    // Act
    const range = sortKeyStartsWith(PREFIX.contact, 'gsi1sk');

    // Assess
    expect(range).toEqual({
      condition: '#skRange BETWEEN :skFrom AND :skTo',
      names: { '#skRange': 'gsi1sk' },
      values: { ':skFrom': 'CONTACT#', ':skTo': 'CONTACT$' },
    });
  });
});
