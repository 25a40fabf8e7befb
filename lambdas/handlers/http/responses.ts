import type { APIGatewayProxyResult } from 'aws-lambda';

export type ApiResponse = { statusCode: number; body?: unknown; headers?: Record<string, string> };

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Every response the service writes: JSON with its content type, or no body at all (204). */
export function toProxyResult({ statusCode, body, headers }: ApiResponse): APIGatewayProxyResult {
  const hasBody = statusCode !== 204 && body !== undefined;
  return {
    statusCode,
    headers: { ...(hasBody && { 'Content-Type': JSON_CONTENT_TYPE }), 'Cache-Control': 'no-store', ...headers },
    body: hasBody ? JSON.stringify(body) : '',
  };
}
