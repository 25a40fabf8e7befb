import type { ConsentChange } from '../consent/ledger';
import { KEYWORD_SOURCE } from '../consent/sources';

/**
 * Consent keywords in inbound texts: the carrier-standard sets (CTIA; Twilio's default opt-out
 * handling and Advanced Opt-Out), matched on the whole trimmed body, case-insensitively, as Twilio
 * does ("STOP PLEASE" is not a keyword). HELP and INFO are answered by the carrier and change
 * nothing. A Messaging Service with Advanced Opt-Out also names the kind in `OptOutType` (its
 * custom keywords included), which wins over the body when present.
 */
const OPT_OUT = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'REVOKE', 'OPTOUT']);
const OPT_IN = new Set(['START', 'UNSTOP', 'YES']);

export type ConsentKeyword = { keyword: string; status: ConsentChange['status'] };

/** The keyword an inbound body is, if it is one. `optOutType`: Twilio's `OptOutType` parameter. */
export function consentKeywordOf(body: string, optOutType?: string): ConsentKeyword | null {
  const keyword = body.trim().toUpperCase();
  switch (optOutType?.toUpperCase()) {
    case 'STOP':
      return { keyword, status: 'opted_out' };
    case 'START':
      return { keyword, status: 'opted_in' };
    case 'HELP':
      return null;
    default:
      if (OPT_OUT.has(keyword)) return { keyword, status: 'opted_out' };
      if (OPT_IN.has(keyword)) return { keyword, status: 'opted_in' };
      return null;
  }
}

/** The ledger change a keyword makes, at the carrier's time of the text. */
export const consentChangeOf = (keyword: ConsentKeyword, at: Date): ConsentChange => ({
  status: keyword.status,
  source: KEYWORD_SOURCE,
  at,
  note: `Replied ${keyword.keyword}`,
});
