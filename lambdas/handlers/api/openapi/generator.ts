import * as z from 'zod/mini';
import { CallEnvelopeSchema, CallListSchema, CallSchema } from '../../../contexts/calls/schemas';
import { CreateContactBody } from '../../../contexts/contacts/requests/create-contact';
import { UpdateContactBody } from '../../../contexts/contacts/requests/update-contact';
import { ContactCreatedSchema, ContactEnvelopeSchema, ContactListSchema, ContactSchema } from '../../../contexts/contacts/schemas';
import { ApiKeyInfoSchema, MeSchema, TenantSchema } from '../../../contexts/tenants/schemas';
import { SendMessageBody } from '../../../contexts/texting/requests/send-message';
import { MessageEnvelopeSchema, MessageListSchema, MessageSchema, ThreadListSchema, ThreadSchema } from '../../../contexts/texting/schemas';
import { EVENT_SCHEMAS } from '../../../contexts/webhooks/event-schemas';
import { ErrorSchema } from '../../http/error-schema';
import { API_PREFIX, type RouteSpec } from '../../http/route-spec';
import { ROUTES } from '../routes';
import { webhooksSection } from './webhooks-section';

/**
 * The OpenAPI 3.1 document, generated from the route manifest and the zod schemas that validate
 * requests, so documentation and behaviour come from one source. `npm run openapi` (bin/openapi.ts)
 * writes it to lambdas/handlers/api/openapi/openapi.json, which GET /openapi.json serves as built; a unit test
 * (test/unit/openapi-file.test.ts) fails when that file and this generator disagree.
 */
type JsonSchema = Record<string, unknown>;

const componentRef = (id: string) => ({ $ref: `#/components/schemas/${id}` });

const idOf = (schema: z.ZodMiniType): string | undefined => z.globalRegistry.get(schema)?.id as string | undefined;

/**
 * The components, in the document's order. Each schema names itself where it is built
 * (`.register(z.globalRegistry, { id })`); the order is set here because a process registers them
 * in the order it imports them, and a handler imports only its own request schemas.
 */
const COMPONENTS: z.ZodMiniType[] = [
  ErrorSchema,
  TenantSchema,
  ApiKeyInfoSchema,
  MeSchema,
  CallSchema,
  ContactSchema,
  CallListSchema,
  CallEnvelopeSchema,
  ContactListSchema,
  ContactEnvelopeSchema,
  ContactCreatedSchema,
  CreateContactBody,
  UpdateContactBody,
  MessageSchema,
  ThreadSchema,
  ThreadListSchema,
  MessageListSchema,
  MessageEnvelopeSchema,
  SendMessageBody,
  ...Object.values(EVENT_SCHEMAS),
];

/** Request components keep `additionalProperties: false` (unknown fields are refused, 400). */
const REQUEST_COMPONENTS = new Set(['CreateContactRequest', 'UpdateContactRequest', 'SendMessageRequest']);

function stripClosedObjects(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(stripClosedObjects);
  if (schema && typeof schema === 'object') {
    return Object.fromEntries(
      Object.entries(schema)
        // v1 adds response fields over time; a response schema must not forbid them.
        .filter(([key, value]) => !(key === 'additionalProperties' && value === false))
        .map(([key, value]) => [key, stripClosedObjects(value)]),
    );
  }
  return schema;
}

function componentSchemas(): Record<string, JsonSchema> {
  const components = z.registry<{ id: string }>();
  for (const schema of COMPONENTS) components.add(schema, { id: idOf(schema)! });
  const { schemas } = z.toJSONSchema(components, {
    target: 'draft-2020-12',
    uri: (id) => `#/components/schemas/${id}`,
    unrepresentable: 'any',
  }) as { schemas: Record<string, JsonSchema> };
  return Object.fromEntries(
    Object.entries(schemas).map(([id, schema]) => {
      const { $schema: _schema, $id: _id, ...rest } = schema;
      return [id, REQUEST_COMPONENTS.has(id) ? rest : (stripClosedObjects(rest) as JsonSchema)];
    }),
  );
}

