import { CreateContactBody } from '../../../contexts/contacts/requests/create-contact';
import type { RouteSpec } from '../../http/route-spec';

export const createContactRoute = {
  operationId: 'createContact',
  method: 'POST',
  path: '/contacts',
  handler: 'lambdas/handlers/api/create-contact.ts',
  auth: 'apiKey',
  scope: 'contacts.manage',
  tag: 'Contacts',
  summary: 'Create a contact, or name the auto-created contact of this number (adopted)',
  body: CreateContactBody,
  responses: { 201: 'ContactCreated', 200: 'ContactCreated' },
  errors: ['contact_conflict'],
  idempotent: true,
  description:
    "Adds a named contact to the organization's shared directory. When the organization already has an " +
    'auto-created contact for this number (from call history), that row is adopted and named instead of duplicated: ' +
    '200 with `adopted: true`; otherwise a new row is created: 201 with `adopted: false`. A number belongs to at ' +
    "most one contact: when another named contact has it, 409 `contact_conflict` carries that contact's " +
    "`contactId`. The contact's `consentStatus` is the consent already recorded for its number (a number that " +
    'replied STOP shows `opted_out`).',
} satisfies RouteSpec;
