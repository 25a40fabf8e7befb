import { rescheduleMessage } from '../../contexts/texting/scheduled-changes';
import { apiHandler } from '../http/api-handler';
import { rescheduleMessageRoute } from './operations/reschedule-message';

/** The path's `counterpart` segment holds a message id here (operations/reschedule-message.ts). */
export const handler = apiHandler(rescheduleMessageRoute, async ({ principal, path, body }) => ({
  statusCode: 200,
  body: { message: await rescheduleMessage(principal.tenant.id, path.counterpart, body.sendAt) },
}));
