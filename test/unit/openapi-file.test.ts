import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { handler } from '../../lambdas/handlers/api/get-openapi';
import { buildOpenApiDocument, openApiJson } from '../../lambdas/handlers/api/openapi/generator';
import { apiEvent, lambdaContext } from '../support/api-event';

/**
 * GET /openapi.json serves a document generated at build time (`npm run openapi`, bin/openapi.ts):
 * these tests fail when a route or a schema changed and the generated files were not rewritten.
 */
const JSON_FILE = join(__dirname, '..', '..', 'lambdas', 'handlers', 'api', 'openapi', 'openapi.json');
const REGENERATE =
  'Run `npm run openapi` and commit lambdas/handlers/api/openapi/openapi.json and ' +
  'lambdas/handlers/api/openapi/openapi-document.ts with your change.';

/** The first line where two texts differ, so the failure shows what changed. */
function firstDifference(committed: string, generated: string): string {
  const a = committed.split('\n');
  const b = generated.split('\n');
  const line = a.findIndex((text, index) => text !== b[index]);
  const at = line === -1 ? a.length : line;
  return `First difference at line ${at + 1}:\n  committed: ${a[at] ?? '(end of file)'}\n  generated: ${b[at] ?? '(end of file)'}`;
}

describe('the generated OpenAPI document', () => {
  it('is committed in lambdas/handlers/api/openapi/openapi.json as the generator builds it from the routes and schemas now', () => {
    // Arrange
    const generated = openApiJson();

    // Act
    const committed = readFileSync(JSON_FILE, 'utf8');

    // Assess
    if (committed !== generated) {
      throw new Error(
        `lambdas/handlers/api/openapi/openapi.json is not what lambdas/handlers/api/openapi/generator.ts generates ` +
          `now. ${REGENERATE}\n${firstDifference(committed, generated)}`,
      );
    }
  });

  it('is what GET /openapi.json answers: 200, JSON, not cached, the body byte for byte as the generator builds it', async () => {
    // Arrange: servers names where the request came in, here a custom domain
    const expectedBody = JSON.stringify({
      ...buildOpenApiDocument(),
      servers: [{ url: 'https://api.example.com/api/v1' }],
    });

    // Act
    const result = await handler(
      apiEvent({ path: '/api/v1/openapi.json', principal: null, headers: { Host: 'api.example.com' } }),
      lambdaContext,
    );

    // Assess
    expect({ statusCode: result.statusCode, headers: result.headers }).toEqual({
      statusCode: 200,
      headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' },
    });
    if (result.body !== expectedBody) {
      throw new Error(
        `The document GET /openapi.json serves (lambdas/handlers/api/openapi/openapi-document.ts) is not what ` +
          `lambdas/handlers/api/openapi/generator.ts generates now. ${REGENERATE}`,
      );
    }
  });
});
