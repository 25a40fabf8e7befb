import { validate } from '@readme/openapi-parser';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument } from '../../lambdas/handlers/api/openapi/generator';
import { ROUTES } from '../../lambdas/handlers/api/routes';
import { API_PREFIX } from '../../lambdas/handlers/http/route-spec';

const document = buildOpenApiDocument();

describe('the OpenAPI document', () => {
  it('validates as OpenAPI 3.1', async () => {
    const result = await validate(structuredClone(document) as never);

    expect(result.valid ? [] : result.errors).toEqual([]);
    expect(document.openapi).toBe('3.1.0');
  });

  it('has a JSON Schema 2020-12 component for every schema it references, each compilable', () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    ajv.addSchema({ $id: 'openapi', components: document.components } as never);

    for (const name of Object.keys(document.components.schemas)) {
      expect(() => ajv.getSchema(`openapi#/components/schemas/${name}`)).not.toThrow();
    }
    const refs = JSON.stringify(document).match(/#\/components\/schemas\/[A-Za-z]+/g) ?? [];
    for (const ref of new Set(refs)) expect(document.components.schemas).toHaveProperty(ref.split('/').pop()!);
  });

  it('documents every route of the manifest under its server prefix, with scope and security', () => {
    expect(document.servers).toEqual([{ url: API_PREFIX }]);
    for (const route of ROUTES) {
      const operation = (document.paths[route.path] as Record<string, { operationId: string; security: unknown[] }>)[
        route.method.toLowerCase()
      ];
      expect(operation.operationId).toBe(route.operationId);
      expect(operation.security).toEqual(route.auth ? [{ bearerAuth: [] }] : []);
    }
  });

  it('documents the query parameters from the same schemas that validate them', () => {
    const listCalls = document.paths['/calls'].get as { parameters: { name: string; in: string }[] };

    expect(listCalls.parameters.map((p) => `${p.in}:${p.name}`)).toEqual([
      'query:limit',
      'query:cursor',
      'query:direction',
      'query:since',
    ]);
  });

  it('types limit as an integer with no maximum on every list route, since larger values are clamped', () => {
    type Parameter = { name: string; schema: Record<string, unknown> };
    const limits = Object.values(document.paths)
      .flatMap((item) => Object.values(item as Record<string, { parameters?: Parameter[] }>))
      .flatMap((operation) => operation.parameters ?? [])
      .filter((parameter) => parameter.name === 'limit');

    expect(limits.length).toBe(4);
    for (const { schema } of limits) expect(schema).toEqual({ type: 'integer', minimum: 1, default: 50 });
  });

  it('documents the rate-limit headers on the responses of keyed routes, and only there', () => {
    type Responses = Record<string, { headers?: Record<string, unknown> }>;
    const listCalls = (document.paths['/calls'].get as { responses: Responses }).responses;
    const openApi = (document.paths['/openapi.json'].get as { responses: Responses }).responses;
    const rateLimitNames = [
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'RateLimit-Policy',
      'RateLimit',
    ];

    for (const status of ['200', '400', '403', '429'])
      expect(Object.keys(listCalls[status].headers ?? {})).toEqual(expect.arrayContaining(rateLimitNames));
    expect(Object.keys(listCalls['401'].headers ?? {})).toEqual(['WWW-Authenticate']);
    expect(Object.keys(openApi['200'].headers ?? {})).toEqual([]);
  });

  it('keeps response schemas open to added fields and request bodies closed to unknown ones', () => {
    const schemas = document.components.schemas as Record<string, { additionalProperties?: boolean }>;

    expect(schemas.Contact.additionalProperties).toBeUndefined();
    expect(schemas.CreateContactRequest.additionalProperties).toBe(false);
  });
});
