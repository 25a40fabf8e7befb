import type { RouteSpec } from '../../http/route-spec';

export const listThreadsRoute = {
  operationId: 'listThreads',
  method: 'GET',
  path: '/messages',
  handler: 'lambdas/handlers/api/list-threads.ts',
  auth: 'apiKey',
  scope: 'sms.view',
  tag: 'Messages',
  summary: 'Every text conversation of the organization, one per external number, newest activity first',
  responses: { 200: 'ThreadList' },
  errors: [],
  description:
    'One row per external number the organization has texted with, newest activity first, with the last message, ' +
    'its direction and status, the message count and whether unread inbound messages wait. Not paged.',
} satisfies RouteSpec;
