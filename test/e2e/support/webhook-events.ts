import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { OpenApiDocument } from '../../../local/openapi-validator';

/**
 * Checks a delivered event body against the `webhooks` section of the OpenAPI document the
 * runtime serves, as an integrator generating types from it would rely on.
 */
type WebhooksSection = Record<
  string,
  { post: { requestBody: { content: { 'application/json': { schema: { $ref: string } } } } } }
>;

export async function webhookEventChecker(baseUrl: string): Promise<(type: string, body: unknown) => void> {
  const document = (await (await fetch(`${baseUrl}/openapi.json`)).json()) as OpenApiDocument & {
    webhooks: WebhooksSection;
  };
  const base = 'https://openapi.local/openapi.json';
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv);
  ajv.addVocabulary(['components']);
  ajv.addSchema({ $id: base, components: document.components });
  return (type, body) => {
    const entry = document.webhooks[type];
    if (!entry) throw new Error(`The OpenAPI document describes no webhook ${type}`);
    const validate = ajv.getSchema(`${base}${entry.post.requestBody.content['application/json'].schema.$ref}`)!;
    if (!validate(body))
      throw new Error(`${type}: body does not match the OpenAPI document: ${ajv.errorsText(validate.errors)}`);
  };
}
