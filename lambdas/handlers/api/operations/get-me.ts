import type { RouteSpec } from '../../http/route-spec';

export const getMeRoute = {
  operationId: 'getMe',
  method: 'GET',
  path: '/me',
  handler: 'lambdas/handlers/api/get-me.ts',
  auth: 'apiKey',
  scope: null,
  tag: 'Identity',
  summary: "The key's organization, identity, scopes and rate limit",
  responses: { 200: 'Me' },
  errors: [],
  description:
    'Who the key is: its organization, the key itself (name, visible prefix, expiry), the scopes it holds ' +
    "(`permissions`), its rate limit and the organization's quiet-hours policy (`quietHours`). Needs a valid key " +
    'and no scope: use it to tell a missing scope (403 ' +
    '`insufficient_scope` elsewhere) from a missing feature.',
} satisfies RouteSpec;
