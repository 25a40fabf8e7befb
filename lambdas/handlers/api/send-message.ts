import { createCarrier } from '../../contexts/carrier/create-carrier';
import { sendMessage } from '../../contexts/texting/sending';
import { IDEMPOTENT_REPLAYED_HEADER } from '../../shared/errors';
import { apiHandler, requestOriginOf } from '../http/api-handler';
import { idempotencyKeyOf } from '../http/idempotency';
import { sendMessageRoute } from './operations/send-message';

/** Built at init: a missing or unknown CARRIER fails the function's first invocation loudly. */
const carrier = createCarrier();

/**
 * The Idempotency-Key is kept by the send itself, in the transaction that charges the text
 * (lambdas/contexts/texting/send-keys.ts), not by the HTTP wrapper: a key is one text.
 */
export const handler = apiHandler(sendMessageRoute, async ({ principal, body, headers, requestId, remainingMs }) => {
  const { message, replayed } = await sendMessage(principal.tenant.id, body, carrier, {
    idempotencyKey: idempotencyKeyOf(headers),
    remainingMs,
    request: requestOriginOf({ requestId, headers }),
  });
  return { statusCode: 201, body: { message }, ...(replayed && { headers: { [IDEMPOTENT_REPLAYED_HEADER]: 'true' } }) };
});
