import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REFERENCE_PAGE_FILE } from './reference-page-file';

/**
 * The API reference page GET /docs serves: the committed OpenAPI document (./openapi.json)
 * rendered by Redoc, in one self-contained HTML file built at build time (the CDK bundles it
 * beside the function, the local runtime writes it at start). Redoc's standalone bundle is
 * inlined, so the page loads nothing from any host, its own included: the document is in the
 * page, fonts are the system's, and the one remote image the bundle names (the "API docs by
 * Redocly" logo on Redoc's CDN) is replaced by an inline one. The Content-Security-Policy the
 * handler sends (REFERENCE_PAGE_CSP) enforces it in the browser.
 */
/** Pinned with the redoc version in package.json: a bundle that no longer names it fails the build. */
const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const INLINE_LOGO = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" ' +
    'fill="#c42d30"/></svg>',
)}`;

const FONTS = '-apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';
const MONO = 'ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace';

/** Redoc's options (its README): system fonts, success bodies open, required fields first. */
const REDOC_OPTIONS = {
  expandResponses: '200,201',
  jsonSampleExpandLevel: 3,
  requiredPropsFirst: true,
  pathInMiddlePanel: true,
  theme: { typography: { fontFamily: FONTS, headings: { fontFamily: FONTS }, code: { fontFamily: MONO } } },
};

/** A JSON value as the text of an inline script: `</script>` and friends cannot end the element early. */
const scriptJson = (value: unknown): string =>
  JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

/** The page, from the document's JSON text and Redoc's standalone bundle. */
export function renderReferencePage(openApiJson: string, redocBundle: string): string {
  if (!redocBundle.includes(REDOC_CDN_LOGO)) {
    throw new Error(
      `Redoc's bundle no longer names ${REDOC_CDN_LOGO}: check what it loads from other hosts, then update ` +
        `reference-page.ts`,
    );
  }
  const renderer = redocBundle
    .split(REDOC_CDN_LOGO)
    .join(INLINE_LOGO)
    .replace(/<\/script/gi, '<\\/script');
  const document = JSON.parse(openApiJson) as { info: { title: string } };
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(document.info.title)}: API reference</title>`,
    '<style>body { margin: 0; padding: 0; }</style>',
    '</head>',
    '<body>',
    '<div id="redoc"></div>',
    `<script>${renderer}</script>`,
    `<script>Redoc.init(${scriptJson(document)}, ${scriptJson(REDOC_OPTIONS)}, ` +
      `document.getElementById('redoc'));</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

const escapeHtml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * Builds the page and writes it as `dir`/REFERENCE_PAGE_FILE; returns the file's path. Written
 * aside and renamed, so a concurrent synth never copies half a page.
 */
export function writeReferencePage(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, REFERENCE_PAGE_FILE);
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, buildReferencePage());
  renameSync(temporary, file);
  return file;
}

/** Builds the page from the committed document and the installed renderer (a devDependency: build time only). */
export function buildReferencePage(): string {
  const openApiJson = readFileSync(join(__dirname, 'openapi.json'), 'utf8');
  const redocBundle = readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8');
  return renderReferencePage(openApiJson, redocBundle);
}
