import { getCall } from '../core/calls';
import { apiHandler } from '../http/api-handler';
import { routes } from './routes';

export const handler = apiHandler(routes.getCall, async ({ principal, path }) => ({
  statusCode: 200,
  body: { call: await getCall(principal.tenant.id, path.id) },
}));
