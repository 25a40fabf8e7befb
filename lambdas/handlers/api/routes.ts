import type { RouteSpec } from '../http/route-spec';
import { createContactRoute } from './operations/create-contact';
import { deleteContactRoute } from './operations/delete-contact';
import { deleteContactsRoute } from './operations/delete-contacts';
import { getApiReferenceRoute } from './operations/get-api-reference';
import { getCallRoute } from './operations/get-call';
import { getContactRoute } from './operations/get-contact';
import { getMeRoute } from './operations/get-me';
import { getOpenApiRoute } from './operations/get-openapi';
import { listCallsRoute } from './operations/list-calls';
import { listContactsRoute } from './operations/list-contacts';
import { listMessagesRoute } from './operations/list-messages';
import { listThreadsRoute } from './operations/list-threads';
import { sendMessageRoute } from './operations/send-message';
import { cancelMessageRoute } from './operations/cancel-message';
import { rescheduleMessageRoute } from './operations/reschedule-message';
import { updateContactRoute } from './operations/update-contact';
import { upsertContactsRoute } from './operations/upsert-contacts';
import { getConsentRoute } from './operations/get-consent';
import { recordConsentRoute } from './operations/record-consent';

/**
 * The route manifest: the one list of the API's operations. The CDK API construct creates a
 * function and a method per entry, the local runtime serves them, and the OpenAPI generator
 * documents them. Each entry is a module of its own (operations/), and each handler imports only
 * its own: a handler's bundle then builds the request schemas of its route and no others
 * (zod builds a schema when its module is imported: with every route's schemas, a handler's cold
 * init measured ~10 ms more CPU and its bundle ~21 KiB more; `npm run bench -- --bundles-only`).
 */
export const routes = {
  getOpenApi: getOpenApiRoute,
  getApiReference: getApiReferenceRoute,
  getMe: getMeRoute,
  listCalls: listCallsRoute,
  getCall: getCallRoute,
  listContacts: listContactsRoute,
  createContact: createContactRoute,
  getContact: getContactRoute,
  updateContact: updateContactRoute,
  deleteContact: deleteContactRoute,
  upsertContacts: upsertContactsRoute,
  deleteContacts: deleteContactsRoute,
  listThreads: listThreadsRoute,
  sendMessage: sendMessageRoute,
  listMessages: listMessagesRoute,
  rescheduleMessage: rescheduleMessageRoute,
  cancelMessage: cancelMessageRoute,
  getConsent: getConsentRoute,
  recordConsent: recordConsentRoute,
} satisfies Record<string, RouteSpec>;

export type RouteId = keyof typeof routes;

export const ROUTES: RouteSpec[] = Object.values(routes);
