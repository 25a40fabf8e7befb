import { buildOpenApiDocument } from '../core/openapi';
import { apiHandler } from '../http/api-handler';
import { getOpenApiRoute } from './operations/get-openapi';

/** Built once per process: the document depends only on the code. */
const document = buildOpenApiDocument();

export const handler = apiHandler(getOpenApiRoute, async () => ({ statusCode: 200, body: document }));
