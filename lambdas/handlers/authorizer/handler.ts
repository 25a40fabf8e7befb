import type { APIGatewayAuthorizerResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { usagePlanKeyValueOf } from '../../contexts/tenants/api-keys';
import { authorizeAuthorizationHeader, principalToContext } from '../../contexts/tenants/auth';
import { logger } from '../../shared/aws';

/**
 * TOKEN authorizer. API Gateway caches the result per token for the configured TTL, so the policy
 * covers every method of the API, not only the one being called.
 * - unknown, malformed, revoked, expired key: throw "Unauthorized" -> API Gateway answers 401
 *   (its gateway response adds `WWW-Authenticate: Bearer`);
 * - plan without API access: Deny -> 403 (gateway response ACCESS_DENIED, code api_access_disabled).
 * An allowed key also names its API Gateway API key (`usageIdentifierKey`, derived from the key's
 * id: see `usagePlanKeyValueOf`), which the stack's usage plan meters (API key source AUTHORIZER).
 * The operator CLI creates that API key when it issues the key against a stack; a key issued
 * without one is refused by API Gateway (403) on methods that require a usage-plan key.
 */
export async function handler(event: APIGatewayTokenAuthorizerEvent): Promise<APIGatewayAuthorizerResult> {
  const decision = await authorizeAuthorizationHeader(event.authorizationToken);
  const anyMethod = wholeApiArn(event.methodArn);
  if (decision.effect === 'allow') {
    const context = principalToContext(decision.principal);
    return {
      principalId: decision.principal.apiKey.id,
      policyDocument: policy('Allow', anyMethod),
      context,
      usageIdentifierKey: usagePlanKeyValueOf(decision.principal.apiKey.id),
    };
  }
  if (decision.reason === 'api_access_disabled') {
    return { principalId: 'plan-without-api-access', policyDocument: policy('Deny', anyMethod) };
  }
  logger.info('API key refused');
  throw new Error('Unauthorized');
}

/** arn:aws:execute-api:region:account:apiId/stage/METHOD/path -> arn:...:apiId/stage/* */
export function wholeApiArn(methodArn: string): string {
  const [arnWithApiId, stage] = methodArn.split('/');
  return `${arnWithApiId}/${stage}/*`;
}

const policy = (effect: 'Allow' | 'Deny', resource: string) => ({
  Version: '2012-10-17',
  Statement: [{ Action: 'execute-api:Invoke', Effect: effect, Resource: resource }],
});
