import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import * as z from 'zod/mini';
import '../../shared/schemas/zod-english';
import { callbackConfigFromEnv, type CallbackConfig } from '../../contexts/carrier/callback-config';
import {
  hasTwilioSignatureShape,
  signedCallbackUrls,
  TWILIO_SIGNATURE_HEADER,
} from '../../contexts/carrier/callback-protection';
import type { CallbackKind } from '../../contexts/carrier/callbacks';
import { resolveOrganization } from '../../contexts/carrier/organization';
import { verifyTwilioSignature, type FormPair } from '../../contexts/carrier/signature';
import { TENANT_HINT_PARAM } from '../../contexts/carrier/tenant-hint';
import { logger } from '../../shared/aws';
import { TemporarilyUnavailableError } from '../../shared/errors';
import { isContention } from '../../shared/table/contention';
import { issueText } from '../http/validation';
import type { CarrierRouteSpec } from './routes';

/**
 * One Twilio callback route as a Lambda handler (API Gateway REST proxy event). Not the JSON
 * API's middy chain: the body is a form, the caller is Twilio and its proof is the signature.
 *   body (maybe base64) -> form -> X-Twilio-Signature over PUBLIC_BASE_URL + path (+ query), with
 *   or without the service's connection overrides as fragment, and the sorted params (403 when
 *   missing or wrong) -> fields (400) -> organization -> domain
 *   -> 200: `<Response/>` where Twilio reads TwiML, else empty.
 * A callback for a number no organization registered is answered 200 and logged: Twilio retries
 * errors, and a retry would find nothing more to do. Bodies, numbers of customers and the token
 * are never logged.
 */
export const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>';

/** Twilio's forms are a few KB; anything far larger is not a callback. */
export const MAX_CALLBACK_BODY_BYTES = 64 * 1024;

const FORM_CONTENT_TYPE = 'application/x-www-form-urlencoded';

const errorResult = (
  statusCode: number,
  code: string,
  error: string,
  headers: Record<string, string> = {},
): APIGatewayProxyResult => ({
  statusCode,
  headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...headers },
  body: JSON.stringify({ error, code }),
});

const okResult = (route: CarrierRouteSpec): APIGatewayProxyResult =>
  route.twiml
    ? { statusCode: 200, headers: { 'Content-Type': 'text/xml' }, body: EMPTY_TWIML }
    : { statusCode: 200, headers: {}, body: '' };

/** API Gateway REST keeps the header names as sent; HTTP says they are case-insensitive. */
function headerOf(event: APIGatewayProxyEvent, name: string): string | undefined {
  const wanted = name.toLowerCase();
  const found = Object.entries(event.headers ?? {}).find(([key]) => key.toLowerCase() === wanted);
  return found?.[1] ?? undefined;
}

function bodyOf(event: APIGatewayProxyEvent): string | 'tooLarge' {
  const raw = event.body ?? '';
  const body = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
  return Buffer.byteLength(body) > MAX_CALLBACK_BODY_BYTES ? 'tooLarge' : body;
}

/**
 * API Gateway hands over the query string decoded, so it is rebuilt for the signature. Exact for
 * the only parameter this service puts on callback URLs (`tenantId`, a uuid).
 */
function queryPairs(event: APIGatewayProxyEvent): FormPair[] {
  return Object.entries(event.multiValueQueryStringParameters ?? {}).flatMap(([name, values]) =>
    (values ?? []).map((v) => [name, v] as const),
  );
}

/** The URL Twilio requested, as this deployment is reached from outside. */
export function signedUrlOf(
  publicBaseUrl: string,
  route: Pick<CarrierRouteSpec, 'path'>,
  query: readonly FormPair[],
): string {
  const search = new URLSearchParams(query.map(([n, v]): [string, string] => [n, v])).toString();
  return `${publicBaseUrl}${route.path}${search ? `?${search}` : ''}`;
}

/** Before any table access, so a forged request costs one short invocation and nothing shared. */
function refuseSignature(signature: string | undefined): APIGatewayProxyResult {
  logger.warn('Refused a callback whose X-Twilio-Signature is missing or does not verify', {
    signaturePresent: signature !== undefined,
  });
  return errorResult(403, 'invalid_signature', 'X-Twilio-Signature is missing or does not match this request');
}

const tenantHintSchema = z.optional(z.uuid());

export type CallbackHandlerOptions = { config?: CallbackConfig; now?: () => Date };

type Refused = { refused: APIGatewayProxyResult };

/**
 * The form of a request whose X-Twilio-Signature verifies, with the URL's query; else the refusal. What the edge
 * refuses too (callback-protection.ts) is refused before any form is parsed.
 */
