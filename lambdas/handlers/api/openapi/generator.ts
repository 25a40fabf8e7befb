import * as z from 'zod/mini';
import { CallEnvelopeSchema, CallListSchema, CallSchema } from '../../../contexts/calls/schemas';
import { CreateContactBody } from '../../../contexts/contacts/requests/create-contact';
import { UpdateContactBody } from '../../../contexts/contacts/requests/update-contact';
import { ContactDeleteItem, DeleteContactsBody } from '../../../contexts/contacts/requests/delete-contacts';
import { ContactBatchItem, UpsertContactsBody } from '../../../contexts/contacts/requests/upsert-contacts';
import {
  ContactBatchResultSchema,
  ContactBatchSchema,
  ContactCreatedSchema,
  ContactDeleteBatchSchema,
  ContactDeleteResultSchema,
  ContactEnvelopeSchema,
  ContactListSchema,
  ContactSchema,
  DeletedContactSchema,
} from '../../../contexts/contacts/schemas';
import { ApiKeyInfoSchema, MeSchema, QuietHoursSchema, TenantSchema } from '../../../contexts/tenants/schemas';
import { SendMessageBody } from '../../../contexts/texting/requests/send-message';
import { RescheduleMessageBody } from '../../../contexts/texting/requests/change-message';
import {
  MessageEnvelopeSchema,
  MessageListSchema,
  MessageSchema,
  ThreadListSchema,
  ThreadSchema,
} from '../../../contexts/texting/schemas';
import { EVENT_SCHEMAS } from '../../../contexts/webhooks/event-schemas';
import { RecordConsentBody } from '../../../contexts/consent/requests/record-consent';
import {
  ConsentEnvelopeSchema,
  ConsentEvidenceSchema,
  ConsentHistoryEntrySchema,
  ConsentRecordSchema,
} from '../../../contexts/consent/schemas';
import { ErrorCodeSchema, ErrorSchema } from '../../http/error-schema';
import type { ErrorCode } from '../../../shared/errors';
import { API_PREFIX, type ApiTag, type ResponseComponent, type RouteSpec } from '../../http/route-spec';
import { ROUTES, type RouteId } from '../routes';
import { codesByStatus, ERROR_CODE_DOCS, ERROR_CODE_LIST, errorCodesOf } from './error-codes';
import { OPERATION_EXAMPLES } from './examples';
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
  ErrorCodeSchema,
  ErrorSchema,
  TenantSchema,
  ApiKeyInfoSchema,
  QuietHoursSchema,
  MeSchema,
  CallSchema,
  ContactSchema,
  DeletedContactSchema,
  CallListSchema,
  CallEnvelopeSchema,
  ContactListSchema,
  ContactEnvelopeSchema,
  ContactCreatedSchema,
  CreateContactBody,
  UpdateContactBody,
  ContactBatchItem,
  UpsertContactsBody,
  ContactBatchResultSchema,
  ContactBatchSchema,
  ContactDeleteItem,
  DeleteContactsBody,
  ContactDeleteResultSchema,
  ContactDeleteBatchSchema,
  MessageSchema,
  ThreadSchema,
  ThreadListSchema,
  MessageListSchema,
  MessageEnvelopeSchema,
  SendMessageBody,
  RescheduleMessageBody,
  ConsentEvidenceSchema,
  ConsentHistoryEntrySchema,
  ConsentRecordSchema,
  ConsentEnvelopeSchema,
  RecordConsentBody,
  ...Object.values(EVENT_SCHEMAS),
];

/** Request components keep `additionalProperties: false` (unknown fields are refused, 400). */
const REQUEST_COMPONENTS = new Set([
  'CreateContactRequest',
  'UpdateContactRequest',
  'ContactBatchItem',
  'UpsertContactsRequest',
  'ContactDeleteItem',
  'DeleteContactsRequest',
  'SendMessageRequest',
  'RescheduleMessageRequest',
  'RecordConsentRequest',
]);

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
    override: documentedAs,
  }) as { schemas: Record<string, JsonSchema> };
  return Object.fromEntries(
    Object.entries(schemas).map(([id, schema]) => {
      const { $schema: _schema, $id: _id, ...rest } = schema;
      return [id, REQUEST_COMPONENTS.has(id) ? rest : (stripClosedObjects(rest) as JsonSchema)];
    }),
  );
}

/**
 * A query value is text on the wire, so its validator may read digits where the value means a
 * number (`limit`). Such a schema registers `documentedAs`, the JSON Schema clients should see.
 */