function parameters(schema: z.ZodMiniType | undefined, where: 'query' | 'path') {
  if (!schema) return [];
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, JsonSchema>;
    required?: string[];
  };
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { description, ...propertySchema } = property;
    return {
      name,
      in: where,
      required: where === 'path' || (json.required ?? []).includes(name),
      ...(description !== undefined && { description }),
      schema: propertySchema,
    };
  });
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'A field failed validation; `error` names it',
  401: 'Key missing, revoked, expired or unknown',
  402: "The organization's billing status or spending limit does not allow sending (`billing_blocked`, `spending_limit_reached`)",
  403: "Key lacks the required scope, or the organization's plan has no API access",
  404: 'No such row in this organization',
  409:
    'Conflict: contact conflicts carry `contactId`; POST /messages: no SMS number (`no_sms_number`) or the recipient opted out ' +
    '(`recipient_opted_out`; with `messageId` when the carrier reported the opt-out on this send); a request with the same ' +
    'Idempotency-Key is still running (`idempotency_conflict`)',
  413: 'Body larger than 64 KiB',
  415: 'Body is not application/json',
  422:
    'The Idempotency-Key was already used with a different body (`idempotency_mismatch`); POST /messages: the carrier refused ' +
    'the text for good, e.g. an invalid number (`carrier_rejected`, with `messageId` and `carrierCode`; the message is `failed`, nothing billed)',
  429: 'Rate limit exceeded',
  500: 'Internal error; the message carries a request id',
  502:
    'The carrier certainly did not take the message (`carrier_unavailable`): nothing was billed and sending again is safe, with a ' +
    'new Idempotency-Key. When the carrier may have taken it (a timeout, a reset, a carrier 5xx) the answer is 201 `queued` instead',
};

/** Routes marked `idempotent` accept the header (lambdas/handlers/http/idempotency.ts has the rules). */
const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'A unique key per intended operation (e.g. a UUID). A retry with the same key and body returns the first ' +
    'successful response (header `Idempotent-Replayed: true`) without doing anything again; the same key with ' +
    'another body is 422, and while the first request still runs 409. Keys are kept 24 hours per organization; a ' +
    'failed request does not keep its key.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
};

/** Spec section 8: on every response the handlers write to an identified key (lambdas/contexts/tenants/rate-limit-window.ts). */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': { description: 'Requests allowed per key and minute', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the window resets', schema: { type: 'integer' } },
  'RateLimit-Policy': { description: 'IETF draft form, e.g. `"default";q=120;w=60`', schema: { type: 'string' } },
  RateLimit: { description: 'IETF draft form, e.g. `"default";r=119;t=42`', schema: { type: 'string' } },
};

const errorResponse = (status: number, keyed: boolean) => ({
  description: ERROR_DESCRIPTIONS[status] ?? 'Error',
  // A 401 is written before any key is known, so it has no rate-limit headers.
  headers: {
    ...(keyed && status !== 401 && RATE_LIMIT_HEADERS),
    ...(status === 401 && { 'WWW-Authenticate': { schema: { type: 'string', const: 'Bearer' } } }),
    ...(status === 429 && { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } } }),
  },
  content: { 'application/json': { schema: componentRef('Error') } },
});

function operation(route: RouteSpec) {
  const responses: Record<string, unknown> = {};
  for (const [status, id] of Object.entries(route.responses)) {
    const headers = route.auth ? { headers: RATE_LIMIT_HEADERS } : {};
    responses[status] =
      Number(status) === 204
        ? { description: 'No content', ...headers }
        : {
            description: 'Success',
            ...headers,
            content: { 'application/json': { schema: id ? componentRef(id) : { type: 'object' } } },
          };
  }
  // A path parameter with a malformed percent-escape is 400 naming it, on every route that has one.
  const errors = [
    ...route.errors,
    ...(route.path_params ? [400] : []),
    ...(route.idempotent ? [400, 409, 422] : []),
    ...(route.auth ? [401, 403, 429] : [429]),
    500,
  ];
  for (const status of [...new Set(errors)].sort()) responses[status] = errorResponse(status, route.auth !== null);
  const bodyId = route.body && idOf(route.body);
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...((route.scope || route.description) && {
      description: [route.scope && `Requires scope \`${route.scope}\`.`, route.description].filter(Boolean).join('\n\n'),
    }),
    security: route.auth ? [{ bearerAuth: [] }] : [],
    parameters: [
      ...parameters(route.path_params, 'path'),
      ...parameters(route.query, 'query'),
      ...(route.idempotent
        ? [route.idempotencyRules ? { ...IDEMPOTENCY_KEY_PARAMETER, description: route.idempotencyRules } : IDEMPOTENCY_KEY_PARAMETER]
        : []),
    ],
    ...(route.body && {
      requestBody: {
        required: true,
        content: { 'application/json': { schema: bodyId ? componentRef(bodyId) : z.toJSONSchema(route.body) } },
      },
    }),
    responses,
  };
}

export function buildOpenApiDocument() {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    paths[route.path] ??= {};
    paths[route.path][route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Call, Contact and Text-Message Service',
      version: '1.0.0',
      description:
        'Read calls, manage the shared contact directory, read and send text messages as the organization. ' +
        'Authenticate with `Authorization: Bearer <API_KEY>`; the organization is resolved from the key.',
    },
    servers: [{ url: API_PREFIX }],
    security: [{ bearerAuth: [] }],
    paths,
    webhooks: webhooksSection(),
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key issued in the portal' } },
      schemas: componentSchemas(),
    },
  };
}

/** The committed form of the document (lambdas/handlers/api/openapi/openapi.json): two-space indent, keys as built, a final newline. */
export function openApiJson(): string {
  return `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
}
