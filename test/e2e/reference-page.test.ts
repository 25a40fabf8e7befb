import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { useLocalRuntime } from './support/e2e';

/**
 * GET /docs in a real browser: Debian's Chromium, driven by playwright-core (which downloads no
 * browser of its own). The page must render every operation and webhook of the document the
 * runtime serves, ask no other host for anything, and log no error.
 */
const CHROMIUM_CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(
  Boolean,
) as string[];

function chromiumPath(): string {
  const found = CHROMIUM_CANDIDATES.find((path) => existsSync(path));
  if (!found) {
    throw new Error(
      `No Chromium found (looked at ${CHROMIUM_CANDIDATES.join(', ')}). The reference page test needs Debian's ` +
        `Chromium: ` +
        'run `sudo apt-get install -y chromium`, or set CHROMIUM_PATH to a Chromium or Chrome binary.',
    );
  }
  return found;
}

/** Headless, quiet, and without the browser's own background traffic (updates, sync, safe browsing). */
const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Redoc parses 1.2 MB of script and lays out every operation: seconds on an idle core, far more on a busy CI machine.
 */
const RENDER_TIMEOUT_MS = 120_000;

type Document = {
  paths: Record<string, Record<string, { operationId: string; summary: string }>>;
  webhooks: Record<string, { post: { operationId: string; summary: string } }>;
};

const e2e = useLocalRuntime();
let browser: Browser;

beforeAll(async () => {
  browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

describe('GET /docs, the API reference page', () => {
  it('is served without an API key as HTML that forbids the browser every other host', async () => {
    // Act
    const response = await fetch(`${e2e.runtime.baseUrl}/docs`);
    const html = await response.text();

    // Assess
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=["']?https?:/i);
  });

  it(
    'renders every operation and webhook in Chromium, requests nothing off the host and logs no error',
    async () => {
      // Arrange
      const document = (await (await fetch(`${e2e.runtime.baseUrl}/openapi.json`)).json()) as Document;
      const operations = [
        ...Object.values(document.paths).flatMap((item) => Object.values(item)),
        ...Object.values(document.webhooks).map((item) => item.post),
      ];
      const page = await browser.newPage();
      const origin = new URL(e2e.runtime.baseUrl).origin;
      const offHost: string[] = [];
      const errors: string[] = [];
      page.on('request', (request) => {
        const url = request.url();
        if (!url.startsWith(`${origin}/`) && !url.startsWith('data:') && !url.startsWith('blob:')) offHost.push(url);
      });
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      page.on('pageerror', (error) => errors.push(error.message));

      // Act
      await page.goto(`${e2e.runtime.baseUrl}/docs`, { waitUntil: 'load' });
      await page.locator('[data-section-id]').first().waitFor({ timeout: RENDER_TIMEOUT_MS });
      const sections = await page
        .locator('[data-section-id]')
        .evaluateAll((elements) => elements.map((element) => element.getAttribute('data-section-id')));
      const headings = await page.locator('h2').allInnerTexts();
      await page.close();

      // Assess
      expect(operations.length).toBeGreaterThan(15);
      const missing = operations.filter(
        (operation) =>
          !sections.some((id) => id?.endsWith(`/${operation.operationId}`)) ||
          !headings.some((heading) => heading.includes(operation.summary)),
      );
      expect(missing.map((operation) => operation.operationId)).toEqual([]);
      expect(offHost).toEqual([]);
      expect(errors).toEqual([]);
    },
    RENDER_TIMEOUT_MS + 30_000,
  );
});