function documentedAs({ zodSchema, jsonSchema }: { zodSchema: unknown; jsonSchema: Record<string, unknown> }): void {
  const meta = z.globalRegistry.get(zodSchema as z.ZodMiniType) as
    | { description?: string; documentedAs?: JsonSchema }
    | undefined;
  if (!meta?.documentedAs) return;
  for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
  Object.assign(jsonSchema, meta.documentedAs, meta.description !== undefined && { description: meta.description });
}

function parameters(schema: z.ZodMiniType | undefined, where: 'query' | 'path') {
  if (!schema) return [];
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', override: documentedAs }) as {
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

/**
 * Spec section 8: on every response the handlers write to an identified key
 * (lambdas/contexts/tenants/rate-limit-window.ts).
 */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': { description: 'Requests allowed per key and minute', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the window resets', schema: { type: 'integer' } },
  'RateLimit-Policy': { description: 'IETF draft form, e.g. `"default";q=120;w=60`', schema: { type: 'string' } },
  RateLimit: { description: 'IETF draft form, e.g. `"default";r=119;t=42`', schema: { type: 'string' } },
};

/** What a status means, before the list of the codes an operation answers it with. */
const STATUS_TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  402: 'Payment required',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  413: 'Payload too large',
  415: 'Unsupported media type',
  422: 'Unprocessable',
  429: 'Too many requests',
  500: 'Internal error',
  502: 'Bad gateway',
  503: 'Service unavailable',
};

/**
 * One error status of an operation: the codes it can carry, each with its meaning, as the
 * description, as an enum narrowing `code` (a typed client's switch), and as one example each.
 */
function errorResponse(status: number, codes: ErrorCode[], keyed: boolean) {
  return {
    description: [
      `${STATUS_TITLES[status] ?? 'Error'}:`,
      ...codes.map((code) => `- \`${code}\`: ${ERROR_CODE_DOCS[code].meaning}`),
    ].join('\n'),
    // A 401 is written before any key is known, so it has no rate-limit headers.
    headers: {
      ...(keyed && status !== 401 && RATE_LIMIT_HEADERS),
      ...(status === 401 && {
        'WWW-Authenticate': { description: 'Always `Bearer`', schema: { type: 'string', const: 'Bearer' } },
      }),
      ...((status === 429 || status === 503) && {
        'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } },
      }),
    },
    content: {
      'application/json': {
        schema: {
          type: 'object',
          allOf: [componentRef('Error')],
          properties: { code: { type: 'string', enum: codes } },
        },
        examples: Object.fromEntries(
          codes.map((code) => [code, { summary: code, value: { ...ERROR_CODE_DOCS[code].example, code } }]),
        ),
      },
    },
  };
}

const SUCCESS_TITLES: Record<number, string> = { 200: 'OK', 201: 'Created', 204: 'No content' };

function successResponse(route: RouteSpec, status: number, id: ResponseComponent | null) {
  const headers = route.auth ? { headers: RATE_LIMIT_HEADERS } : {};
  const example = examplesOf(route).responses[status];
  const description = example?.summary ?? SUCCESS_TITLES[status] ?? 'Success';
  if (status === 204) return { description, ...headers };
  if (route.produces) return { description, ...headers, content: { [route.produces]: { schema: { type: 'string' } } } };
  return {
    description,
    ...headers,
    content: {
      'application/json': {
        schema: id ? componentRef(id) : { type: 'object' },
        ...(example && { examples: { [exampleName(status)]: example } }),
      },
    },
  };
}

const exampleName = (status: number) => ({ 200: 'ok', 201: 'created' })[status] ?? `status${status}`;

function examplesOf(route: RouteSpec) {
  const examples = (OPERATION_EXAMPLES as Record<string, (typeof OPERATION_EXAMPLES)[RouteId] | undefined>)[
    route.operationId
  ];
  if (!examples)
    throw new Error(`No examples for ${route.operationId}: add them to lambdas/handlers/api/openapi/examples.ts`);
  return examples;
}

function operation(route: RouteSpec) {
  const responses: Record<string, unknown> = {};
  for (const [status, id] of Object.entries(route.responses))
    responses[status] = successResponse(route, Number(status), id);
  for (const [status, codes] of codesByStatus(errorCodesOf(route)))
    responses[status] = errorResponse(status, codes, route.auth !== null);
  const bodyId = route.body && idOf(route.body);
  const requestExamples = examplesOf(route).request;
  return {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    description: [
      route.scope
        ? `Requires scope \`${route.scope}\`.`
        : route.auth
          ? 'Needs a valid key; no scope.'
          : 'Needs no API key.',
      route.description,
    ].join('\n\n'),
    security: route.auth ? [{ bearerAuth: [] }] : [],
    parameters: [
      ...parameters(route.path_params, 'path'),
      ...parameters(route.query, 'query'),
      ...(route.idempotent
        ? [
            route.idempotencyRules
              ? { ...IDEMPOTENCY_KEY_PARAMETER, description: route.idempotencyRules }
              : IDEMPOTENCY_KEY_PARAMETER,
          ]
        : []),
    ],
    ...(route.body && {
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: bodyId ? componentRef(bodyId) : z.toJSONSchema(route.body),
            ...(requestExamples && { examples: requestExamples }),
          },
        },
      },
    }),
    responses,
  };
}

