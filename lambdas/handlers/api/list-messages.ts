import { listMessages } from '../../contexts/texting/messages';
import { apiHandler } from '../http/api-handler';
import { listMessagesRoute } from './operations/list-messages';

/** `counterpart` arrives URL-decoded (API Gateway and the local runtime), so `+` and `%2B` both work. */
export const handler = apiHandler(listMessagesRoute, async ({ principal, path, query }) => {
  const page = await listMessages(principal.tenant.id, path.counterpart, query);
  return { statusCode: 200, body: { messages: page.items, nextCursor: page.nextCursor } };
});
