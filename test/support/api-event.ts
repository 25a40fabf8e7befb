import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { principalToContext, type Principal } from '../../lambdas/contexts/tenants/auth';
import { SCOPES, type Scope } from '../../lambdas/contexts/tenants/scopes';

/** A caller as the authorizer would describe it. */
export function aPrincipal(overrides: { scopes?: readonly Scope[]; plan?: string; expiresAt?: string | null; tenantId?: string } = {}): Principal {
  return {
    tenant: { id: overrides.tenantId ?? '0199a000-0000-7000-8000-000000000001', name: 'Acme', slug: 'acme', plan: overrides.plan ?? 'pro' },
    apiKey: {
      id: '0199a000-0000-7000-8000-0000000000aa',
      name: 'CI key',
      prefix: 'cct_AbCdEfGh',
      expiresAt: overrides.expiresAt ?? null,
      createdAt: '2026-10-01T00:00:00.000Z',
    },
    scopes: [...(overrides.scopes ?? SCOPES)],
  };
}

/** An API Gateway REST (v1 payload) event as the Lambda integration receives it. */
export function apiEvent(
  init: {
    method?: string;
    path?: string;
    query?: Record<string, string>;
    pathParameters?: Record<string, string>;
    body?: string;
    headers?: Record<string, string>;
    principal?: Principal | null;
  } = {},
): APIGatewayProxyEvent {
  const principal = init.principal === undefined ? aPrincipal() : init.principal;
  return {
    httpMethod: init.method ?? 'GET',
    path: init.path ?? '/api/v1/',
    resource: init.path ?? '/api/v1/',
    headers: init.headers ?? {},
    multiValueHeaders: {},
    queryStringParameters: init.query ?? null,
    multiValueQueryStringParameters: null,
    pathParameters: init.pathParameters ?? null,
    stageVariables: null,
    body: init.body ?? null,
    isBase64Encoded: false,
    requestContext: {
      requestId: 'req-1',
      authorizer: principal ? principalToContext(principal) : null,
    } as unknown as APIGatewayProxyEvent['requestContext'],
  };
}

export const lambdaContext = { awsRequestId: 'req-1', functionName: 'test', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

export const jsonHeaders = { 'content-type': 'application/json' };

export const bodyOf = (result: { body: string }) => JSON.parse(result.body);
