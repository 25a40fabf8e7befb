import { join } from 'node:path';

/**
 * Where the reference page (./reference-page.ts builds it) is found at run time, and the
 * Content-Security-Policy it is served with. Apart from the builder so that the function serving
 * the page bundles neither the builder nor the renderer's path.
 */
export const REFERENCE_PAGE_FILE = 'reference-page.html';

/**
 * The page's file: `REFERENCE_PAGE_PATH` when set (the local runtime writes the page into its
 * state directory), else beside the bundle in Lambda (the CDK copies it there).
 */
export const referencePagePath = (): string =>
  process.env.REFERENCE_PAGE_PATH ?? join(process.env.LAMBDA_TASK_ROOT ?? '.', REFERENCE_PAGE_FILE);

/** Nothing but the page itself: inline script and styles, Redoc's search worker (a blob), inline images. */
export const REFERENCE_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'unsafe-inline'",
  "style-src 'unsafe-inline'",
  'img-src data:',
  'worker-src blob:',
  "connect-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
