import Module from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';

export type ProxyHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

type ResolveFilename = (request: string, ...rest: unknown[]) => string;

/**
 * tsx runs this repository's .ts files as CommonJS (package.json has no "type": "module"), and
 * middy publishes only an `import` export, which `require` cannot resolve. Node 20.19+ can
 * `require` an ES module once it is given the file, so `@middy/<name>` is pointed at its
 * `index.js`: the same mapping jest.config.js makes with `moduleNameMapper`.
 */
export function resolveMiddyForRequire(repoRoot: string): void {
  const loader = Module as unknown as { _resolveFilename: ResolveFilename & { middyMapped?: true } };
  if (loader._resolveFilename.middyMapped) return;
  const original = loader._resolveFilename;
  const mapped: ResolveFilename & { middyMapped?: true } = function (this: unknown, request, ...rest) {
    const middy = /^@middy\/([^/]+)$/.exec(request);
    return original.call(
      this,
      middy ? resolve(repoRoot, 'node_modules', '@middy', middy[1], 'index.js') : request,
      ...rest,
    );
  };
  mapped.middyMapped = true;
  loader._resolveFilename = mapped;
}

/**
 * Imports each route's handler module once, before the first request, so a module that fails to
 * load stops the runtime at start instead of answering 500s. Call only after TABLE_NAME and
 * DYNAMODB_ENDPOINT are set: the shared module reads them at import.
 */
export async function loadHandlers<R extends { operationId: string; handler: string }>(
  routes: readonly R[],
  repoRoot: string,
): Promise<Map<string, ProxyHandler>> {
  resolveMiddyForRequire(repoRoot);
  const handlers = new Map<string, ProxyHandler>();
  for (const route of routes) {
    const module = (await import(pathToFileURL(resolve(repoRoot, route.handler)).href)) as { handler?: unknown };
    if (typeof module.handler !== 'function') throw new Error(`${route.handler} does not export a handler function`);
    handlers.set(route.operationId, module.handler as ProxyHandler);
  }
  return handlers;
}
