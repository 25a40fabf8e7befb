import { countryCodeLength } from '../../lambdas/shared/phone';
import {
  drivingTermOf,
  matchesSearch,
  numberTokens,
  SEARCH_LIMITS,
  searchIndexOf,
  searchTermsOf,
  wordsOf,
} from '../../lambdas/contexts/contacts/search-terms';

const ada = { displayName: 'Ada Lovelace', company: 'Analytical Engines', normalizedNumber: '+14155550100' };
const finds = (contact: typeof ada, search: string) => matchesSearch(searchIndexOf(contact), searchTermsOf(search));

describe('contact search terms', () => {
  it('folds case and accents and splits words on anything but letters and digits', () => {
    expect(wordsOf("Zoë ÅNGSTRÖM-Straße, O'Brien & Łukasz")).toEqual([
      'zoe',
      'angstrom',
      'strasse',
      'obrien',
      'lukasz',
    ]);
  });

  it('knows the length of every country code from the two short lists', () => {
    expect(
      ['14155550100', '74951234567', '442079460018', '3531234567', '8613800138000'].map(countryCodeLength),
    ).toEqual([1, 1, 2, 3, 2]);
  });

  it('files a number under its prefixes with and without the country code and its last 4 to 10 digits', () => {
    // Act
    const tokens = numberTokens('+442079460018');

    // Assess
    expect(tokens).toEqual(
      expect.arrayContaining(['442', '4420794', '442079460018', '207', '2079460018', '0018', '460018', '9460018']),
    );
    expect(tokens).not.toContain('44'); // prefixes start at 3 digits
    expect(tokens).not.toContain('018'); // trailing digits start at 4
    expect(tokens).not.toContain('42079460018'); // the last 11 digits are no entry
  });

  it('matches word prefixes of name and company, case and accent blind, every query word', () => {
    expect(['ada', 'LOVE', 'lovelace', 'Ána', 'ada engines', 'engines ada'].map((q) => finds(ada, q))).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(['velace', 'lovelaces', 'ada babbage', 'dalo'].map((q) => finds(ada, q))).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });

  it('matches a number typed in part: national or international prefix, or its last digits', () => {
    const typed = [
      '415',
      '415 555',
      '(415) 555-01',
      '+1 415 555 0100',
      '14155550100',
      '0100',
      '555-0100',
      '4155550100',
    ];
    expect(typed.map((q) => finds(ada, q))).toEqual(typed.map(() => true));
    expect(['5550', '41', '15555', '+44 415'].map((q) => finds(ada, q))).toEqual([false, false, false, false]);
  });

  it('reads the entry of the most selective query word and checks the others', () => {
    expect(drivingTermOf(['a', 'lovelace', 'engines'])).toBe('lovelace');
    expect(drivingTermOf(['0100', 'ada'])).toBe('0100');
  });

  it('never files a contact under more entries than the bound, even with the longest number and name', () => {
    // Prepare: 15 digits, and 200 characters of name and company made of distinct long words
    const longWords = (seed: string) =>
      Array.from({ length: 25 }, (_, i) => `${seed}${String.fromCharCode(97 + i)}word`)
        .join(' ')
        .slice(0, 200);
    const largest = { displayName: longWords('n'), company: longWords('c'), normalizedNumber: '+886912345678901' };

    // Act
    const index = searchIndexOf(largest);

    // Assess: the number is always filed; whole words only, while they fit
    expect(index.tokens.length).toBeLessThanOrEqual(SEARCH_LIMITS.maxEntries);
    expect(index.tokens).toEqual(expect.arrayContaining(numberTokens(largest.normalizedNumber)));
    expect(matchesSearch(index, searchTermsOf(index.words[0]))).toBe(true);
    expect(3 + 2 * SEARCH_LIMITS.maxEntries).toBeLessThanOrEqual(100); // a PATCH replacing every entry fits one transaction
  });

  it('adds nothing for a display name that is the contact number itself', () => {
    const auto = { displayName: '+14155550100', company: null, normalizedNumber: '+14155550100' };
    expect(searchIndexOf(auto).tokens.sort()).toEqual(numberTokens(auto.normalizedNumber).sort());
  });
});
