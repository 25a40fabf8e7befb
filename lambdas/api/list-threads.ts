import { listThreads } from '../core/threads';
import { apiHandler } from '../http/api-handler';
import { routes } from './routes';

/** Reading never marks a thread read: that happens only when a person opens it in the softphone. */
export const handler = apiHandler(routes.listThreads, async ({ principal }) => ({
  statusCode: 200,
  body: { threads: await listThreads(principal.tenant.id) },
}));
