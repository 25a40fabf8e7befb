import { createCarrier } from '../../contexts/carrier/create-carrier';
import { sendMessage } from '../../contexts/texting/texting';
import { apiHandler } from '../http/api-handler';
import { withIdempotency } from '../http/idempotency';
import { sendMessageRoute } from './operations/send-message';

/** Built at init: a missing or unknown CARRIER fails the function's first invocation loudly. */
const carrier = createCarrier();

export const handler = apiHandler(sendMessageRoute, async ({ principal, body, headers }) =>
  withIdempotency({ tenantId: principal.tenant.id, operation: sendMessageRoute.operationId, headers, request: body }, async () => ({
    statusCode: 201,
    body: { message: await sendMessage(principal.tenant.id, body, carrier) },
  })),
);
