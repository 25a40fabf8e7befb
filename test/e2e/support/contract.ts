import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { OpenApiDocument } from '../../../local/openapi-validator';

/**
 * A contract suite generated from the served OpenAPI document, as a contract-testing tool
 * (Portman's fuzzing of a Postman collection) generates one: for an operation, the requests its
 * document's request schema implies (its examples; each required field removed, each field of the
 * wrong type, too long or too short, an unknown field, too few and too many items; the same for the
 * fields of an array's items), each with what the document says the answer must be: a request the request schema
 * accepts must succeed, one it refuses must be a 400. The caller sends them with the e2e client,
 * which checks every answer's status and body against the document (support/api.ts).
 */
type JsonSchema = Record<string, unknown>;

export type ContractCase = {
  name: string;
  body: unknown;
  /** Whether the document's request schema accepts the body: then the answer must be a success, else a 400. */
  accepted: boolean;
  /** For a case changing one item: its index, and whether the item schema refuses it (its result must say so). */
  item?: { index: number; refused: boolean };
};

type Operation = { requestBody?: { content: { 'application/json': { schema: JsonSchema; examples?: object } } } };

const BASE = 'https://openapi.local/openapi.json';

/** Values of each JSON type, for "the wrong type": the first the schema does not allow. */
const SAMPLES: [string[], unknown][] = [
  [['integer', 'number'], 42],
  [['string'], 'text'],
  [['boolean'], true],
  [['array'], []],
  [['object'], {}],
];

export function contractSuite(document: OpenApiDocument, method: string, path: string) {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv);
  ajv.addVocabulary(['components']);
  ajv.addSchema({ $id: BASE, components: document.components });
  const resolve = (schema: JsonSchema): JsonSchema =>
    typeof schema.$ref === 'string' ? resolve(ajv.getSchema(`${BASE}${schema.$ref}`)!.schema as JsonSchema) : schema;
  const validatorOf = (schema: JsonSchema): ValidateFunction =>
    typeof schema.$ref === 'string' ? ajv.getSchema(`${BASE}${schema.$ref}`)! : ajv.compile(schema);

  const operation = (document.paths[path] as unknown as Record<string, Operation>)[method.toLowerCase()];
  const content = operation.requestBody!.content['application/json'];
  const bodySchema = content.schema;
  const acceptsBody = validatorOf(bodySchema);
  const examples = Object.values(content.examples ?? {}).map((example) => (example as { value: unknown }).value);
  const example = examples[0] as Record<string, unknown>;

  /** The types a schema allows, through its references and branches; empty when it allows any value. */
  const typesOf = (schema: JsonSchema): string[] => {
    const resolved = resolve(schema);
    const own = resolved.type === undefined ? [] : [resolved.type].flat().map(String);
    const branches = [...((resolved.anyOf as JsonSchema[]) ?? []), ...((resolved.oneOf as JsonSchema[]) ?? [])];
    const theirs = branches.map(typesOf);
    if (theirs.some((types) => types.length === 0) && resolved.anyOf) return [];
    return [...own, ...theirs.flat()];
  };
  const wrongTypeFor = (schema: JsonSchema): unknown => {
    const allowed = typesOf(schema);
    if (allowed.length === 0) return undefined;
    return SAMPLES.find(([types]) => !types.some((type) => allowed.includes(type)))?.[1];
  };

  /** The string schema a field may be (itself or a branch), for crossing its length limits. */
  const stringSchemaOf = (schema: JsonSchema): JsonSchema | undefined => {
    const resolved = resolve(schema);
    if (resolved.type === 'string') return resolved;
    return [...((resolved.anyOf as JsonSchema[]) ?? []), ...((resolved.oneOf as JsonSchema[]) ?? [])]
      .map(stringSchemaOf)
      .find(Boolean);
  };

  /** The fuzzed variants of an object value under its object schema: each required field removed, each field mistyped or of a length
   * out of its limits, an unknown field. */
  function objectVariants(schema: JsonSchema, value: Record<string, unknown>) {
    const variants: { name: string; value: unknown }[] = [];
    for (const field of (schema.required as string[]) ?? []) {
      const { [field]: _removed, ...rest } = value;
      variants.push({ name: `without ${field}`, value: rest });
    }
    for (const [field, fieldSchema] of Object.entries((schema.properties as Record<string, JsonSchema>) ?? {})) {
      const wrong = wrongTypeFor(fieldSchema);
      if (wrong !== undefined)
        variants.push({ name: `${field} of the wrong type`, value: { ...value, [field]: wrong } });
      const text = stringSchemaOf(fieldSchema);
      if (typeof text?.maxLength === 'number')
        variants.push({ name: `${field} too long`, value: { ...value, [field]: 'x'.repeat(text.maxLength + 1) } });
      if (typeof text?.minLength === 'number' && text.minLength > 0)
        variants.push({ name: `${field} too short`, value: { ...value, [field]: 'x'.repeat(text.minLength - 1) } });
    }
    if (schema.additionalProperties === false)
      variants.push({ name: 'an unknown field', value: { ...value, fuzzUnknownField: 1 } });
    return variants;
  }

  /** The object schemas an array's items may be (its `$ref`s and their `oneOf` branches), for fuzzing one item. */
  const itemShapes = (items: JsonSchema): JsonSchema[] => {
    const resolved = resolve(items);
    const branches = (resolved.anyOf ?? resolved.oneOf) as JsonSchema[] | undefined;
    if (branches) return branches.flatMap(itemShapes);
    return resolved.type === 'object' && resolved.properties ? [resolved] : [];
  };

  function cases(): ContractCase[] {
    const out: ContractCase[] = examples.map((value, i) => ({ name: `example ${i}`, body: value, accepted: true }));
    const add = (name: string, body: unknown, item?: ContractCase['item']) =>
      out.push({ name, body, accepted: acceptsBody(body) as boolean, ...(item && { item }) });
    const top = resolve(bodySchema);
    add('a body of the wrong type', wrongTypeFor(top));
    for (const variant of objectVariants(top, example)) add(`a body ${variant.name}`, variant.value);
    for (const [field, fieldSchema] of Object.entries((top.properties as Record<string, JsonSchema>) ?? {})) {
      const array = resolve(fieldSchema);
      const items = example[field];
      if (array.type !== 'array' || !Array.isArray(items)) continue;
      if (typeof array.minItems === 'number' && array.minItems > 0)
        add(`${field} with no items`, { ...example, [field]: [] });
      if (typeof array.maxItems === 'number')
        add(`${field} with ${array.maxItems + 1} items`, {
          ...example,
          [field]: Array.from({ length: array.maxItems + 1 }, (_, i) => items[i % items.length]),
        });
      for (const shape of itemShapes(array.items as JsonSchema)) {
        const acceptsItem = ajv.compile(shape);
        const at = items.findIndex((item) => acceptsItem(item));
        if (at < 0) continue;
        for (const variant of objectVariants(shape, items[at] as Record<string, unknown>)) {
          const changed = items.map((item, i) => (i === at ? variant.value : item));
          add(
            `${field}[${at}] ${variant.name}`,
            { ...example, [field]: changed },
            {
              index: at,
              refused: !acceptsItem(variant.value),
            },
          );
        }
      }
    }
    return out;
  }

  return cases();
}
