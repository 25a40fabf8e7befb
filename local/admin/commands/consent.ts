import { RecordConsentBody, type RecordConsentInput } from '../../../lambdas/contexts/consent/requests/record-consent';
import { API_CONSENT_SOURCES } from '../../../lambdas/contexts/consent/sources';
import { UsageError } from '../../usage-error';
import { option, parseOptions, uuidPositional } from '../options';
import { defineCommand, type OptionValues } from '../registry';
import { requireTenant } from './require-tenant';
import { z } from 'zod';

/**
 * `consent set` and `consent show`: an operator records an opt-out or opt-in a person gave by other
 * means (a support email, a call) exactly as `POST /consent` does (the ledger, its history, the
 * holder's copy, `consent.changed`, an opt-out's cancel of scheduled texts), and reads a number's
 * consent as `GET /consent` answers it. The evidence is printed back, never logged.
 */

/** The request's fields as the command's options name them. */
const OPTION_OF: Record<string, string> = { phoneNumber: 'phone', status: 'status', source: 'source' };

/** The options as `POST /consent`'s body, checked by the same schema; a problem names its option. */
function consentRequestOf(values: OptionValues): RecordConsentInput {
  let evidence: unknown;
  if (typeof values.evidence === 'string') {
    try {
      evidence = JSON.parse(values.evidence);
    } catch {
      throw new UsageError(
        '--evidence: must be a JSON object such as {"statement":"...","where":"...","collectedAt":"..."}',
      );
    }
  }
  const parsed = RecordConsentBody.safeParse({
    phoneNumber: values.phone,
    status: values.status,
    source: values.source,
    evidence,
  });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const [field, ...rest] = issue.path.map(String);
  const name = field === 'evidence' ? ['--evidence', ...rest].join('.') : `--${OPTION_OF[field] ?? field}`;
  const missing = issue.code === 'invalid_type' && issue.message.includes('received undefined');
  throw new UsageError(`${name}: ${missing ? 'is required' : issue.message}`);
}

export const consentSet = defineCommand({
  words: ['consent', 'set'],
  summary:
    "Record a number's opt-out or opt-in given by email, a form, a call or in person, as POST /consent does " +
    '(an opt-in needs --evidence)',
  usage:
    `--phone <e164> --status opted_out|opted_in --source ${API_CONSENT_SOURCES.join('|')} ` +
    `[--evidence '{"statement":"...","where":"...","collectedAt":"<iso>"}']`,
  positionals: ['tenantId'],
  options: {
    phone: { type: 'string' },
    status: { type: 'string' },
    source: { type: 'string' },
    evidence: { type: 'string' },
  },
  parse: ({ values, positionals }) => ({
    tenantId: uuidPositional('tenantId')({ positionals }),
    request: consentRequestOf(values),
  }),
  run: async ({ tenantId, request }) => {
    await requireTenant(tenantId);
    const { recordConsent } = await import('../../../lambdas/contexts/texting/consent-records');
    return { consent: await recordConsent(tenantId, request) };
  },
});

export const consentShow = defineCommand({
  words: ['consent', 'show'],
  summary: "A number's consent: status, source, evidence, and its latest changes, newest first",
  usage: '--phone <e164>',
  positionals: ['tenantId'],
  options: { phone: { type: 'string' } },
  parse: ({ values, positionals }) => ({
    tenantId: uuidPositional('tenantId')({ positionals }),
    phone: parseOptions(z.object({ phone: option.e164 }), values).phone,
  }),
  run: async ({ tenantId, phone }) => {
    await requireTenant(tenantId);
    const { readConsentRecord } = await import('../../../lambdas/contexts/consent/history');
    return { consent: await readConsentRecord(tenantId, phone) };
  },
});
