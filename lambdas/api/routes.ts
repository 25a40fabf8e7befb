import type { z } from 'zod/mini';
import type { Scope } from '../core/scopes';
import { createContactRoute } from './operations/create-contact';
import { deleteContactRoute } from './operations/delete-contact';
import { getCallRoute } from './operations/get-call';
import { getContactRoute } from './operations/get-contact';
import { getMeRoute } from './operations/get-me';
import { getOpenApiRoute } from './operations/get-openapi';
import { listCallsRoute } from './operations/list-calls';
import { listContactsRoute } from './operations/list-contacts';
import { listMessagesRoute } from './operations/list-messages';
import { listThreadsRoute } from './operations/list-threads';
import { sendMessageRoute } from './operations/send-message';
import { updateContactRoute } from './operations/update-contact';

/**
 * The route manifest: the one list of the API's operations. The CDK API construct creates a
 * function and a method per entry, the local runtime serves them, and the OpenAPI generator
 * documents them. Each entry is a module of its own (operations/), and each handler imports only
 * its own: a handler's bundle then builds the request schemas of its route and no others
 * (zod builds a schema when its module is imported: with every route's schemas, a handler's cold
 * init measured ~10 ms more CPU and its bundle ~21 KiB more; `npm run bench -- --bundles-only`).
 */
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export type RouteSpec = {
  operationId: string;
  method: HttpMethod;
  /** Relative to `/api/v1`, with `{name}` path parameters as API Gateway writes them. */
  path: string;
  /** The handler module, relative to the repository root; it exports `handler`. */
  handler: string;
  /** null: no API key at all (only `GET /openapi.json`). */
  auth: 'apiKey' | null;
  /** The scope the key must hold; null for any valid key. */
  scope: Scope | null;
  summary: string;
  query?: z.ZodMiniType;
  path_params?: z.ZodMiniType;
  /**
   * Status for path parameters that fail validation: 404 by default (a malformed id cannot name
   * a row), 400 where the spec lists a 400 for the path (`/messages/{counterpart}`).
   */
  invalidPathStatus?: 400 | 404;
  body?: z.ZodMiniType;
  /** Success status -> the response body's OpenAPI component (null: no body). */
  responses: Record<number, ResponseComponent | null>;
  /** Error statuses this operation can answer, besides 401/403/429 on authenticated routes. */
  errors: number[];
  /** Supports the `Idempotency-Key` header. */
  idempotent?: boolean;
};

/**
 * A response body, named by its component in lambdas/core/openapi.ts: a name, not the schema,
 * since responses are only documented (never validated), and a schema here would be built in
 * every handler's bundle.
 */
export type ResponseComponent =
  | 'Me'
  | 'CallList'
  | 'CallEnvelope'
  | 'ContactList'
  | 'ContactEnvelope'
  | 'ContactCreated'
  | 'ThreadList'
  | 'MessageList'
  | 'MessageEnvelope';

export const API_PREFIX = '/api/v1';

export const routes = {
  getOpenApi: getOpenApiRoute,
  getMe: getMeRoute,
  listCalls: listCallsRoute,
  getCall: getCallRoute,
  listContacts: listContactsRoute,
  createContact: createContactRoute,
  getContact: getContactRoute,
  updateContact: updateContactRoute,
  deleteContact: deleteContactRoute,
  listThreads: listThreadsRoute,
  sendMessage: sendMessageRoute,
  listMessages: listMessagesRoute,
} satisfies Record<string, RouteSpec>;

export type RouteId = keyof typeof routes;

export const ROUTES: RouteSpec[] = Object.values(routes);
