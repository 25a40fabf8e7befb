import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument } from '../../lambdas/handlers/api/openapi/generator';
import { ROUTES } from '../../lambdas/handlers/api/routes';
import { ERROR_STATUS } from '../../lambdas/shared/errors';
import { createOpenApiValidator, type OpenApiDocument } from '../../local/openapi-validator';

/**
 * The document's examples are what integrators copy and what mock servers answer: each must be
 * valid against the schema beside it, and every operation and webhook must have them.
 */
type MediaType = { schema: Record<string, unknown>; examples?: Record<string, { value: unknown }> };
type Operation = {
  operationId: string;
  tags: string[];
  summary: string;
  description: string;
  requestBody?: { content: Record<string, MediaType> };
  responses: Record<string, { content?: Record<string, MediaType> }>;
};

const document = buildOpenApiDocument() as unknown as {
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, { post: Operation }>;
  tags: { name: string; description: string }[];
  components: { schemas: Record<string, { enum?: string[] }> };
};

const operations: [string, Operation][] = [
  ...Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]): [string, Operation] => [`${method.toUpperCase()} ${path}`, op]),
  ),
  ...Object.entries(document.webhooks).map(([type, item]): [string, Operation] => [`webhook ${type}`, item.post]),
];

/** Every JSON media type of the document that carries examples, with where it is. */
function jsonMediaTypes(): { where: string; media: MediaType }[] {
  return operations.flatMap(([name, op]) => [
    ...(op.requestBody?.content['application/json']
      ? [{ where: `${name} request`, media: op.requestBody.content['application/json'] }]
      : []),
    ...Object.entries(op.responses).flatMap(([status, response]) =>
      response.content?.['application/json']
        ? [{ where: `${name} -> ${status}`, media: response.content['application/json'] }]
        : [],
    ),
  ]);
}

function compiler() {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addSchema({ $id: 'https://openapi.local/openapi.json', components: document.components });
  const rebase = (schema: unknown): unknown =>
    JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"https://openapi.local/openapi.json#/components/'));
  return (schema: Record<string, unknown>) => {
    const validate = ajv.compile(rebase(schema) as Record<string, unknown>);
    return (value: unknown) => (validate(value) ? [] : ajv.errorsText(validate.errors).split(', '));
  };
}

describe('the examples of the OpenAPI document', () => {
  it('are each valid against the schema beside them', () => {
    // Arrange
    const compile = compiler();
    const media = jsonMediaTypes().filter(({ media }) => media.examples);

    // Act
    const invalid = media.flatMap(({ where, media: { schema, examples } }) => {
      const validate = compile(schema);
      return Object.entries(examples!).flatMap(([name, example]) =>
        validate(example.value).map((error) => `${where} example ${name}: ${error}`),
      );
    });

    // Assess
    expect(media.length).toBeGreaterThan(60);
    expect(invalid).toEqual([]);
  });

  it('would catch an example that breaks its schema', () => {
    // Arrange
    const sendMessage = document.paths['/messages'].post;
    const media = sendMessage.responses['201'].content!['application/json'];
    const { message } = media.examples!.created.value as { message: Record<string, unknown> };

    // Act
    const errors = compiler()(media.schema)({ message: { ...message, status: 'teleported' } });

    // Assess
    expect(errors.join(' ')).toMatch(/status/);
  });

  it('cover every JSON request body, every JSON success body and every webhook payload', () => {
    // Arrange
    const missing: string[] = [];

    // Act
    for (const { where, media } of jsonMediaTypes()) {
      const isSuccess = / -> 2\d\d$/.test(where) && !where.startsWith('GET /openapi.json');
      if ((where.endsWith(' request') || isSuccess) && Object.keys(media.examples ?? {}).length === 0)
        missing.push(where);
    }

    // Assess
    expect(missing).toEqual([]);
    expect(Object.keys(document.webhooks).sort()).toEqual([
      'call.completed',
      'consent.changed',
      'contact.created',
      'contact.deleted',
      'contact.updated',
      'message.canceled',
      'message.delivered',
      'message.failed',
      'sms.received',
      'voicemail.received',
      'webhook.test',
    ]);
  });
});

describe('the operations of the OpenAPI document', () => {
  it('each have a tag defined at the top, a summary, a description and a unique camelCase operationId', () => {
    // Arrange
    const defined = new Set(document.tags.map((tag) => tag.name));

    // Act
    const ids = operations.map(([, op]) => op.operationId);

    // Assess
    for (const [name, op] of operations) {
      expect({ name, tagged: op.tags.length === 1 && defined.has(op.tags[0]) }).toEqual({ name, tagged: true });
      expect({ name, summary: op.summary.length > 0, description: op.description.length > 0 }).toEqual({
        name,
        summary: true,
        description: true,
      });
    }
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z][a-zA-Z]+$/);
    expect(ROUTES.map((route) => route.operationId)).toEqual(
      expect.arrayContaining(['getMe', 'listCalls', 'sendMessage', 'getApiReference']),
    );
  });

  it('name in each error response the codes it can carry, as an enum of the ErrorCode component, with an example each', () => {
    // Arrange
    const allCodes = document.components.schemas.ErrorCode.enum!;
    const sendMessage = document.paths['/messages'].post;

    // Act
    const conflict = sendMessage.responses['409'].content!['application/json'];

    // Assess
    expect(allCodes).toEqual(Object.keys(ERROR_STATUS));
    expect((conflict.schema.properties as { code: { enum: string[] } }).code.enum).toEqual([
      'no_sms_number',
      'recipient_opted_out',
      'idempotency_conflict',
    ]);
    expect(Object.keys(conflict.examples!)).toEqual(['no_sms_number', 'recipient_opted_out', 'idempotency_conflict']);
    for (const [name, op] of operations.filter(([name]) => !name.startsWith('webhook'))) {
      for (const [status, response] of Object.entries(op.responses).filter(([status]) => Number(status) >= 400)) {
        const codes = (response.content!['application/json'].schema.properties as { code: { enum: string[] } }).code
          .enum;
        for (const code of codes)
          expect({ name, code, status: ERROR_STATUS[code as keyof typeof ERROR_STATUS] }).toEqual({
            name,
            code,
            status: Number(status),
          });
      }
    }
  });

  it('let the end-to-end validator refuse an error code the operation does not list for that status', () => {
    // Arrange
    const validator = createOpenApiValidator(buildOpenApiDocument() as unknown as OpenApiDocument);

    // Act
    const listed = () => validator.check('POST', '/messages', 409, { error: 'opted out', code: 'recipient_opted_out' });
    const unlisted = () => validator.check('POST', '/messages', 409, { error: 'conflict', code: 'contact_conflict' });

    // Assess
    expect(listed).not.toThrow();
    expect(unlisted).toThrow(/code/);
  });

  it('answer 404 not_found on a path id and never on a list', () => {
    // Arrange
    const getContact = document.paths['/contacts/{id}'].get;
    const listContacts = document.paths['/contacts'].get;

    // Act
    const codes = (op: Operation, status: string) =>
      (
        op.responses[status]?.content?.['application/json'].schema.properties as
          | { code: { enum: string[] } }
          | undefined
      )?.code.enum;

    // Assess
    expect(codes(getContact, '404')).toEqual(['not_found']);
    expect(codes(listContacts, '404')).toBeUndefined();
    expect(codes(listContacts, '400')).toEqual(['validation_failed']);
  });
});
