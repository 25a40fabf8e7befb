import { cancelScheduledText } from '../../contexts/texting/scheduled-changes';
import { apiHandler, requestOriginOf } from '../http/api-handler';
import { cancelMessageRoute } from './operations/cancel-message';

/** The path's `counterpart` segment holds a message id here (operations/cancel-message.ts). */
export const handler = apiHandler(cancelMessageRoute, async (request) => ({
  statusCode: 200,
  body: {
    message: await cancelScheduledText(
      request.principal.tenant.id,
      request.path.counterpart,
      'api',
      requestOriginOf(request),
    ),
  },
}));
