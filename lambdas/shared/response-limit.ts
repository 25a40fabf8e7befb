/**
 * Lambda's limit on a synchronous invocation's response: the whole proxy result as JSON. Over it
 * the invocation fails and API Gateway answers 502, so an organization would lose a list to its
 * own data. No imports: the local runtime reads the limit too.
 */
export const LAMBDA_RESPONSE_LIMIT_BYTES = 6 * 1024 * 1024;

/**
 * What a list page's items may take of that limit. The rest (1 MiB) holds the envelope, the
 * headers and what a list adds to its rows after paging (a contact's consent fields: tens of
 * bytes each).
 */
export const PAGE_ITEMS_BUDGET_BYTES = 5 * 1024 * 1024;

/**
 * The bytes a value adds to the invocation response: its JSON sits inside the proxy result's
 * `body` string, which is JSON-escaped once more (a control character costs 7 bytes there).
 */
export const responseBytesOf = (value: unknown): number =>
  Buffer.byteLength(JSON.stringify(JSON.stringify(value)), 'utf8');
