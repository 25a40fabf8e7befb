import { CreateContactBody } from '../../../contexts/contacts/requests/create-contact';
import type { RouteSpec } from '../../http/route-spec';

export const createContactRoute = {
  operationId: 'createContact',
  method: 'POST',
  path: '/contacts',
  handler: 'lambdas/handlers/api/create-contact.ts',
  auth: 'apiKey',
  scope: 'contacts.manage',
  summary: 'Create a contact, or name the auto-created contact of this number (adopted)',
  body: CreateContactBody,
  responses: { 201: 'ContactCreated', 200: 'ContactCreated' },
  errors: [400, 409, 413, 415],
  idempotent: true,
} satisfies RouteSpec;
