import * as z from 'zod/mini';
import '../../../shared/schemas/zod-english';
import { e164 } from '../../../shared/schemas/phone-number';
import { API_CONSENT_SOURCES, EVIDENCE_BOUNDS } from '../sources';

const text = (max: number, description: string) =>
  z.string().check(z.minLength(1), z.maxLength(max)).register(z.globalRegistry, { description });

/** The proof of a change: each part bounded, unknown parts refused (a misspelled one cannot be lost). */
export const EvidenceInput = z.strictObject({
  statement: text(
    EVIDENCE_BOUNDS.statement,
    'What the person agreed to (the wording of the form, the script, the consent text), or for an opt-out what ' +
      'they asked',
  ),
  where: text(
    EVIDENCE_BOUNDS.where,
    'Where they gave it: the page URL of the form, the mailbox, the phone line, the shop',
  ),
  collectedAt: z.iso.datetime({ offset: true }).register(z.globalRegistry, {
    description:
      'When they gave it (ISO 8601 with offset). It is the time of the change, so a change older than the one on ' +
      'record is refused 409 `consent_superseded`; at most 5 minutes ahead of the clock of the service.',
  }),
  reference: z.optional(
    text(
      EVIDENCE_BOUNDS.reference,
      'Your own id of the record: an email Message-ID, a form submission id, a call recording id',
    ),
  ),
});

export const RecordConsentBody = z
  .strictObject({
    phoneNumber: e164,
    status: z.enum(['opted_out', 'opted_in']),
    source: z.enum(API_CONSENT_SOURCES).register(z.globalRegistry, {
      description:
        'How the person told you. `sms_keyword` and `carrier_opt_out` are recorded by the service itself and not ' +
        'accepted here.',
    }),
    evidence: z.optional(EvidenceInput).register(z.globalRegistry, {
      description:
        'What the person agreed to (or asked), where and when: required for an opt-in (400 naming it otherwise), ' +
        'optional for an opt-out. Stored with the change and shown by `GET /consent`; never logged, never in an event.',
    }),
  })
  .check(
    z.refine((body) => body.status !== 'opted_in' || body.evidence !== undefined, {
      message: 'is required for an opt-in',
      path: ['evidence'],
    }),
  )
  .register(z.globalRegistry, { id: 'RecordConsentRequest' });

export type RecordConsentInput = z.infer<typeof RecordConsentBody>;
