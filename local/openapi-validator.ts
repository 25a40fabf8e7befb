import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * Checks responses against the OpenAPI document the service serves: the schema the document
 * gives for the operation and status, compiled with Ajv (draft 2020-12, as OpenAPI 3.1 uses).
 * A status the document does not list for the operation is a failure too.
 */
type JsonSchema = Record<string, unknown>;
type ResponseObject = { content?: Record<string, { schema?: JsonSchema }> };
type Operation = { responses: Record<string, ResponseObject> };
export type OpenApiDocument = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, JsonSchema> };
};

export type OpenApiValidator = {
  /**
   * Throws unless `body` is what the document promises for `method path` answering `status`.
   * `path` is relative to the server URL (`/contacts/0190...`); a path or method the document
   * does not have is an API Gateway response and must be an Error.
   */
  check: (method: string, path: string, status: number, body: unknown) => void;
};

/** The document's own `#/components/...` references resolve against this base. */
const BASE = 'https://openapi.local/openapi.json';

/** Rewrites local references (`#/components/schemas/X`) to the document's base, for schemas compiled on their own. */
function rebase(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rebase);
  if (!schema || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' && value.startsWith('#') ? `${BASE}${value}` : rebase(value),
    ]),
  );
}

/** Templates with fewer parameters first, so a literal path wins over `{id}` like in API Gateway. */
function templateMatcher(templates: string[]): (path: string) => string | undefined {
  const compiled = templates
    .map((template) => ({
      template,
      params: (template.match(/\{/g) ?? []).length,
      regex: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
    }))
    .sort((a, b) => a.params - b.params);
  return (path) => compiled.find((c) => c.regex.test(path))?.template;
}

export function createOpenApiValidator(document: OpenApiDocument): OpenApiValidator {
  if (!/^3\.1\.\d+$/.test(document.openapi))
    throw new Error(`Expected an OpenAPI 3.1 document, got openapi ${document.openapi}`);
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv);
  // `components` holds schemas but is no keyword of JSON Schema; declared so strict mode accepts the wrapper.
  ajv.addVocabulary(['components']);
  ajv.addSchema({ $id: BASE, components: document.components });
  // Compiling every component up front fails fast on a broken schema or a dangling reference.
  for (const name of Object.keys(document.components.schemas)) ajv.getSchema(`${BASE}#/components/schemas/${name}`);

  const templateOf = templateMatcher(Object.keys(document.paths));
  const compiled = new Map<string, ValidateFunction>();
  const validatorFor = (key: string, schema: JsonSchema) => {
    if (!compiled.has(key)) compiled.set(key, ajv.compile(rebase(schema) as JsonSchema));
    return compiled.get(key)!;
  };
  const errorSchema = { $ref: '#/components/schemas/Error' };

  return {
    check(method, path, status, body) {
      const template = templateOf(path.split('?')[0]);
      const operation = template ? document.paths[template][method.toLowerCase()] : undefined;
      const where = `${method} ${template ?? path} -> ${status}`;
      let schema: JsonSchema | undefined;
      if (!operation) {
        schema = errorSchema;
      } else {
        const response = operation.responses[String(status)];
        if (!response) throw new Error(`${where}: the OpenAPI document lists no such response`);
        schema = response.content?.['application/json']?.schema;
        if (!schema) {
          if (body !== undefined)
            throw new Error(`${where}: the document promises no body, got ${JSON.stringify(body)}`);
          return;
        }
      }
      if (body === undefined) throw new Error(`${where}: expected a JSON body, got none`);
      const validate = validatorFor(operation ? `${template} ${method} ${status}` : 'gateway', schema);
      if (!validate(body)) {
        throw new Error(
          `${where}: body does not match the OpenAPI document: ` +
            `${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`,
        );
      }
    },
  };
}
