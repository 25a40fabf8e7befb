import { readFileSync } from 'node:fs';
import { apiHandler } from '../http/api-handler';
import { REFERENCE_PAGE_CSP, referencePagePath } from './openapi/reference-page-file';
import { getApiReferenceRoute } from './operations/get-api-reference';

/**
 * The API reference page, built at build time from the OpenAPI document (./openapi/reference-page.ts)
 * and read once, on the first request. The CSP forbids the page any request at all, so a renderer
 * update that starts loading from a CDN breaks visibly instead of leaking readers' visits.
 */
let page: string | undefined;

export const handler = apiHandler(getApiReferenceRoute, async () => {
  page ??= readFileSync(referencePagePath(), 'utf8');
  return {
    statusCode: 200,
    body: page,
    contentType: 'text/html; charset=utf-8',
    headers: {
      'Content-Security-Policy': REFERENCE_PAGE_CSP,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      // The page changes only with a deployment; five minutes spares readers 1.3 MB per visit.
      'Cache-Control': 'public, max-age=300',
    },
  };
});
