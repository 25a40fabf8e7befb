import type { z } from 'zod/mini';
import type { Scope } from '../../contexts/tenants/scopes';
import type { ErrorCode } from '../../shared/errors';

/**
 * What one operation of the JSON API is: the shape of every entry of the route manifest
 * (lambdas/handlers/api/routes.ts), and what the middleware chain (./api-handler.ts), the CDK API
 * construct, the local runtime and the OpenAPI generator read. Apart from the manifest so that an
 * operation module can name its type without importing the manifest that imports it.
 */
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** The resource an operation belongs to: its OpenAPI tag (the reference page's chapter, a generated client's group). */
export type ApiTag = 'Identity' | 'Calls' | 'Contacts' | 'Messages' | 'Consent' | 'Reference';

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
  tag: ApiTag;
  /** One line: the OpenAPI `summary`, a reference page's heading. */
  summary: string;
  /**
   * What the operation does beyond its summary: rules, ordering, side effects (OpenAPI `description`, after the scope).
   */
  description: string;
  query?: z.ZodMiniType;
  path_params?: z.ZodMiniType;
  /**
   * Status for path parameters that fail validation: 404 by default (a malformed id cannot name
   * a row), 400 where the spec lists a 400 for the path (`/messages/{counterpart}`).
   */
  invalidPathStatus?: 400 | 404;
  body?: z.ZodMiniType;
  /** Success status -> the response body's OpenAPI component (null: no body, or `produces`). */
  responses: Record<number, ResponseComponent | null>;
  /** A success body that is not JSON (the reference page's HTML): its media type. */
  produces?: 'text/html';
  /**
   * Error codes of this operation's own rules. The generator adds the codes every operation of
   * its kind can answer (authentication, scope, rate limit, validation, body, Idempotency-Key,
   * not_found for a path id, internal): lambdas/handlers/api/openapi/error-codes.ts.
   */
  errors: ErrorCode[];
  /** Supports the `Idempotency-Key` header. */
  idempotent?: boolean;
  /** A body larger than this is refused with 413 before it is parsed; 64 KiB by default (./api-handler.ts). */
  maxBodyBytes?: number;
  /**
   * The function's timeout in seconds, when the default 10 s is not enough (lib/constructs/function-factory.ts); under
   * API Gateway's 29 s.
   */
  timeoutSeconds?: number;
  /** The header's rules when the operation keeps its keys itself (OpenAPI parameter description). */
  idempotencyRules?: string;
};

/**
 * A response body, named by its component in lambdas/handlers/api/openapi/generator.ts: a name, not the schema,
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
  | 'ContactBatch'
  | 'ContactDeleteBatch'
  | 'ThreadList'
  | 'MessageList'
  | 'MessageEnvelope'
  | 'ConsentEnvelope';

export const API_PREFIX = '/api/v1';
