import type { APIGatewayProxyResult } from 'aws-lambda';

export type ApiResponse = {
  statusCode: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** A body that is not JSON (the reference page): a string sent as is, with this content type. */
  contentType?: string;
};

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Every response the service writes: JSON with its content type (or the text `contentType` names), or no body at all
 * (204).
 */
export function toProxyResult({ statusCode, body, headers, contentType }: ApiResponse): APIGatewayProxyResult {
  const hasBody = statusCode !== 204 && body !== undefined;
  const text = contentType !== undefined && typeof body === 'string';
  return {
    statusCode,
    headers: {
      ...(hasBody && { 'Content-Type': text ? contentType : JSON_CONTENT_TYPE }),
      'Cache-Control': 'no-store',
      ...headers,
    },
    body: hasBody ? (text ? body : JSON.stringify(body)) : '',
  };
}
