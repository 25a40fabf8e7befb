import { readConsentRecord } from '../../contexts/consent/history';
import { apiHandler } from '../http/api-handler';
import { getConsentRoute } from './operations/get-consent';

export const handler = apiHandler(getConsentRoute, async ({ principal, query }) => ({
  statusCode: 200,
  body: { consent: await readConsentRecord(principal.tenant.id, query.phoneNumber) },
}));
