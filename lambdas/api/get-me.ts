import { rateLimitPerKey } from '../core/config';
import { apiHandler } from '../http/api-handler';
import { routes } from './routes';

const requestsPerMinute = rateLimitPerKey();

/** Answered from the authorizer's context alone: no table read. */
export const handler = apiHandler(routes.getMe, async ({ principal }) => ({
  statusCode: 200,
  body: {
    tenant: principal.tenant,
    apiKey: principal.apiKey,
    permissions: principal.scopes,
    rateLimit: { requestsPerMinute },
  },
}));
