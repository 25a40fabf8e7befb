import { listCalls } from '../../contexts/calls/calls';
import { apiHandler } from '../http/api-handler';
import { listCallsRoute } from './operations/list-calls';

export const handler = apiHandler(listCallsRoute, async ({ principal, query }) => {
  const page = await listCalls(principal.tenant.id, query);
  return { statusCode: 200, body: { calls: page.items, nextCursor: page.nextCursor } };
});