function verifiedForm(
  event: APIGatewayProxyEvent,
  route: CarrierRouteSpec,
  config: CallbackConfig,
): { params: FormPair[]; query: ReturnType<typeof queryPairs> } | Refused {
  const body = bodyOf(event);
  if (body === 'tooLarge')
    return {
      refused: errorResult(413, 'payload_too_large', `body: must be at most ${MAX_CALLBACK_BODY_BYTES} bytes`),
    };
  const signature = headerOf(event, TWILIO_SIGNATURE_HEADER);
  if (!hasTwilioSignatureShape(signature)) return { refused: refuseSignature(signature) };
  const contentType = headerOf(event, 'content-type') ?? '';
  if (!contentType.toLowerCase().startsWith(FORM_CONTENT_TYPE)) {
    return { refused: errorResult(400, 'validation_failed', `Content-Type must be ${FORM_CONTENT_TYPE}`) };
  }
  const params: FormPair[] = [...new URLSearchParams(body)];
  const query = queryPairs(event);
  const { authToken } = config;
  const urls = signedCallbackUrls(signedUrlOf(config.publicBaseUrl, route, query));
  if (!urls.some((url) => verifyTwilioSignature({ url, params, signature, authToken })))
    return { refused: refuseSignature(signature) };
  return { params, query };
}

/** The callback's parameters and the URL's tenant hint, or a 400 naming the field. */
function parsedCallback<P>(
  kind: CallbackKind<P>,
  params: FormPair[],
  query: ReturnType<typeof queryPairs>,
): { data: P; hint: string | undefined } | Refused {
  // The URL's own parameters (`tenantId`, `messageId`: ours, signed with the URL) sit beside
  // Twilio's form fields, whose names never collide with them (Twilio's are PascalCase).
  const parsed = kind.params.safeParse({ ...Object.fromEntries(query), ...Object.fromEntries(params) });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      refused: errorResult(
        400,
        'validation_failed',
        `${issue.path.map(String).join('.') || 'body'}: ${issueText(issue)}`,
      ),
    };
  }
  const hint = tenantHintSchema.safeParse(new Map(query).get(TENANT_HINT_PARAM));
  if (!hint.success) return { refused: errorResult(400, 'validation_failed', `${TENANT_HINT_PARAM}: must be a uuid`) };
  return { data: parsed.data, hint: hint.data };
}

/** A callback that failed: 503 for contention (Twilio retries it), else 500. */
function failureResult(err: unknown): APIGatewayProxyResult {
  // Only the error: never the event, whose body is the customer's text or numbers.
  // Contention that outlasted the client's retries, or rows that kept changing under the
  // domain's own rounds (a busy thread, a number moving between contacts): nothing was written.
  if (isContention(err) || err instanceof TemporarilyUnavailableError) {
    // Twilio retries a 5xx (the connection overrides of the callback URL).
    logger.warn('Callback refused for DynamoDB contention; Twilio retries it', { error: (err as Error).name });
    return errorResult(503, 'temporarily_unavailable', 'Busy; nothing was changed, retry this callback', {
      'Retry-After': '1',
    });
  }
  logger.error('Callback failed', { error: err as Error });
  return errorResult(500, 'internal', 'Internal error');
}

export function callbackHandler<P>(
  route: CarrierRouteSpec,
  kind: CallbackKind<P>,
  options: CallbackHandlerOptions = {},
) {
  // Read at init: a function without its token or URL fails loudly on its first invocation.
  const config = options.config ?? callbackConfigFromEnv();
  const now = options.now ?? (() => new Date());

  async function handle(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
    logger.appendKeys({ operationId: route.operationId });
    const form = verifiedForm(event, route, config);
    if ('refused' in form) return form.refused;
    const callback = parsedCallback(kind, form.params, form.query);
    if ('refused' in callback) return callback.refused;

    const clues = kind.clues(callback.data, callback.hint);
    const resolution = await resolveOrganization(clues);
    if (!resolution.found) {
      // The organization's own numbers (never a customer's) and the provider call, for the operator.
      logger.warn('No organization for this callback; answered 200 so Twilio does not retry', {
        reason: resolution.reason,
        numbersTried: clues.ownNumbers,
        providerCallSid: clues.callSid,
      });
      return okResult(route);
    }
    logger.appendKeys({ tenantId: resolution.organization.tenantId });
    const outcome = await kind.ingest(callback.data, resolution.organization, now());
    if (!outcome.handled) logger.info('Callback accepted without changes', { reason: outcome.reason });
    return okResult(route);
  }

  return middy<APIGatewayProxyEvent, APIGatewayProxyResult>({ timeoutEarlyInMillis: 0 })
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .handler(async (event) => {
      try {
        return await handle(event);
      } catch (err) {
        return failureResult(err);
      }
    }) as unknown as (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;
}
