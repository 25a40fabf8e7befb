import { logger } from '../../shared/aws';
import { DomainError, TemporarilyUnavailableError } from '../../shared/errors';
import { isContention } from '../../shared/table/contention';
import type { ApiResponse } from './responses';

type HttpErrorLike = { statusCode?: number; expose?: boolean; message?: string; cause?: { data?: unknown } };

/**
 * The one place errors become HTTP. Domain errors carry their status and code; the JSON body
 * parser's errors are re-expressed in the spec's terms; anything else is a 500 that says nothing
 * about internals and is logged with the request id.
 */
export function toErrorResponse(err: unknown, requestId?: string): ApiResponse {
  const response = errorResponse(err, requestId);
  // The id of the x-amzn-RequestId header and of the logs, so a report of an error can be found.
  return requestId ? { ...response, body: { ...(response.body as object), requestId } } : response;
}

function errorResponse(thrown: unknown, requestId: string | undefined): ApiResponse {
  // DynamoDB contention that outlasted the client's retries wrote nothing: 503, retry after a second.
  const err = isContention(thrown)
    ? new TemporarilyUnavailableError(`DynamoDB ${(thrown as Error).name} outlasted the retries`)
    : thrown;
  if (err instanceof TemporarilyUnavailableError) logger.warn('Busy: answered 503', { requestId, reason: err.reason });
  if (err instanceof DomainError) {
    return {
      statusCode: err.status,
      body: { error: err.message, code: err.code, ...err.details },
      headers: err.headers,
    };
  }
  const http = err as HttpErrorLike;
  if (typeof http?.statusCode === 'number' && http.statusCode >= 400 && http.statusCode < 500) {
    // From @middy/http-json-body-parser: 415 for a non-JSON content type, 422 for malformed JSON.
    if (http.statusCode === 415) {
      return {
        statusCode: 415,
        body: { error: 'Content-Type must be application/json', code: 'unsupported_media_type' },
      };
    }
    // A key a JavaScript object cannot hold as its own (`__proto__`): refused by name, never dropped without a word.
    if (http.message === 'Forbidden key in JSON body' && typeof http.cause?.data === 'string')
      return {
        statusCode: 400,
        body: { error: `body: the key "${http.cause.data}" is reserved (at any depth)`, code: 'validation_failed' },
      };
    return { statusCode: 400, body: { error: 'body: must be a valid JSON object', code: 'validation_failed' } };
  }
  logger.error('Unhandled error', { requestId, error: err as Error });
  return {
    statusCode: 500,
    body: { error: 'Internal error', code: 'internal' },
  };
}
