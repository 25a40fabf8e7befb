import type { z } from 'zod';
import {
  CallEnvelopeSchema,
  CallListSchema,
  ContactCreatedSchema,
  ContactEnvelopeSchema,
  ContactListSchema,
  CreateContactBody,
  IdPath,
  ListCallsQuery,
  ListContactsQuery,
  MeSchema,
  UpdateContactBody,
} from '../core/schemas';
import {
  CounterpartPath,
  ListMessagesQuery,
  MessageEnvelopeSchema,
  MessageListSchema,
  SendMessageBody,
  ThreadListSchema,
} from '../core/message-schemas';
import type { Scope } from '../core/scopes';

/**
 * The route manifest: the one list of the API's operations. The CDK API construct creates a
 * function and a method per entry, the local runtime serves them, and the OpenAPI generator
 * documents them; each handler file reads its own entry for its scope and schemas.
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
  query?: z.ZodType;
  path_params?: z.ZodType;
  /**
   * Status for path parameters that fail validation: 404 by default (a malformed id cannot name
   * a row), 400 where the spec lists a 400 for the path (`/messages/{counterpart}`).
   */
  invalidPathStatus?: 400 | 404;
  body?: z.ZodType;
  /** Success status -> response schema (null: no body). */
  responses: Record<number, z.ZodType | null>;
  /** Error statuses this operation can answer, besides 401/403/429 on authenticated routes. */
  errors: number[];
  /** Supports the `Idempotency-Key` header. */
  idempotent?: boolean;
};

export const API_PREFIX = '/api/v1';

const route = <T extends RouteSpec>(spec: T): T => spec;

export const routes = {
  getOpenApi: route({
    operationId: 'getOpenApi',
    method: 'GET',
    path: '/openapi.json',
    handler: 'lambdas/api/get-openapi.ts',
    auth: null,
    scope: null,
    summary: 'The OpenAPI 3.1 description of this service',
    responses: { 200: null },
    errors: [],
  }),
  getMe: route({
    operationId: 'getMe',
    method: 'GET',
    path: '/me',
    handler: 'lambdas/api/get-me.ts',
    auth: 'apiKey',
    scope: null,
    summary: "The key's organization, identity, scopes and rate limit",
    responses: { 200: MeSchema },
    errors: [],
  }),
  listCalls: route({
    operationId: 'listCalls',
    method: 'GET',
    path: '/calls',
    handler: 'lambdas/api/list-calls.ts',
    auth: 'apiKey',
    scope: 'calls.view.team',
    summary: 'Call history, newest first',
    query: ListCallsQuery,
    responses: { 200: CallListSchema },
    errors: [400],
  }),
  getCall: route({
    operationId: 'getCall',
    method: 'GET',
    path: '/calls/{id}',
    handler: 'lambdas/api/get-call.ts',
    auth: 'apiKey',
    scope: 'calls.view.team',
    summary: 'One call',
    path_params: IdPath,
    responses: { 200: CallEnvelopeSchema },
    errors: [404],
  }),
  listContacts: route({
    operationId: 'listContacts',
    method: 'GET',
    path: '/contacts',
    handler: 'lambdas/api/list-contacts.ts',
    auth: 'apiKey',
    scope: 'contacts.view',
    summary: "The organization's shared directory, newest first",
    query: ListContactsQuery,
    responses: { 200: ContactListSchema },
    errors: [400],
  }),
  createContact: route({
    operationId: 'createContact',
    method: 'POST',
    path: '/contacts',
    handler: 'lambdas/api/create-contact.ts',
    auth: 'apiKey',
    scope: 'contacts.manage',
    summary: 'Create a contact, or name the auto-created contact of this number (adopted)',
    body: CreateContactBody,
    responses: { 201: ContactCreatedSchema, 200: ContactCreatedSchema },
    errors: [400, 409, 413, 415],
    idempotent: true,
  }),
  getContact: route({
    operationId: 'getContact',
    method: 'GET',
    path: '/contacts/{id}',
    handler: 'lambdas/api/get-contact.ts',
    auth: 'apiKey',
    scope: 'contacts.view',
    summary: 'One contact',
    path_params: IdPath,
    responses: { 200: ContactEnvelopeSchema },
    errors: [404],
  }),
  updateContact: route({
    operationId: 'updateContact',
    method: 'PATCH',
    path: '/contacts/{id}',
    handler: 'lambdas/api/update-contact.ts',
    auth: 'apiKey',
    scope: 'contacts.manage',
    summary: 'Change some fields of a contact',
    path_params: IdPath,
    body: UpdateContactBody,
    responses: { 200: ContactEnvelopeSchema },
    errors: [400, 404, 409, 413, 415],
  }),
  deleteContact: route({
    operationId: 'deleteContact',
    method: 'DELETE',
    path: '/contacts/{id}',
    handler: 'lambdas/api/delete-contact.ts',
    auth: 'apiKey',
    scope: 'contacts.manage',
    summary: 'Delete a contact',
    path_params: IdPath,
    responses: { 204: null },
    errors: [404],
  }),
  listThreads: route({
    operationId: 'listThreads',
    method: 'GET',
    path: '/messages',
    handler: 'lambdas/api/list-threads.ts',
    auth: 'apiKey',
    scope: 'sms.view',
    summary: 'Every text conversation of the organization, one per external number, newest activity first',
    responses: { 200: ThreadListSchema },
    errors: [],
  }),
  sendMessage: route({
    operationId: 'sendMessage',
    method: 'POST',
    path: '/messages',
    handler: 'lambdas/api/send-message.ts',
    auth: 'apiKey',
    scope: 'sms.send',
    summary: "Send a text as the organization from its SMS number (billed at the organization's rate)",
    body: SendMessageBody,
    responses: { 201: MessageEnvelopeSchema },
    errors: [400, 402, 409, 413, 415, 502],
    idempotent: true,
  }),
  listMessages: route({
    operationId: 'listMessages',
    method: 'GET',
    path: '/messages/{counterpart}',
    handler: 'lambdas/api/list-messages.ts',
    auth: 'apiKey',
    scope: 'sms.view',
    summary: 'The conversation with one external number, newest first; pages go back in time',
    path_params: CounterpartPath,
    invalidPathStatus: 400,
    query: ListMessagesQuery,
    responses: { 200: MessageListSchema },
    errors: [400],
  }),
} satisfies Record<string, RouteSpec>;

export type RouteId = keyof typeof routes;

export const ROUTES: RouteSpec[] = Object.values(routes);
