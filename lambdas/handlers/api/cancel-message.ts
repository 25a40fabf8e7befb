import { cancelScheduledText } from '../../contexts/texting/scheduled-changes';
import { apiHandler } from '../http/api-handler';
import { cancelMessageRoute } from './operations/cancel-message';

/** The path's `counterpart` segment holds a message id here (operations/cancel-message.ts). */
export const handler = apiHandler(cancelMessageRoute, async ({ principal, path }) => ({
  statusCode: 200,
  body: { message: await cancelScheduledText(principal.tenant.id, path.counterpart, 'api') },
}));
