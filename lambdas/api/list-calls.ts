import { listCalls } from '../core/calls';
import { apiHandler } from '../http/api-handler';
import { routes } from './routes';

export const handler = apiHandler(routes.listCalls, async ({ principal, query }) => {
  const page = await listCalls(principal.tenant.id, query);
  return { statusCode: 200, body: { calls: page.items, nextCursor: page.nextCursor } };
});
