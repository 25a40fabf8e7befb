import { getCall } from '../../contexts/calls/calls';
import { apiHandler } from '../http/api-handler';
import { getCallRoute } from './operations/get-call';

export const handler = apiHandler(getCallRoute, async ({ principal, path }) => ({
  statusCode: 200,
  body: { call: await getCall(principal.tenant.id, path.id) },
}));
