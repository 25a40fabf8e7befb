import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildReferencePage,
  renderReferencePage,
  writeReferencePage,
} from '../../lambdas/handlers/api/openapi/reference-page';
import { apiEvent, lambdaContext } from '../support/api-event';

/**
 * The reference page's build and serving without a browser (test/e2e/reference-page.test.ts opens
 * it in Chromium): what the page holds, and what GET /docs answers.
 */
const LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';

describe('the reference page build', () => {
  it('inlines the renderer and the document, replaces the one CDN image and cannot be closed early by the document', () => {
    // Arrange
    const document = JSON.stringify({ openapi: '3.1.0', info: { title: 'T </script><b>', version: '1' }, paths: {} });
    const renderer = `var logo = "${LOGO}"; window.Redoc = { init() {} };`;

    // Act
    const page = renderReferencePage(document, renderer);

    // Assess
    expect(page).not.toContain(LOGO);
    expect(page).toContain('data:image/svg+xml,');
    expect(page).toContain('T \\u003c/script>\\u003cb>');
    expect(page).toContain('<title>T &lt;/script&gt;&lt;b&gt;: API reference</title>');
    expect(page.match(/<\/script>/g)).toHaveLength(2);
  });

  it('refuses a renderer that no longer names the image it replaces, so an update is reviewed', () => {
    // Act
    const render = () => renderReferencePage('{"info":{"title":"T"}}', 'window.Redoc = {};');

    // Assess
    expect(render).toThrow(/no longer names/);
  });

  it('builds from the committed document with the installed Redoc, loading nothing by URL', () => {
    // Act
    const page = buildReferencePage();

    // Assess
    expect(page).toContain('"operationId":"sendMessage"');
    expect(page).not.toMatch(/<(script|link|img)[^>]+(src|href)=["']?https?:/i);
    expect(page).not.toContain(LOGO);
  });
});

describe('GET /docs', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'cct-reference-'));
    process.env.REFERENCE_PAGE_PATH = writeReferencePage(dir);
  });

  afterAll(() => {
    delete process.env.REFERENCE_PAGE_PATH;
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers the built page as HTML, without a key, under a policy that allows no other host', async () => {
    // Arrange
    const { handler } = await import('../../lambdas/handlers/api/get-api-reference');

    // Act
    const result = await handler(apiEvent({ path: '/api/v1/docs', principal: null }), lambdaContext);

    // Assess
    expect(result.statusCode).toBe(200);
    expect(result.headers).toMatchObject({
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'public, max-age=300',
      'X-Content-Type-Options': 'nosniff',
    });
    expect(String(result.headers!['Content-Security-Policy'])).toMatch(
      /^default-src 'none'; script-src 'unsafe-inline';/,
    );
    expect(result.body.startsWith('<!doctype html>')).toBe(true);
    expect(result.body).toContain('Redoc.init(');
  });
});
