import * as z from 'zod/mini';
import '../../../shared/schemas/zod-english';

/**
 * `POST /messages/{counterpart}/cancel` and `PATCH /messages/{counterpart}`: the segment carries a
 * message id. API Gateway allows one path-parameter name per level of a resource tree, and OpenAPI
 * forbids two templated paths that differ only in a parameter's name, so the level keeps the name
 * `GET /messages/{counterpart}` gave it (docs/decisions.md, "Scheduled texts: one name for the path
 * segment after /messages"). A value that is no UUID names no message: 404.
 */
export const MessageIdPath = z.object({
  counterpart: z.uuid().register(z.globalRegistry, {
    description:
      "The message's `id` (this path segment is named `counterpart` because `GET /messages/{counterpart}` " +
      'shares it; here it holds a message id)',
  }),
});

export const RescheduleMessageBody = z
  .strictObject({
    sendAt: z.iso.datetime({ offset: true }).register(z.globalRegistry, {
      description: 'The new time: a date-time with its offset, at least 60 seconds and at most 90 days ahead',
    }),
  })
  .register(z.globalRegistry, { id: 'RescheduleMessageRequest' });
