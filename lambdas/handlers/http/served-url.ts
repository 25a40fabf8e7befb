import type { APIGatewayProxyEvent } from 'aws-lambda';
import { API_PREFIX } from './route-spec';

/** A host as a Host header may carry it: a name or IPv4 address, or a bracketed IPv6 address, and a port. */
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** API Gateway's own host names: requests to them carry the stage as the first path segment. */
const EXECUTE_API_HOST = /\.execute-api\.[a-z0-9-]+\.amazonaws\.com(?:\.cn)?$/;

const header = (event: APIGatewayProxyEvent, name: string): string | undefined =>
  Object.entries(event.headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1] ?? undefined;

/**
 * What the URL path held before the API's own path: `/prod` on an execute-api URL, nothing on a
 * custom domain mapped at its root or locally. `requestContext.path` is the path as the client
 * sent it and `path` the part the API's resources see, so the difference is exact wherever the
 * API is mounted; the stage name is the fallback when the two do not line up.
 */
function basePathOf(event: APIGatewayProxyEvent, host: string): string {
  const full = event.requestContext?.path;
  if (full && event.path && full.endsWith(event.path)) return full.slice(0, full.length - event.path.length);
  const stage = event.requestContext?.stage;
  return stage && EXECUTE_API_HOST.test(host.replace(/:\d+$/, '')) ? `/${stage}` : '';
}

/**
 * `{base_url}` as the caller reached it, e.g. `https://abc123.execute-api.eu-west-1.amazonaws.com/prod/api/v1`,
 * `https://api.example.com/api/v1` or `http://127.0.0.1:3000/api/v1`: from the Host header (or
 * `requestContext.domainName`), `X-Forwarded-Proto` (API Gateway sets it; https when absent) and
 * the stage prefix of the path. A Host that is not a plain host name gives the relative
 * `/api/v1` rather than echo it into a document.
 */
export function apiBaseUrlOf(event: APIGatewayProxyEvent): string {
  const host = header(event, 'host') ?? event.requestContext?.domainName;
  if (!host || !HOST.test(host)) return API_PREFIX;
  const forwarded = header(event, 'x-forwarded-proto')?.split(',')[0].trim().toLowerCase();
  const scheme = forwarded === 'http' ? 'http' : 'https';
  return `${scheme}://${host}${basePathOf(event, host)}${API_PREFIX}`;
}
