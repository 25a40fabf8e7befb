import { rateLimitPerKey } from '../../shared/config';
import { apiHandler } from '../http/api-handler';
import { getMeRoute } from './operations/get-me';

const requestsPerMinute = rateLimitPerKey();

/** Answered from the authorizer's context alone: no table read. */
export const handler = apiHandler(getMeRoute, async ({ principal }) => ({
  statusCode: 200,
  body: {
    tenant: principal.tenant,
    apiKey: principal.apiKey,
    permissions: principal.scopes,
    rateLimit: { requestsPerMinute },
    quietHours: principal.quietHours,
  },
}));
