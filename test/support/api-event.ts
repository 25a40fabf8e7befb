import { DEFAULT_QUIET_HOURS } from '../../lambdas/contexts/tenants/quiet-hours-policy';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { principalToContext, type Principal } from '../../lambdas/contexts/tenants/auth';
import { SCOPES, type Scope } from '../../lambdas/contexts/tenants/scopes';
import { toProxyEvent } from '../../local/proxy-event';

/** A caller as the authorizer would describe it. */
export function aPrincipal(
  overrides: { scopes?: readonly Scope[]; plan?: string; expiresAt?: string | null; tenantId?: string } = {},
): Principal {
  return {
    tenant: {
      id: overrides.tenantId ?? '0199a000-0000-7000-8000-000000000001',
      name: 'Acme',
      slug: 'acme',
      plan: overrides.plan ?? 'pro',
    },
    apiKey: {
      id: '0199a000-0000-7000-8000-0000000000aa',
      name: 'CI key',
      prefix: 'cct_AbCdEfGh',
      expiresAt: overrides.expiresAt ?? null,
      createdAt: '2026-10-01T00:00:00.000Z',
    },
    scopes: [...(overrides.scopes ?? SCOPES)],
    quietHours: DEFAULT_QUIET_HOURS,
  };
}

/**
 * An API Gateway REST (v1 payload) event as the Lambda integration receives it, made by the same
 * builder as the local runtime's (local/proxy-event.ts, held to AWS's documented events by
 * test/unit/aws-events.test.ts). Path parameters are given as meant and sent percent-encoded, as
 * a client sends them (`rawPathParameters` passes them exactly as given instead).
 */
export function apiEvent(
  init: {
    method?: string;
    /** The path template, e.g. `/api/v1/contacts/{id}`. */
    resource?: string;
    /** The path as sent; by default the template with the encoded parameters in it. */
    path?: string;
    query?: Record<string, string>;
    pathParameters?: Record<string, string>;
    rawPathParameters?: Record<string, string>;
    body?: string;
    headers?: Record<string, string>;
    principal?: Principal | null;
    stage?: string;
  } = {},
): APIGatewayProxyEvent {
  const principal = init.principal === undefined ? aPrincipal() : init.principal;
  const resource = init.resource ?? init.path ?? '/api/v1/';
  const pathParameters =
    init.rawPathParameters ??
    (init.pathParameters &&
      Object.fromEntries(
        Object.entries(init.pathParameters).map(([name, value]) => [name, encodeURIComponent(value)]),
      ));
  const rawPath =
    init.path ?? resource.replace(/\{(\w+)\}/g, (template, name: string) => pathParameters?.[name] ?? template);
  return toProxyEvent({
    request: {
      method: init.method ?? 'GET',
      rawPath,
      rawQuery: new URLSearchParams(init.query ?? {}).toString(),
      rawHeaders: Object.entries(init.headers ?? {}).flat(),
      body: init.body ?? null,
      sourceIp: '192.0.2.10',
      serverPort: 443,
    },
    resource,
    pathParameters: pathParameters ?? null,
    authorizer: principal
      ? { principalId: principal.apiKey.id, context: principalToContext(principal), integrationLatency: 0 }
      : null,
    requestId: 'req-1',
    stage: init.stage ?? 'test',
    now: new Date(),
    scheme: 'https',
  });
}

export const lambdaContext = {
  awsRequestId: 'req-1',
  functionName: 'test',
  getRemainingTimeInMillis: () => 10_000,
} as unknown as Context;

export const jsonHeaders = { 'content-type': 'application/json' };

export const bodyOf = (result: { body: string }) => JSON.parse(result.body);
