import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { documentedEventExamples, documentedExamples } from '../support/api-examples';
import { createOpenApiValidator, type OpenApiDocument } from '../../local/openapi-validator';

/**
 * docs/api.md, the integrators' page, shows a real request and answer for every operation
 * (captured by `npm run docs:examples`). Each answer must still be what the OpenAPI document
 * promises for its operation and status, so the page cannot drift from the contract.
 */
const REPO_ROOT = resolve(__dirname, '..', '..');
const page = readFileSync(join(REPO_ROOT, 'docs', 'api.md'), 'utf8');
const document = JSON.parse(
  readFileSync(join(REPO_ROOT, 'lambdas', 'handlers', 'api', 'openapi', 'openapi.json'), 'utf8'),
) as OpenApiDocument;
const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods as unknown as Record<string, { operationId: string }>).map(([method, operation]) => ({
    path,
    method,
    operationId: operation.operationId,
  })),
);
const examples = documentedExamples(page);
/** One validator for every example: it compiles the whole document's schemas as it is made, the same for each. */
const validator = createOpenApiValidator(document);

describe('docs/api.md', () => {
  it('shows a captured example of every operation but the document and its reference page, with a successful answer', () => {
    const documented = new Set(
      examples.filter((example) => example.status < 300).map((example) => example.operationId),
    );

    const missing = operations
      .map((operation) => operation.operationId)
      .filter((id) => id !== 'getOpenApi' && id !== 'getApiReference' && !documented.has(id));

    expect(missing).toEqual([]);
  });

  it('has only filled examples: none is an empty marker', () => {
    const empty = [...page.matchAll(/<!-- example: (\w+ \d{3}) -->\n<!-- \/example -->/g)].map((match) => match[1]);

    expect(empty).toEqual([]);
  });

  it.each(examples.map((example) => [`${example.operationId} ${example.status}`, example] as const))(
    'example %s answers what the OpenAPI document promises',
    (_name, example) => {
      const operation = operations.find((candidate) => candidate.operationId === example.operationId);

      expect(operation).toBeDefined();
      expect(() => validator.check(operation!.method, operation!.path, example.status, example.body)).not.toThrow();
    },
  );
});

describe('the event examples of docs/api.md', () => {
  const events = documentedEventExamples(page);
  const webhooks = (
    document as unknown as {
      webhooks: Record<
        string,
        { post: { requestBody: { content: { 'application/json': { schema: { $ref: string } } } } } }
      >;
    }
  ).webhooks;

  it('shows a delivered message.delivered and message.failed, and one of each contact and consent event', () => {
    expect(events.map((event) => event.type)).toEqual([
      'message.delivered',
      'message.failed',
      'contact.created',
      'contact.updated',
      'contact.deleted',
      'consent.changed',
    ]);
  });

  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);
  ajv.addSchema({ $id: 'openapi', components: document.components } as never);

  it.each(events.map((event) => [event.type, event] as const))(
    '%s is a body the OpenAPI document describes for its type',
    (type, event) => {
      const valid = ajv.validate(
        `openapi${webhooks[type].post.requestBody.content['application/json'].schema.$ref}`,
        event.body,
      );

      expect(ajv.errorsText(ajv.errors)).toBe('No errors');
      expect(valid).toBe(true);
      expect(event.body).toMatchObject({ type });
    },
  );
});
