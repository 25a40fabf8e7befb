import { listThreads } from '../../contexts/texting/threads';
import { apiHandler } from '../http/api-handler';
import { listThreadsRoute } from './operations/list-threads';

/** Reading never marks a thread read: that happens only when a person opens it in the softphone. */
export const handler = apiHandler(listThreadsRoute, async ({ principal, query }) => {
  const page = await listThreads(principal.tenant.id, query);
  return { statusCode: 200, body: { threads: page.items, nextCursor: page.nextCursor } };
});
