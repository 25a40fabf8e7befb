import { countryCodeLength, digitsOf } from '../../shared/phone';

/**
 * What contact search matches, as pure functions: the index entries (tokens) a contact is filed
 * under, and how a query finds and checks them. The rules, for users, are in docs/decisions.md
 * ("Contact search"); search-rows.ts writes the entries, contact-search.ts reads them.
 */
export const SEARCH_LIMITS = {
  /**
   * Index entries per contact, at most. A PATCH that changes name, company, number and external
   * id at once deletes the old entries and writes the new ones in the contact's own transaction:
   * 6 rows (contact, old and new number claim, the new number's consent-ledger check, old and new
   * external-id claim) + 2 x 47 = 100, DynamoDB's most per transaction: an item more in that
   * transaction needs fewer entries here.
   */
  maxEntries: 47,
  /** Longest indexed prefix of a word with a letter; a longer query word is checked in full against the contact. */
  wordPrefix: 6,
  /** Longest indexed prefix of an all-digit word (E.164 has at most 15 digits). */
  digitWordPrefix: 15,
  /** A number's prefixes (with and without its country code) are indexed from this many digits. */
  numberPrefixMin: 3,
  /** Its trailing digits: the last 4 to 10. */
  trailingMin: 4,
  trailingMax: 10,
} as const;

export type SearchFields = { displayName: string; company: string | null; normalizedNumber: string | null };

/** A contact's entries, and the words they index (to check a query word longer than its entry). */
export type SearchIndex = { tokens: string[]; words: string[] };

/** Letters a bare accent strip leaves alone (NFKD does not decompose them). */
const FOLDED: Record<string, string> = { ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', ł: 'l', đ: 'd', ð: 'd', þ: 'th', ı: 'i' };

/** Lower case, accents removed ("Zoë Ångström" -> "zoe angstrom"). */
export const normalizeText = (text: string): string =>
  text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[ßæœøłđðþı]/g, (letter) => FOLDED[letter]);

/**
 * Words: runs of letters and digits. Apostrophes join ("O'Brien" -> "obrien"), every other
 * character separates ("Jean-Luc" -> "jean", "luc").
 */
export const wordsOf = (text: string): string[] =>
  normalizeText(text)
    .replace(/['’]/g, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0);

const isDigits = (word: string): boolean => /^\d+$/.test(word);

/** The entry a word (or query word) is filed under: its first 6 characters, or 15 digits. */
export const indexTokenOf = (word: string): string =>
  word.slice(0, isDigits(word) ? SEARCH_LIMITS.digitWordPrefix : SEARCH_LIMITS.wordPrefix);

const prefixes = (text: string, from: number, to: number): string[] =>
  Array.from({ length: Math.max(0, Math.min(to, text.length) - from + 1) }, (_, i) => text.slice(0, from + i));

/** A number's entries: prefixes with and without the country code, and the last 4 to 10 digits. */
export function numberTokens(number: string | null): string[] {
  if (!number) return [];
  const full = digitsOf(number);
  const national = full.slice(countryCodeLength(full));
  const { numberPrefixMin, trailingMin, trailingMax } = SEARCH_LIMITS;
  const trailing: string[] = [];
  for (let k = trailingMin; k <= Math.min(trailingMax, full.length - 1); k += 1) trailing.push(full.slice(-k));
  return [
    ...new Set([
      ...prefixes(full, numberPrefixMin, full.length),
      ...prefixes(national, numberPrefixMin, national.length),
      ...trailing,
    ]),
  ];
}

/**
 * A contact's entries: its number's first, then each word of the display name and the company
 * in order, all of a word's prefixes or none, while the total stays within `maxEntries`. A display
 * name that is the contact's own number (an auto-created contact) adds nothing to the number's.
 */
export function searchIndexOf(contact: SearchFields): SearchIndex {
  const tokens = new Set(numberTokens(contact.normalizedNumber));
  const ownNumber = digitsOf(contact.normalizedNumber ?? '');
  const words: string[] = [];
  for (const word of new Set([...wordsOf(contact.displayName), ...wordsOf(contact.company ?? '')])) {
    if (word === ownNumber) continue;
    const added = prefixes(indexTokenOf(word), 1, Infinity).filter((token) => !tokens.has(token));
    if (tokens.size + added.length > SEARCH_LIMITS.maxEntries) continue;
    for (const token of added) tokens.add(token);
    words.push(word);
  }
  return { tokens: [...tokens], words };
}

/**
 * The words of a query, each to be matched. A query made only of phone characters (digits,
 * spaces, `+().-`) is one number: "+1 (415) 555-01" is "1415555" and "555 0100" is "5550100".
 */
export function searchTermsOf(search: string): string[] {
  const digits = digitsOf(search);
  if (/^[\d\s+().-]+$/.test(search) && digits.length > 0) return [digits];
  return [...new Set(wordsOf(search))];
}

/**
 * The query word whose entry is read: the one with the longest entry, being the most selective;
 * the others are checked against each contact found.
 */
export const drivingTermOf = (terms: readonly string[]): string =>
  terms.reduce((best, term) => {
    const [a, b] = [indexTokenOf(term).length, indexTokenOf(best).length];
    return a > b || (a === b && term.length > best.length) ? term : best;
  });

/** Whether a contact, as indexed, matches every query word. */
export function matchesSearch(index: SearchIndex, terms: readonly string[]): boolean {
  const tokens = new Set(index.tokens);
  return terms.every((term) => {
    const token = indexTokenOf(term);
    return tokens.has(token) && (token === term || index.words.some((word) => word.startsWith(term)));
  });
}
