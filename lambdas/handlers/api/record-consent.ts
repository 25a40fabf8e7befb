import { recordConsent } from '../../contexts/texting/consent-records';
import { apiHandler, requestOriginOf } from '../http/api-handler';
import { withIdempotency } from '../http/idempotency';
import { recordConsentRoute } from './operations/record-consent';

/** 200 with the number's consent as it now stands; the organization is the key's, never the body's. */
export const handler = apiHandler(recordConsentRoute, async ({ principal, body, headers, requestId }) =>
  withIdempotency(
    { tenantId: principal.tenant.id, operation: recordConsentRoute.operationId, headers, request: body },
    async () => ({
      statusCode: 200,
      body: {
        consent: await recordConsent(principal.tenant.id, body, new Date(), requestOriginOf({ requestId, headers })),
      },
    }),
  ),
);
