import * as z from 'zod/mini';
import { ERROR_STATUS, type ErrorCode } from '../../shared/errors';
import '../../shared/schemas/zod-english';

/**
 * The Error body every error response carries (./error-mapper.ts writes it; gateway responses
 * use the same shape, ./gateway-responses.ts). Documented only (the OpenAPI component `Error`),
 * never validated, so no handler bundle builds it.
 */
const uuid = z.uuid();

/**
 * Every code, as an enum a typed client can switch on. The list grows within v1 (a new rule, a new
 * code): treat a code you do not know by its HTTP status.
 */
export const ErrorCodeSchema = z
  .enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]])
  .register(z.globalRegistry, {
    id: 'ErrorCode',
    description:
      'Machine-readable code of the error; new codes may be added within v1, so handle unknown ones by HTTP status.',
  });

export const ErrorSchema = z
  .object({
    error: z.string().register(z.globalRegistry, {
      description: 'Human-readable message; names the failing field on validation errors',
    }),
    code: z.optional(ErrorCodeSchema),
    requestId: z.optional(z.string()).register(z.globalRegistry, {
      description:
        'The id of this request, as in the x-amzn-RequestId response header: quote it when you report an error',
    }),
    contactId: z
      .optional(uuid)
      .register(z.globalRegistry, { description: 'On 409 contact conflicts: the contact that holds the number' }),
    messageId: z.optional(uuid).register(z.globalRegistry, {
      description:
        'POST /messages: the message the refusal concerns (`carrier_rejected`; `recipient_opted_out` reported by the ' +
        'carrier); `not_scheduled`: the message named',
    }),
    oldestUpdatedSince: z.optional(z.iso.datetime({ offset: true })).register(z.globalRegistry, {
      description:
        '`resync_required`: the oldest `updatedSince` the feed of changes answers with `includeDeleted=true` now',
    }),
    carrierCode: z
      .optional(z.nullable(z.int()))
      .register(z.globalRegistry, { description: "`carrier_rejected`: the carrier's error code, when it gave one" }),
    status: z.optional(z.string()).register(z.globalRegistry, {
      description:
        '`not_scheduled`: the status the text is in now (`queued`, `sent`, `delivered`, `failed`, `canceled`); ' +
        "`consent_superseded`: the number's consent on record (`opted_in`, `opted_out`)",
    }),
    allowedAt: z.optional(z.iso.datetime()).register(z.globalRegistry, {
      description: "`quiet_hours`: the next instant the recipient's window opens (UTC), when the text may be sent",
    }),
    updatedAt: z.optional(z.nullable(z.iso.datetime())).register(z.globalRegistry, {
      description: '`consent_superseded`: the time of the change on record, later than the one refused',
    }),
  })
  .register(z.globalRegistry, { id: 'Error' });
