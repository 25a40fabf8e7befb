import type { OpenApiValidator } from '../openapi-validator';

/**
 * The smoke run's HTTP client: real requests to the deployment, each answer held to the contract
 * (JSON or nothing, the rate-limit headers on answers to an identified key, and, through
 * mustBeStatus and mustBeError, the OpenAPI document's schema for the operation and status).
 */
export class SmokeFailure extends Error {}

/** Throws a SmokeFailure with `message` unless `condition` holds. */
export function must(condition: unknown, message: string): asserts condition {
  if (!condition) throw new SmokeFailure(message);
}

export type Reply = {
  status: number;
  headers: Headers;
  /** The parsed JSON body; undefined when empty. `any`: each check reads what it asked for. */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  /**
   * Why the answer breaks the OpenAPI document or lacks the rate-limit headers, if it does. Reported by mustBeStatus
   * and
   * mustBeError after the status, so that an unexpected status reads as such.
   */
  contractProblem: string | undefined;
};

export type RequestOptions = {
  /** Default: the run's key. null: no Authorization header; a string: that header value's key. */
  key?: string | null;
  json?: unknown;
  /**
   * Default true for requests with a key the deployment accepts: a route handler answers them, so
   * the RateLimit-* headers must be there. False where API Gateway itself answers (unknown path, 405).
   */
  rateLimitHeaders?: boolean;
};

export type SmokeClient = {
  request: (method: string, path: string, options?: RequestOptions) => Promise<Reply>;
  /** Set once the served OpenAPI document is read; until then answers are checked for JSON only. */
  useValidator: (validator: OpenApiValidator) => void;
};

const RATE_LIMIT_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'] as const;

/** What is wrong with the RateLimit-* headers, if anything. */
function rateLimitHeadersProblem(where: string, headers: Headers): string | undefined {
  for (const name of RATE_LIMIT_HEADERS) {
    const value = headers.get(name);
    if (value === null || !/^\d+$/.test(value))
      return `${where}: header ${name} is ${value === null ? 'missing' : `"${value}", not a whole number`}`;
  }
  if (Number(headers.get('ratelimit-remaining')) > Number(headers.get('ratelimit-limit')))
    return `${where}: RateLimit-Remaining exceeds RateLimit-Limit`;
  return undefined;
}

export function createSmokeClient(baseUrl: string, key: string, timeoutMs: number): SmokeClient {
  let validator: OpenApiValidator | undefined;
  return {
    useValidator: (v) => (validator = v),
    async request(method, path, options = {}) {
      const sentKey = options.key === undefined ? key : options.key;
      const where = `${method} ${path}`;
      let response: Response;
      try {
        response = await fetch(`${baseUrl}${path}`, {
          method,
          redirect: 'manual',
          signal: AbortSignal.timeout(timeoutMs),
          headers: {
            ...(sentKey !== null && { Authorization: `Bearer ${sentKey}` }),
            ...(options.json !== undefined && { 'Content-Type': 'application/json' }),
          },
          body: options.json === undefined ? undefined : JSON.stringify(options.json),
        });
      } catch (err) {
        const { cause, message } = err as { cause?: { code?: string; message?: string }; message: string };
        const reason = cause?.code ?? cause?.message ?? message;
        throw new SmokeFailure(`${where}: no answer (${reason})`);
      }
      const text = await response.text();
      const type = response.headers.get('content-type') ?? '';
      must(
        text === '' || type.startsWith('application/json'),
        `${where} -> ${response.status}: a body that is not JSON (${type || 'no content type'}): ${text.slice(0, 120)}`,
      );
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        throw new SmokeFailure(`${where} -> ${response.status}: the body is not valid JSON: ${text.slice(0, 120)}`);
      }
      must(
        response.status !== 429,
        `${where}: 429 rate limited (Retry-After ${response.headers.get('retry-after')} s): run the smoke again later`,
      );
      let contractProblem: string | undefined;
      try {
        validator?.check(method, path, response.status, body);
      } catch (err) {
        contractProblem = (err as Error).message;
      }
      // API Gateway's own refusals (401; 403 api_access_disabled or insufficient_scope from the authorizer's
      // policy) come before any handler counts the key: no budget to report.
      const code = (body as { code?: unknown } | undefined)?.code;
      const identified = response.status !== 401 && code !== 'api_access_disabled' && code !== 'insufficient_scope';
      if (sentKey !== null && identified && (options.rateLimitHeaders ?? true)) {
        contractProblem ??= rateLimitHeadersProblem(`${where} -> ${response.status}`, response.headers);
      }
      return { status: response.status, headers: response.headers, body, contractProblem };
    },
  };
}

/** An Error answer as the contract words it: this status, `{error, code}`, and the named field in `error`. */
export function mustBeError(
  where: string,
  reply: Reply,
  status: number,
  expected: { code?: string; names?: string } = {},
): void {
  must(
    reply.status === status,
    `${where}: expected ${status}, got ${reply.status} ${JSON.stringify(reply.body)?.slice(0, 200)}`,
  );
  must(reply.contractProblem === undefined, reply.contractProblem ?? '');
  const body = reply.body as { error?: unknown; code?: unknown } | undefined;
  must(
    typeof body?.error === 'string' && body.error !== '',
    `${where}: the error body has no "error" string: ${JSON.stringify(body)}`,
  );
  must(typeof body.code === 'string', `${where}: the error body has no "code": ${JSON.stringify(body)}`);
  if (expected.code) must(body.code === expected.code, `${where}: expected code ${expected.code}, got ${body.code}`);
  if (expected.names)
    must(body.error.includes(expected.names), `${where}: the error does not name ${expected.names}: "${body.error}"`);
}

/** A success answer: this status, or a failure that shows what came instead. */
export function mustBeStatus(where: string, reply: Reply, status: number): void {
  must(
    reply.status === status,
    `${where}: expected ${status}, got ${reply.status} ${JSON.stringify(reply.body)?.slice(0, 200) ?? ''}`,
  );
  must(reply.contractProblem === undefined, reply.contractProblem ?? '');
}
