import { brotliDecompressSync } from 'node:zlib';
import { apiHandler } from '../http/api-handler';
import { OPENAPI_JSON_BROTLI_BASE64 } from './openapi/openapi-document';
import { getOpenApiRoute } from './operations/get-openapi';

/**
 * The document ./openapi/generator.ts generates from the route manifest and the zod schemas,
 * written at build time by `npm run openapi` (committed as ./openapi/openapi.json, and compressed
 * in ./openapi/openapi-document.ts): this function loads neither zod nor a schema, and its init
 * only decompresses and parses the document (~1 ms). test/unit/openapi-file.test.ts keeps both
 * files in step with the code.
 */
const document = JSON.parse(
  brotliDecompressSync(Buffer.from(OPENAPI_JSON_BROTLI_BASE64, 'base64')).toString('utf8'),
) as Record<string, unknown>;

/**
 * `servers` names the URL this request came in on (execute-api stage, custom domain or the local
 * runtime), so a client generated from the served document calls the API where it found it.
 */
export const handler = apiHandler(getOpenApiRoute, async ({ baseUrl }) => ({
  statusCode: 200,
  body: { ...document, servers: [{ url: baseUrl }] },
}));
