import * as z from 'zod/mini';
import '../../shared/schemas/zod-english';

/**
 * The Error body every error response carries (./error-mapper.ts writes it; gateway responses
 * use the same shape, ./gateway-responses.ts). Documented only (the OpenAPI component `Error`),
 * never validated, so no handler bundle builds it.
 */
const uuid = z.uuid();

export const ErrorSchema = z
  .object({
    error: z.string().register(z.globalRegistry, { description: 'Human-readable message; names the failing field on validation errors' }),
    code: z.optional(z.string()).register(z.globalRegistry, { description: 'Machine-readable code, e.g. not_found' }),
    requestId: z
      .optional(z.string())
      .register(z.globalRegistry, { description: 'The id of this request, as in the x-amzn-RequestId response header: quote it when you report an error' }),
    contactId: z.optional(uuid).register(z.globalRegistry, { description: 'On 409 contact conflicts: the contact that holds the number' }),
  })
  .register(z.globalRegistry, { id: 'Error' });