/** The resources, in the reference's order: each operation names its own (`RouteSpec.tag`), webhooks are `Webhooks`. */
const TAGS: { name: ApiTag | 'Webhooks'; description: string }[] = [
  { name: 'Identity', description: 'The API key, its organization and its scopes.' },
  { name: 'Calls', description: "The organization's call history, read-only." },
  { name: 'Contacts', description: "The organization's shared contact directory." },
  {
    name: 'Messages',
    description: 'Text conversations, one per external number, and sending texts as the organization.',
  },
  {
    name: 'Consent',
    description:
      "Each number's messaging consent for the organization: opt-outs and opt-ins gathered anywhere (an email, a " +
      'web form, a call), with their evidence and history, beside the STOP and START replies the service records.',
  },
  {
    name: 'Webhooks',
    description:
      'Signed events the service posts to the endpoints an organization registers. Verify `X-Service-Signature` over ' +
      'the raw ' +
      'body before parsing it, and use `X-Service-Delivery` as an idempotency key: deliveries are at least once.',
  },
  { name: 'Reference', description: 'This document, as JSON and as a web page.' },
];

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
      description: INTRODUCTION,
      contact: { name: 'The operator of this service (your portal: Settings, API Keys)' },
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    tags: TAGS,
    servers: [{ url: API_PREFIX }],
    security: [{ bearerAuth: [] }],
    paths,
    webhooks: webhooksSection(),
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key issued in the portal' },
      },
      schemas: withCodeList(componentSchemas()),
    },
  };
}

/** The `ErrorCode` enum's description lists every code with its status and meaning. */
function withCodeList(schemas: Record<string, JsonSchema>): Record<string, JsonSchema> {
  const errorCode = schemas.ErrorCode;
  return {
    ...schemas,
    ErrorCode: { ...errorCode, description: `${String(errorCode.description)}\n\n${ERROR_CODE_LIST}` },
  };
}

/** The document's introduction: what every operation shares. */
const INTRODUCTION = [
  'Read calls, manage the shared contact directory, read and send text messages as the organization, and receive ' +
    'signed webhooks.',
  '## Authentication\nSend `Authorization: Bearer <API_KEY>` on every request except `GET /openapi.json` and `GET ' +
    '/docs`. The ' +
    'organization comes from the key: there is no account id to send. `GET /me` lists the scopes the key holds; an ' +
    'operation ' +
    'that needs a scope the key lacks answers 403 `insufficient_scope`.',
  '## Errors\nEvery error is `{"error": "...", "code": "..."}`: `error` is for people (a 400 names the failing ' +
    'field), `code` ' +
    'for programs (the `ErrorCode` enum; each operation lists the codes it can answer). Unknown body fields are ' +
    'refused, so a ' +
    'misspelling cannot look like success.',
  '## Paging\nLists are newest first. Pass `limit` (default 50, 1 to 100; larger values are clamped) and the ' +
    'previous ' +
    "page's `nextCursor` as `cursor`; `nextCursor` is null on the last page.",
  '## Rate limits\n120 requests per key and minute, and 600 per client network and minute before authentication. ' +
    'Every ' +
    'answer to a key carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`; a refusal is 429 ' +
    '`rate_limited` with `Retry-After` in seconds.',
  "## Busy\nWhen an organization's data is too busy to take a request at once (many writes to the same rows), the " +
    'service ' +
    'retries for about a second itself; if that is not enough it answers 503 `temporarily_unavailable` with ' +
    '`Retry-After`. ' +
    'Nothing was changed: send the same request again (with the same `Idempotency-Key`, if it had one).',
  '## Idempotency\n`POST /contacts`, `POST /contacts/batch`, `POST /contacts/batch/delete` and `POST /messages` accept an `Idempotency-Key` header: ' +
    'a retry with the same key ' +
    'and body answers what the first request did and does nothing again. Send every text with one.',
  '## Versioning\nThis is v1, under `/api/v1`. Within v1 fields, optional parameters, endpoints, event types and ' +
    'error ' +
    'codes are added, never removed or renamed: ignore what you do not recognise.',
].join('\n\n');

/**
 * The committed form of the document (lambdas/handlers/api/openapi/openapi.json): two-space indent, keys as built, a
 * final newline.
 */
export function openApiJson(): string {
  return `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
}
