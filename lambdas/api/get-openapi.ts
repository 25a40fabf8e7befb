import { buildOpenApiDocument } from '../core/openapi';
import { apiHandler } from '../http/api-handler';
import { routes } from './routes';

/** Built once per process: the document depends only on the code. */
const document = buildOpenApiDocument();

export const handler = apiHandler(routes.getOpenApi, async () => ({ statusCode: 200, body: document }));
