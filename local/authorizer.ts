import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { AUTHORIZER_TIMEOUT_SECONDS } from '../lambdas/handlers/authorizer/decision-time';
import { runInvocation } from './invocations';

/**
 * API Gateway's side of a TOKEN authorizer, for the local runtime: the event it sends the
 * authorizer function (as AWS documents it: test/fixtures/aws/token-authorizer-event.json), what it
 * makes of the answer, and how it checks a (cached) policy against each request's method ARN.
 */
export type AuthorizerHandler = (event: APIGatewayTokenAuthorizerEvent) => Promise<APIGatewayAuthorizerResult>;

/** The authorizer's result as API Gateway caches it: a policy with its context, or the 401 refusal. */
export type AuthorizerOutcome =
  | { kind: 'policy'; result: APIGatewayAuthorizerResult; latencyMs: number }
  | { kind: 'unauthorized' };

/** The local runtime's API, as an ARN: region `local`, account 0, API id `local`. */
export const LOCAL_API_ARN = 'arn:aws:execute-api:local:000000000000:local';

/** `arn:...:apiId/stage/METHOD/path`, the path as the client sent it (still percent-encoded). */
export const methodArnOf = (stage: string, method: string, rawPath: string): string =>
  `${LOCAL_API_ARN}/${stage}/${method}${rawPath}`;

/** Lambda's end of an invocation that overran the function's timeout. */
export class AuthorizerTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`The authorizer did not answer within its timeout of ${timeoutMs} ms`);
    this.name = 'AuthorizerTimeoutError';
  }
}

/**
 * Invokes the authorizer with the TOKEN event. "Unauthorized" thrown is API Gateway's 401; any
 * other failure propagates (API Gateway answers it 500, AUTHORIZER_FAILURE). An invocation ends at
 * the function's timeout, as Lambda ends it: its answer, should it come later, is never used nor
 * cached, which is what bounds how long a decision can be in flight (decision-time.ts).
 */
export async function invokeAuthorizer(
  handler: AuthorizerHandler,
  token: string,
  methodArn: string,
  timeoutMs: number = AUTHORIZER_TIMEOUT_SECONDS * 1000,
): Promise<AuthorizerOutcome> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new AuthorizerTimeoutError(timeoutMs)), timeoutMs);
  });
  try {
    // The authorizer is a function of its own, invoked apart from the request's function.
    const result = await Promise.race([
      runInvocation(() => handler({ type: 'TOKEN', authorizationToken: token, methodArn })),
      timedOut,
    ]);
    return { kind: 'policy', result, latencyMs: Date.now() - started };
  } catch (err) {
    if ((err as Error).message === 'Unauthorized') return { kind: 'unauthorized' };
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** IAM's wildcards in a resource: `*` any run of characters, `?` one. */
function resourcePattern(resource: string): RegExp {
  const escaped = resource
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`);
}

/** IAM's evaluation for one action: an explicit Deny wins, then any Allow; nothing matching is a deny. */
export function policyAllows(result: APIGatewayAuthorizerResult, methodArn: string): boolean {
  const matching = result.policyDocument.Statement.filter((statement) => {
    const s = statement as { Action?: string | string[]; Resource?: string | string[] };
    const actions = [s.Action ?? []].flat();
    const resources = [s.Resource ?? []].flat();
    return (
      actions.some((a) => a === 'execute-api:Invoke' || a === 'execute-api:*' || a === '*') &&
      resources.some((r) => resourcePattern(r).test(methodArn))
    );
  });
  if (matching.some((statement) => statement.Effect === 'Deny')) return false;
  return matching.some((statement) => statement.Effect === 'Allow');
}
