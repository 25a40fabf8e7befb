import type { OpenApiValidator } from '../../../local/openapi-validator';

/**
 * fetch against the local runtime. Every response is checked against the served OpenAPI document
 * before a test sees it, so no test can forget to.
 */
export type ApiResult = {
  status: number;
  headers: Headers;
  /** The parsed JSON body; undefined when the body was empty. `any`: each test reads what it asked for. */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
};

export type RequestOptions = {
  /** Sent as `Authorization: Bearer <key>`. */
  key?: string;
  /** Sent as JSON with `Content-Type: application/json`. */
  json?: unknown;
  /** Sent as is (for malformed bodies); combine with `headers` for its content type. */
  rawBody?: string;
  headers?: Record<string, string>;
};

export function createApi(baseUrl: string, validator: OpenApiValidator) {
  async function request(method: string, path: string, options: RequestOptions = {}): Promise<ApiResult> {
    const headers: Record<string, string> = {
      ...(options.key !== undefined && { Authorization: `Bearer ${options.key}` }),
      ...(options.json !== undefined && { 'Content-Type': 'application/json' }),
      ...options.headers,
    };
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      body: options.json !== undefined ? JSON.stringify(options.json) : options.rawBody,
    });
    const text = await response.text();
    if (text !== '' && !response.headers.get('content-type')?.startsWith('application/json')) {
      throw new Error(
        `${method} ${path} -> ${response.status}: a body that is not JSON (${response.headers.get('content-type')}): ` +
          `${text.slice(0, 200)}`,
      );
    }
    const body = text === '' ? undefined : JSON.parse(text);
    validator.check(method, path, response.status, body);
    return { status: response.status, headers: response.headers, body };
  }

  return {
    request,
    get: (path: string, key?: string) => request('GET', path, { key }),
    post: (path: string, key: string | undefined, json: unknown) => request('POST', path, { key, json }),
    patch: (path: string, key: string | undefined, json: unknown) => request('PATCH', path, { key, json }),
    delete: (path: string, key?: string) => request('DELETE', path, { key }),
  };
}

export type Api = ReturnType<typeof createApi>;
