/**
 * The request and response examples of docs/api.md are real exchanges with the local runtime,
 * captured by the typed client's end-to-end test (test/e2e/client.test.ts) and written between
 * markers:
 *
 *   <!-- example: <operationId> <status> -->
 *   ...generated: a curl command and the JSON answer...
 *   <!-- /example -->
 *
 * `UPDATE_API_EXAMPLES=1` on that test rewrites them (`npm run docs:examples`); the unit test
 * test/unit/api-docs.test.ts checks every example against the OpenAPI document.
 */
export type Exchange = {
  operationId: string;
  method: string;
  /** Relative to the base URL, query included, as sent. */
  path: string;
  /** How the example shows the key it was sent with (`$KEY`), or undefined for no key. */
  keyLabel?: string;
  idempotencyKey?: string;
  requestBody?: string;
  status: number;
  responseBody?: unknown;
};

export type DocumentedExample = { operationId: string; status: number; body: unknown };

const MARKER = /<!-- example: (\w+) (\d{3}) -->\n([\s\S]*?)<!-- \/example -->/g;

function curl(exchange: Exchange): string {
  const parts = [`curl -s${exchange.method === 'GET' ? '' : ` -X ${exchange.method}`} "$BASE${exchange.path}"`];
  if (exchange.keyLabel) parts.push(`-H "Authorization: Bearer ${exchange.keyLabel}"`);
  if (exchange.requestBody) parts.push(`-H 'Content-Type: application/json'`);
  if (exchange.idempotencyKey) parts.push(`-H 'Idempotency-Key: ${exchange.idempotencyKey}'`);
  if (exchange.requestBody) parts.push(`-d '${exchange.requestBody}'`);
  return parts.join(' \\\n  ');
}

export function renderExample(exchange: Exchange): string {
  const answer =
    exchange.responseBody === undefined
      ? `Answer: \`${exchange.status}\`, no body.\n`
      : `Answer: \`${exchange.status}\`\n\n\`\`\`json\n${JSON.stringify(exchange.responseBody, null, 2)}\n\`\`\`\n`;
  return `\`\`\`sh\n${curl(exchange)}\n\`\`\`\n\n${answer}`;
}

/** The page with every marked example replaced by the first recorded exchange of its operation and status. */
export function updateExamples(markdown: string, exchanges: Exchange[]): string {
  const missing: string[] = [];
  const updated = markdown.replace(MARKER, (whole, operationId: string, status: string) => {
    const exchange = exchanges.find((e) => e.operationId === operationId && e.status === Number(status));
    if (!exchange) {
      missing.push(`${operationId} ${status}`);
      return whole;
    }
    return `<!-- example: ${operationId} ${status} -->\n${renderExample(exchange)}<!-- /example -->`;
  });
  if (missing.length > 0) throw new Error(`No exchange recorded for the examples ${missing.join(', ')}`);
  return updated;
}

/** Every marked example with the JSON body of its answer (undefined when it has none). */
export function documentedExamples(markdown: string): DocumentedExample[] {
  return [...markdown.matchAll(MARKER)].map(([, operationId, status, block]) => {
    const json = /```json\n([\s\S]*?)\n```/.exec(block)?.[1];
    return { operationId, status: Number(status), body: json === undefined ? undefined : JSON.parse(json) };
  });
}

/** What a receiver recorded: lowercased header names, the raw body. */
export type ReceivedDelivery = { path: string; headers: Record<string, string | string[] | undefined>; body: string };

/** The headers a delivery example shows, in the sender's order and spelling. */
const DELIVERY_HEADERS = [
  'Content-Type',
  'User-Agent',
  ...['Event', 'Timestamp', 'Signature', 'Delivery'].flatMap((field) => [`X-Service-${field}`]),
  ...['Event', 'Timestamp', 'Signature', 'Delivery'].flatMap((field) => [`X-Legacy-${field}`]),
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
];

const DELIVERY_MARKER = /<!-- delivery example -->\n[\s\S]*?<!-- \/delivery example -->/;

/** The page with its delivery example replaced by this delivery, as the endpoint received it. */
export function updateDeliveryExample(markdown: string, delivery: ReceivedDelivery): string {
  const headers = DELIVERY_HEADERS.map((name) => `${name}: ${delivery.headers[name.toLowerCase()]}`).join('\n');
  const block = `<!-- delivery example -->\n\`\`\`http\nPOST ${delivery.path} HTTP/1.1\n${headers}\n\n${delivery.body}\n\`\`\`\n<!-- /delivery example -->`;
  if (!DELIVERY_MARKER.test(markdown)) throw new Error('The page has no delivery example markers');
  return markdown.replace(DELIVERY_MARKER, () => block);
}

const EVENT_MARKER = /<!-- event example: ([\w.]+) -->\n([\s\S]*?)<!-- \/event example -->/g;

/**
 * The page with each `<!-- event example: <type> -->` replaced by the body of a delivered event of that type,
 * pretty-printed.
 */
export function updateEventExamples(markdown: string, bodies: string[]): string {
  const missing: string[] = [];
  const updated = markdown.replace(EVENT_MARKER, (whole, type: string) => {
    const body = bodies.find((candidate) => (JSON.parse(candidate) as { type?: string }).type === type);
    if (!body) {
      missing.push(type);
      return whole;
    }
    return `<!-- event example: ${type} -->\n\`\`\`json\n${JSON.stringify(JSON.parse(body), null, 2)}\n\`\`\`\n<!-- /event example -->`;
  });
  if (missing.length > 0) throw new Error(`No delivery recorded for the event examples ${missing.join(', ')}`);
  return updated;
}

/** Every event example of the page: its type and body. */
export function documentedEventExamples(markdown: string): { type: string; body: unknown }[] {
  return [...markdown.matchAll(EVENT_MARKER)].map(([, type, block]) => ({
    type,
    body: JSON.parse(/```json\n([\s\S]*?)\n```/.exec(block)![1]),
  }));
}
