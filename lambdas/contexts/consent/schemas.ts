import * as z from 'zod/mini';
import '../../shared/schemas/zod-english';
import type { ConsentStatus } from './ledger';
import { CONSENT_HISTORY_LIMIT } from './sources';

/**
 * The shapes of `GET /consent` and `POST /consent` answers (responses), registered for the OpenAPI
 * document. The types the domain returns are ./history.ts's; these describe them.
 */
const dateTime = z.iso.datetime({ offset: true });
const STATUSES = ['unknown', 'opted_in', 'opted_out'] as const satisfies readonly ConsentStatus[];

export const ConsentEvidenceSchema = z
  .object({
    statement: z.string(),
    where: z.string(),
    collectedAt: dateTime,
    reference: z.optional(z.string()),
  })
  .register(z.globalRegistry, {
    id: 'ConsentEvidence',
    description: 'What the person agreed to (or asked, for an opt-out), where and when, as `POST /consent` recorded it',
  });

const source = z.string().register(z.globalRegistry, {
  description:
    '`sms_keyword` (the number texted STOP, START...), `carrier_opt_out` (the carrier refused a text: the ' +
    'recipient opted out with it), or the `source` given to `POST /consent` (`email`, `web_form`, `call`, ' +
    '`in_person`, `other`)',
});

export const ConsentHistoryEntrySchema = z
  .object({
    status: z.enum(['opted_in', 'opted_out']),
    source,
    note: z.nullable(z.string()).register(z.globalRegistry, { description: 'Human-readable, e.g. `Replied STOP`' }),
    evidence: z.nullable(ConsentEvidenceSchema),
    at: dateTime.clone().register(z.globalRegistry, {
      description: "The change's time: the carrier's for a keyword, the evidence's `collectedAt` for the API",
    }),
  })
  .register(z.globalRegistry, { id: 'ConsentHistoryEntry' });

export const ConsentRecordSchema = z
  .object({
    phoneNumber: z.string(),
    status: z.enum(STATUSES).register(z.globalRegistry, {
      description:
        '`opted_out`: texts to the number are refused (409 `recipient_opted_out`) and none scheduled is sent; ' +
        '`opted_in` or `unknown` (nothing ever recorded): texts are sent',
    }),
    source: z.nullable(source),
    note: z.nullable(z.string()),
    evidence: z.nullable(ConsentEvidenceSchema).register(z.globalRegistry, {
      description: "The current status's evidence; null for a keyword, a carrier's opt-out or an opt-out without one",
    }),
    updatedAt: z.nullable(dateTime).register(z.globalRegistry, {
      description: 'The time of the change the status comes from; null when nothing was ever recorded',
    }),
    history: z.array(ConsentHistoryEntrySchema).register(z.globalRegistry, {
      description: `The latest changes, newest first, at most ${CONSENT_HISTORY_LIMIT}`,
    }),
  })
  .register(z.globalRegistry, { id: 'ConsentRecord' });

export const ConsentEnvelopeSchema = z
  .object({ consent: ConsentRecordSchema })
  .register(z.globalRegistry, { id: 'ConsentEnvelope' });
