import * as z from 'zod/mini';
import '../../shared/schemas/zod-english';
import { nextCursorField } from '../../shared/schemas/next-cursor';
import type { ListCallsQuery } from './requests/list-calls';

/**
 * The shapes of calls: the resource, its list and envelope (responses), and the input types of
 * the request schemas (./requests/). They type the domain and generate the OpenAPI components.
 * Written as lambdas/shared/schemas/zod-english.ts says (zod/mini; `register` only in place).
 */
const dateTime = z.iso.datetime({ offset: true });
const uuid = z.uuid();

export const CallSchema = z
  .object({
    id: uuid,
    direction: z.enum(['inbound', 'outbound']),
    fromNumber: z.string(),
    toNumber: z.string(),
    status: z.string().register(z.globalRegistry, {
      description:
        'Open set: queued, ringing, in-progress, completed, failed, no-answer, and others; tolerate unknown values',
    }),
    startedAt: dateTime,
    answeredAt: z.nullable(dateTime),
    endedAt: z.nullable(dateTime),
    durationSec: z.nullable(z.int()),
    isInternal: z.boolean(),
    agentId: z.nullable(uuid),
    contactId: z.nullable(uuid),
  })
  .register(z.globalRegistry, { id: 'Call' });

export const CallListSchema = z
  .object({ calls: z.array(CallSchema), nextCursor: nextCursorField })
  .register(z.globalRegistry, { id: 'CallList' });
export const CallEnvelopeSchema = z.object({ call: CallSchema }).register(z.globalRegistry, { id: 'CallEnvelope' });

export type Call = z.infer<typeof CallSchema>;
export type ListCallsInput = z.infer<typeof ListCallsQuery>;
