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
const document: unknown = JSON.parse(brotliDecompressSync(Buffer.from(OPENAPI_JSON_BROTLI_BASE64, 'base64')).toString('utf8'));

export const handler = apiHandler(getOpenApiRoute, async () => ({ statusCode: 200, body: document }));
