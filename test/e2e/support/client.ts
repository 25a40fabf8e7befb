import { createClient, type ApiClient } from '../../../clients/typescript/src';
import { createOpenApiValidator, type OpenApiDocument, type OpenApiValidator } from '../../../local/openapi-validator';
import type { Exchange } from '../../support/api-examples';

/**
 * The typed client package (clients/typescript) against a running local runtime. A middleware
 * checks every response against the OpenAPI document the runtime serves, so the types the client
 * was generated from and the behaviour of the service cannot drift apart unnoticed, and records
 * each exchange (request and response as sent) for the examples of docs/api.md.
 */
export type RecordingClient = { client: ApiClient; exchanges: Exchange[] };

/**
 * Node's fetch reuses idle keep-alive sockets; the runtime's server (Node's default) closes them
 * after 5 s, and when this test process is starved of CPU (a busy machine) it can pick a socket the
 * server has just closed ("other side closed"). A read is then sent again once, as HTTP allows for
 * an idempotent request; a write never is.
 */
async function fetchRetryingStaleSockets(request: Request): Promise<Response> {
  const retry = request.method === 'GET' ? request.clone() : undefined;
  try {
    return await fetch(request);
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    if (!retry || cause?.code !== 'UND_ERR_SOCKET') throw error;
    return fetch(retry);
  }
}

type Operations = Record<string, Record<string, { operationId?: string }>>;

/**
 * A runtime's document and its validator, made once for every client of that runtime (Ajv compiles the document's
 * schemas in most of a second of CPU; the validator keeps no state of a client's).
 */
const documents = new Map<string, Promise<{ document: OpenApiDocument; validator: OpenApiValidator }>>();
function documentOf(baseUrl: string) {
  if (!documents.has(baseUrl))
    documents.set(
      baseUrl,
      fetch(`${baseUrl}/openapi.json`)
        .then((response) => response.json() as Promise<OpenApiDocument>)
        .then((document) => ({ document, validator: createOpenApiValidator(document) })),
    );
  return documents.get(baseUrl)!;
}

/** `keyLabel` is how docs/api.md shows the key (`$KEY`). */
export async function connectClient(baseUrl: string, apiKey: string, keyLabel = '$KEY'): Promise<RecordingClient> {
  const { document, validator } = await documentOf(baseUrl);
  const paths = document.paths as unknown as Operations;
  const prefix = new URL(baseUrl).pathname;
  const exchanges: Exchange[] = [];
  const requestBodies = new Map<string, string>();
  const client = createClient({ baseUrl, apiKey, fetch: fetchRetryingStaleSockets });
  client.use({
    async onRequest({ request, id }) {
      requestBodies.set(id, await request.clone().text());
      return request;
    },
    async onResponse({ request, response, schemaPath, id }) {
      const url = new URL(request.url);
      const path = url.pathname.slice(prefix.length);
      const text = await response.clone().text();
      // The reference page is HTML: its exchange is recorded, its body is not JSON to validate.
      const isJson = response.headers.get('content-type')?.startsWith('application/json') ?? false;
      const body = text === '' || !isJson ? undefined : JSON.parse(text);
      if (isJson || text === '') validator.check(request.method, path, response.status, body);
      exchanges.push({
        operationId:
          paths[schemaPath]?.[request.method.toLowerCase()]?.operationId ?? `${request.method} ${schemaPath}`,
        method: request.method,
        keyLabel: schemaPath === '/openapi.json' ? undefined : keyLabel,
        path: `${path}${url.search}`,
        idempotencyKey: request.headers.get('Idempotency-Key') ?? undefined,
        requestBody: requestBodies.get(id) || undefined,
        status: response.status,
        responseBody: body,
      });
      return response;
    },
  });
  return { client, exchanges };
}
