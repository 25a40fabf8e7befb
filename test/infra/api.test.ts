import { randomBytes } from 'node:crypto';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { ROUTES } from '../../lambdas/handlers/api/routes';
import { API_PREFIX } from '../../lambdas/handlers/http/route-spec';
import { GATEWAY_RESPONSES } from '../../lambdas/handlers/http/gateway-responses';
import { MINIMUM_COMPRESSION_BYTES } from '../../lambdas/handlers/http/compression';
import { DEFAULT_TRACE_SAMPLE_RATE } from '../../lib/config';
import { FunctionFactory } from '../../lib/constructs/function-factory';
import {
  apiKeyEdgeLimitPerMinute,
  INVALID_USAGE_PLAN_KEY_RESPONSE,
  usagePlanBucketThrottle,
  usagePlanThrottle,
} from '../../lib/constructs/public-api';
import {
  DEFAULT_USAGE_PLAN_BUCKETS,
  usagePlanKeyPrefixOf,
  usagePlanKeyValues,
  USAGE_PLAN_BUCKETS_ENV,
  USAGE_PLAN_KEY_PREFIX_ENV,
} from '../../lambdas/handlers/authorizer/usage-plan-keys';
import { decodeRoutePermissions, ROUTE_SCOPES_ENV } from '../../lambdas/handlers/authorizer/policy';
import {
  AUTHORIZER_TIMEOUT_SECONDS,
  IN_FLIGHT_DECISION_BOUND_MS,
} from '../../lambdas/handlers/authorizer/decision-time';
import { AUTHORIZATION_HEADER_REGEX } from '../../lambdas/contexts/tenants/api-key-format';
import { buildStack, logicalIdOf, resourcePaths, synth } from './support';

/** Every method as `GET /api/v1/calls` -> its properties. */
function methodsByRoute(template: Template): Map<string, Record<string, unknown>> {
  const paths = resourcePaths(template);
  const methods = new Map<string, Record<string, unknown>>();
  for (const method of Object.values(template.findResources('AWS::ApiGateway::Method'))) {
    const props = method.Properties as { HttpMethod: string; ResourceId: { Ref: string } };
    methods.set(`${props.HttpMethod} ${paths.get(props.ResourceId.Ref)}`, props);
  }
  return methods;
}

const authorizerLogicalId = (template: Template): string =>
  Object.keys(template.findResources('AWS::ApiGateway::Authorizer'))[0];

const parsedTemplate = (response: Record<string, unknown>) =>
  JSON.parse((response.ResponseTemplates as Record<string, string>)['application/json']);

function gatewayResponse(template: Template, type: string): Record<string, unknown> {
  const found = Object.values(
    template.findResources('AWS::ApiGateway::GatewayResponse', { Properties: { ResponseType: type } }),
  );
  expect(found).toHaveLength(1);
  return found[0].Properties;
}

describe('the public API', () => {
  it('creates one function per route of the manifest from its handler module', () => {
    const create = jest.spyOn(FunctionFactory.prototype, 'create');

    const { stack } = buildStack();

    const entries = create.mock.calls.map(([, spec]) => spec.entry);
    for (const route of ROUTES) {
      expect(entries).toContain(route.handler);
      expect(stack.api.routeFunctions[route.operationId]).toBeDefined();
    }
    create.mockRestore();
  });

  it('serves every route under /api/v1 through its own function, with the authorizer on every keyed route', () => {
    const { stack, template } = synth();

    const methods = methodsByRoute(template);

    for (const route of ROUTES) {
      const method = methods.get(`${route.method} ${API_PREFIX}${route.path}`);
      expect(method).toBeDefined();
      const fnId = logicalIdOf(stack, stack.api.routeFunctions[route.operationId]);
      expect(JSON.stringify(method!.Integration)).toContain(`"${fnId}","Arn"`);
      if (route.auth === 'apiKey') {
        expect(method).toMatchObject({
          AuthorizationType: 'CUSTOM',
          AuthorizerId: { Ref: authorizerLogicalId(template) },
        });
      } else {
        expect(method).toMatchObject({ AuthorizationType: 'NONE' });
        expect(method!.AuthorizerId).toBeUndefined();
      }
    }
  });

  it('lets GET /openapi.json through without a key', () => {
    const { template } = synth();

    const method = methodsByRoute(template).get(`GET ${API_PREFIX}/openapi.json`);

    expect(method).toMatchObject({ AuthorizationType: 'NONE' });
    expect(method!.AuthorizerId).toBeUndefined();
  });

  it('serves POST and GET /consent through two functions of their own, both behind the authorizer', () => {
    const { stack, template } = synth();

    const methods = methodsByRoute(template);
    const post = methods.get(`POST ${API_PREFIX}/consent`);
    const get = methods.get(`GET ${API_PREFIX}/consent`);
    const [recordFn, readFn] = [stack.api.routeFunctions.recordConsent, stack.api.routeFunctions.getConsent];

    expect(recordFn).not.toBe(readFn);
    expect(JSON.stringify(post!.Integration)).toContain(`"${logicalIdOf(stack, recordFn)}","Arn"`);
    expect(JSON.stringify(get!.Integration)).toContain(`"${logicalIdOf(stack, readFn)}","Arn"`);
    for (const method of [post, get]) expect(method).toMatchObject({ AuthorizationType: 'CUSTOM' });
  });

  it('answers 405 with Allow for a method a path does not have, from a mock integration', () => {
    const { template } = synth();

    const any = methodsByRoute(template).get(`ANY ${API_PREFIX}/contacts`) as {
      Integration: { Type: string; IntegrationResponses: Record<string, unknown>[] };
      AuthorizationType: string;
    };

    expect(any.AuthorizationType).toBe('NONE');
    expect(any.Integration.Type).toBe('MOCK');
    const response = any.Integration.IntegrationResponses[0] as Record<string, Record<string, string>> & {
      StatusCode: string;
    };
    expect(response.StatusCode).toBe('405');
    expect(response.ResponseParameters['method.response.header.Allow']).toBe("'GET, POST'");
    expect(JSON.parse(response.ResponseTemplates['application/json'])).toEqual({
      ...GATEWAY_RESPONSES.methodNotAllowed.body,
      requestId: '$context.requestId',
    });
  });

  it('uses a TOKEN authorizer on the Authorization header, cached 300 s by default', () => {
    const { template } = synth();

    template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'TOKEN',
      IdentitySource: 'method.request.header.Authorization',
      AuthorizerResultTtlInSeconds: 300,
    });
  });

  it('invokes the authorizer only for `Bearer <key>` of the service’s key format: API Gateway answers any other header 401 itself', () => {
    const { template } = synth();
    const key = `cct_${randomBytes(32).toString('base64url')}`;

    const authorizer = Object.values(template.findResources('AWS::ApiGateway::Authorizer'))[0].Properties as {
      IdentityValidationExpression: string;
    };
    // API Gateway applies it as Java does; the expression uses nothing Java and JavaScript read differently.
    const admitted = (header: string) => new RegExp(authorizer.IdentityValidationExpression).test(header);

    expect(authorizer.IdentityValidationExpression).toBe(AUTHORIZATION_HEADER_REGEX);
    expect([`Bearer ${key}`, `bearer  ${key}`, `BEARER ${key} `].map(admitted)).toEqual([true, true, true]);
    expect(
      [
        `Basic ${key}`,
        `Bearer ${key.slice(0, -1)}`,
        `Bearer ${key}A`,
        `Bearer ${key} ${key}`,
        `Bearer ${key.replace('cct_', 'xyz_')}`,
        `Bearer ${key.slice(0, -1)}+`,
        `Bearer\t${key}`,
        key,
      ].map(admitted),
    ).toEqual([false, false, false, false, false, false, false, false]);
  });

  it('ends an authorizer invocation before the time the operator CLI waits out between its two flushes of the cache', () => {
    const { stack, template } = synth();

    const fn = template.findResources('AWS::Lambda::Function')[logicalIdOf(stack, stack.api.authorizerFunction)]
      .Properties as { Timeout: number };

    expect(fn.Timeout).toBe(AUTHORIZER_TIMEOUT_SECONDS);
    expect(fn.Timeout * 1000).toBeLessThan(IN_FLIGHT_DECISION_BOUND_MS);
  });

  it.each([60, 0])('caches authorizer decisions for the configured %i s', (ttl) => {
    const { template } = synth({ authorizerCacheTtlSeconds: ttl });

    template.hasResourceProperties('AWS::ApiGateway::Authorizer', { Type: 'TOKEN', AuthorizerResultTtlInSeconds: ttl });
  });

  it('answers 401 with WWW-Authenticate: Bearer and the Error body when the authorizer refuses the key', () => {
    const { template } = synth();

    const response = gatewayResponse(template, 'UNAUTHORIZED');

    expect(response.StatusCode).toBe('401');
    expect(response.ResponseParameters).toEqual({ 'gatewayresponse.header.WWW-Authenticate': "'Bearer'" });
    expect(parsedTemplate(response)).toEqual({
      ...GATEWAY_RESPONSES.unauthorized.body,
      requestId: '$context.requestId',
    });
  });

  it('answers ACCESS_DENIED 403 in the Error shape worded by the authorizer context (plan or missing scope)', () => {
    const { template } = synth();

    const response = gatewayResponse(template, 'ACCESS_DENIED');

    expect(response.StatusCode).toBe('403');
    expect(parsedTemplate(response)).toEqual({
      error: '$context.authorizer.deniedError',
      code: '$context.authorizer.deniedCode',
      requestId: '$context.requestId',
    });
  });

  it.each(['THROTTLED', 'QUOTA_EXCEEDED'])('answers %s with 429, Retry-After and code rate_limited', (type) => {
    const { template } = synth();

    const response = gatewayResponse(template, type);

    expect(response.StatusCode).toBe('429');
    expect(response.ResponseParameters).toEqual({ 'gatewayresponse.header.Retry-After': "'60'" });
    expect(parsedTemplate(response)).toEqual({ ...GATEWAY_RESPONSES.throttled.body, requestId: '$context.requestId' });
  });

  it("answers a body over API Gateway's limit with 413 payload_too_large, as the local runtime does", () => {
    const { template } = synth();

    const response = gatewayResponse(template, 'REQUEST_TOO_LARGE');

    expect(response.StatusCode).toBe('413');
    expect(parsedTemplate(response)).toEqual({
      error: 'Request body larger than 10 MB',
      code: 'payload_too_large',
      requestId: '$context.requestId',
    });
  });

  it.each(['MISSING_AUTHENTICATION_TOKEN', 'RESOURCE_NOT_FOUND'])(
    'turns %s (an unknown path) into 404 not_found',
    (type) => {
      const { template } = synth();

      const response = gatewayResponse(template, type);

      expect(response.StatusCode).toBe('404');
      expect(parsedTemplate(response)).toEqual({ ...GATEWAY_RESPONSES.notFound.body, requestId: '$context.requestId' });
    },
  );

  it('gives every other gateway error an Error body with a code', () => {
    const { template } = synth();

    const fiveXx = gatewayResponse(template, 'DEFAULT_5XX');
    const fourXx = gatewayResponse(template, 'DEFAULT_4XX');

    expect(parsedTemplate(fiveXx)).toEqual({ ...GATEWAY_RESPONSES.internal.body, requestId: '$context.requestId' });
    // API Gateway substitutes its own message as a quoted JSON string.
    const fourXxBody = JSON.parse(
      (fourXx.ResponseTemplates as Record<string, string>)['application/json'].replace(
        '$context.error.messageString',
        '"Forbidden"',
      ),
    );
    expect(fourXxBody).toEqual({ error: 'Forbidden', code: expect.any(String), requestId: '$context.requestId' });
  });

  it('accepts IPv6 clients: a regional endpoint with the dualstack IP address type', () => {
    const { template } = synth();

    template.hasResourceProperties('AWS::ApiGateway::RestApi', {
      EndpointConfiguration: { Types: ['REGIONAL'], IpAddressType: 'dualstack' },
    });
  });

  it('meters keys from the authorizer in a fixed number of usage-plan buckets, made in a nested stack, whatever the number of keys', () => {
    const { stack, template } = synth();
    const buckets = { prefix: usagePlanKeyPrefixOf('CctService-dev'), count: DEFAULT_USAGE_PLAN_BUCKETS };
    const nested = Template.fromStack(stack.api.usagePlanBucketStack);

    const apiKeys = nested.findResources('AWS::ApiGateway::ApiKey');
    const inPlan = Object.values(nested.findResources('AWS::ApiGateway::UsagePlanKey')).map((r) => r.Properties);
    const authorizer =
      template.findResources('AWS::Lambda::Function')[logicalIdOf(stack, stack.api.authorizerFunction)];
    const nestedStackResource = Object.values(template.findResources('AWS::CloudFormation::Stack'))[0].Properties as {
      Parameters: Record<string, unknown>;
    };
    const planParameter = (inPlan[0].UsagePlanId as { Ref: string }).Ref;

    template.hasResourceProperties('AWS::ApiGateway::RestApi', { ApiKeySourceType: 'AUTHORIZER' });
    template.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
      Throttle: { RateLimit: 200, BurstLimit: 400 },
      ApiStages: [
        Match.objectLike({
          ApiId: { Ref: logicalIdOf(stack, stack.api.api) },
          Stage: { Ref: logicalIdOf(stack, stack.api.stage) },
        }),
      ],
    });
    // None in the service stack: each bucket is two resources of the nested stack's 500.
    template.resourceCountIs('AWS::ApiGateway::ApiKey', 0);
    template.resourceCountIs('AWS::ApiGateway::UsagePlanKey', 0);
    expect(
      Object.values(apiKeys)
        .map((k) => k.Properties.Value)
        .sort(),
    ).toEqual(usagePlanKeyValues(buckets).sort());
    expect(Object.values(apiKeys).every((k) => k.Properties.Enabled === true)).toBe(true);
    expect(inPlan.map((p) => p.KeyId.Ref).sort()).toEqual(Object.keys(apiKeys).sort());
    expect(inPlan.every((p) => p.UsagePlanId.Ref === planParameter && p.KeyType === 'API_KEY')).toBe(true);
    expect(nestedStackResource.Parameters[planParameter]).toEqual({ Ref: logicalIdOf(stack, stack.api.usagePlan) });
    expect(authorizer.Properties.Environment.Variables).toMatchObject({
      [USAGE_PLAN_KEY_PREFIX_ENV]: buckets.prefix,
      [USAGE_PLAN_BUCKETS_ENV]: String(DEFAULT_USAGE_PLAN_BUCKETS),
    });
  });

  it('sizes the buckets by usagePlanBuckets and the region throttle, never below what one key may send', () => {
    expect(
      usagePlanBucketThrottle({ rateLimitPerKey: 120, usagePlanBuckets: 100, regionRequestsPerSecond: 10_000 }),
    ).toEqual({ rateLimit: 200, burstLimit: 400 });
    expect(
      usagePlanBucketThrottle({ rateLimitPerKey: 120, usagePlanBuckets: 20, regionRequestsPerSecond: 10_000 }),
    ).toEqual({ rateLimit: 1000, burstLimit: 2000 });
    expect(
      usagePlanBucketThrottle({ rateLimitPerKey: 120, usagePlanBuckets: 100, regionRequestsPerSecond: 2_500 }),
    ).toEqual({ rateLimit: 50, burstLimit: 240 });
    expect(
      usagePlanBucketThrottle({ rateLimitPerKey: 120, usagePlanBuckets: 1, regionRequestsPerSecond: 10_000 }),
    ).toEqual({ rateLimit: 20_000, burstLimit: 5_000 });
    expect(
      usagePlanBucketThrottle({ rateLimitPerKey: 100_000, usagePlanBuckets: 100, regionRequestsPerSecond: 2_500 }),
    ).toEqual(usagePlanThrottle(100_000));
  });

  it('requires a usage-plan key on every keyed method by default, never on GET /openapi.json, and not at all when turned off', () => {
    const on = methodsByRoute(synth().template);
    const off = methodsByRoute(synth({ requireUsagePlanKey: false }).template);

    for (const route of ROUTES) {
      expect([
        route.operationId,
        on.get(`${route.method} ${API_PREFIX}${route.path}`)!.ApiKeyRequired ?? false,
      ]).toEqual([route.operationId, route.auth === 'apiKey']);
      expect(off.get(`${route.method} ${API_PREFIX}${route.path}`)!.ApiKeyRequired ?? false).toBe(false);
    }
  });

  it('answers a usage-plan key missing from the plan (a deleted per-key API key) with the contract 401, as any revoked key', () => {
    const { template } = synth();

    const response = gatewayResponse(template, 'INVALID_API_KEY');

    expect(response.StatusCode).toBe('401');
    expect(response.ResponseParameters).toEqual({ 'gatewayresponse.header.WWW-Authenticate': "'Bearer'" });
    expect(parsedTemplate(response)).toEqual({
      ...GATEWAY_RESPONSES.unauthorized.body,
      requestId: '$context.requestId',
    });
    expect(INVALID_USAGE_PLAN_KEY_RESPONSE).toEqual(GATEWAY_RESPONSES.unauthorized);
  });

  it('gives the authorizer every keyed route of the manifest with its scope, and no unauthenticated one', () => {
    const { stack, template } = synth();

    const fn = template.findResources('AWS::Lambda::Function')[logicalIdOf(stack, stack.api.authorizerFunction)];
    const encoded = (fn.Properties as { Environment: { Variables: Record<string, string> } }).Environment.Variables[
      ROUTE_SCOPES_ENV
    ];

    const keyed = ROUTES.filter((route) => route.auth !== null);
    expect(decodeRoutePermissions(encoded)).toEqual(
      keyed.map((route) => ({ method: route.method, path: `${API_PREFIX}${route.path}`, scope: route.scope })),
    );
  });

  it('rate-limits each client address to 600 requests per 60 s with WAF, answering 429 with Retry-After', () => {
    const { stack, template } = synth();

    const acl = Object.values(template.findResources('AWS::WAFv2::WebACL'))[0].Properties as {
      Scope: string;
      Rules: { Name: string; Statement: unknown; Action: { Block: { CustomResponse: Record<string, unknown> } } }[];
      CustomResponseBodies: Record<string, { ContentType: string; Content: string }>;
    };

    expect(acl.Scope).toBe('REGIONAL');
    const rule = acl.Rules.find((r) => r.Name === 'PerClientAddressRateLimit')!;
    expect(rule.Statement).toEqual({
      RateBasedStatement: {
        Limit: 600,
        EvaluationWindowSec: 60,
        AggregateKeyType: 'IP',
        ScopeDownStatement: expect.anything(),
      },
    });
    const custom = rule.Action.Block.CustomResponse as {
      ResponseCode: number;
      CustomResponseBodyKey: string;
      ResponseHeaders: unknown;
    };
    expect(custom.ResponseCode).toBe(429);
    expect(custom.ResponseHeaders).toEqual([{ Name: 'Retry-After', Value: '60' }]);
    const body = acl.CustomResponseBodies[custom.CustomResponseBodyKey];
    expect(body.ContentType).toBe('APPLICATION_JSON');
    expect(JSON.parse(body.Content)).toEqual({ error: expect.any(String), code: 'rate_limited' });
    template.hasResourceProperties('AWS::WAFv2::WebACLAssociation', {
      WebACLArn: { 'Fn::GetAtt': [logicalIdOf(stack, stack.api.networkRateLimit.webAcl), 'Arn'] },
      ResourceArn: { 'Fn::Join': ['', Match.arrayWith([{ Ref: logicalIdOf(stack, stack.api.stage) }])] },
    });
  });

  it('keeps no WAF sampled requests, whose headers would show API keys to whoever may read them', () => {
    const { template } = synth();

    const acl = Object.values(template.findResources('AWS::WAFv2::WebACL'))[0].Properties as {
      VisibilityConfig: { SampledRequestsEnabled: boolean; CloudWatchMetricsEnabled: boolean };
      Rules: { VisibilityConfig: { SampledRequestsEnabled: boolean; CloudWatchMetricsEnabled: boolean } }[];
    };

    for (const config of [acl.VisibilityConfig, ...acl.Rules.map((rule) => rule.VisibilityConfig)]) {
      expect(config).toEqual(
        expect.objectContaining({ SampledRequestsEnabled: false, CloudWatchMetricsEnabled: true }),
      );
    }
  });

  it('limits each API key to twice the exact limit per 60 s at the edge with WAF, keyed on the Authorization header, before any invocation', () => {
    const { template } = synth();

    const acl = Object.values(template.findResources('AWS::WAFv2::WebACL'))[0].Properties as {
      Rules: {
        Name: string;
        Priority: number;
        Statement: { RateBasedStatement: Record<string, unknown> };
        Action: { Block: { CustomResponse: Record<string, unknown> } };
      }[];
      CustomResponseBodies: Record<string, { ContentType: string; Content: string }>;
    };
    const rule = acl.Rules.find((r) => r.Name === 'PerApiKeyRateLimit')!;

    expect(rule.Statement.RateBasedStatement).toEqual({
      Limit: 240,
      EvaluationWindowSec: 60,
      AggregateKeyType: 'CUSTOM_KEYS',
      CustomKeys: [
        {
          Header: {
            Name: 'authorization',
            TextTransformations: [
              { Priority: 0, Type: 'LOWERCASE' },
              { Priority: 1, Type: 'COMPRESS_WHITE_SPACE' },
            ],
          },
        },
      ],
    });
    const custom = rule.Action.Block.CustomResponse as {
      ResponseCode: number;
      CustomResponseBodyKey: string;
      ResponseHeaders: unknown;
    };
    expect(custom.ResponseCode).toBe(429);
    expect(custom.ResponseHeaders).toEqual([{ Name: 'Retry-After', Value: '60' }]);
    expect(JSON.parse(acl.CustomResponseBodies[custom.CustomResponseBodyKey].Content)).toEqual({
      error: expect.stringContaining('API key'),
      code: 'rate_limited',
    });
    expect(new Set(acl.Rules.map((r) => r.Priority)).size).toBe(acl.Rules.length);
    expect(apiKeyEdgeLimitPerMinute(200)).toBe(400);
  });

  it('names the stage after the stage name, with X-Ray, JSON access logs and error-level execution logs without data', () => {
    const { stack, template } = synth({ stage: 'prod' });

    const stage = Object.values(template.findResources('AWS::ApiGateway::Stage'))[0].Properties as Record<
      string,
      never
    >;

    expect(stage.StageName).toBe('prod');
    expect(stage.TracingEnabled).toBe(true);
    expect(JSON.stringify((stage.AccessLogSetting as { DestinationArn: unknown }).DestinationArn)).toContain(
      `{"Ref":"${logicalIdOf(stack, stack.api.accessLogGroup)}"}`,
    );
    const format = JSON.parse((stage.AccessLogSetting as { Format: string }).Format);
    expect(format).toMatchObject({
      requestId: '$context.requestId',
      status: '$context.status',
      errorResponseType: '$context.error.responseType',
    });
    expect(JSON.stringify(format)).not.toMatch(/authorization/i);
    const settings = stage.MethodSettings as Record<string, unknown>[];
    expect(settings[0]).toEqual(
      expect.objectContaining({ HttpMethod: '*', ResourcePath: '/*', LoggingLevel: 'ERROR', DataTraceEnabled: false }),
    );
    // Per-method settings (the carrier callbacks' throttles, carrier.test.ts) restate the logging.
    for (const setting of settings) expect(setting).toMatchObject({ LoggingLevel: 'ERROR', DataTraceEnabled: false });
  });

  it('compresses responses from 1 KiB for clients that ask, the threshold the local runtime uses', () => {
    const { template } = synth();

    template.hasResourceProperties('AWS::ApiGateway::RestApi', { MinimumCompressionSize: MINIMUM_COMPRESSION_BYTES });
    expect(MINIMUM_COMPRESSION_BYTES).toBe(1024);
  });

  it("traces the stage with a sampling rule of its own: traceSampleRate of the requests, no reservoir, before X-Ray's default rule", () => {
    const { template } = synth({ stage: 'prod' });
    const everything = synth({ stage: 'prod', traceSampleRate: 1 }).template;

    template.hasResourceProperties('AWS::ApiGateway::Stage', { TracingEnabled: true });
    template.hasResourceProperties('AWS::XRay::SamplingRule', {
      SamplingRule: {
        RuleName: 'cct-service-prod',
        ServiceName: 'cct-service-prod/prod',
        ServiceType: 'AWS::ApiGateway::Stage',
        FixedRate: DEFAULT_TRACE_SAMPLE_RATE,
        ReservoirSize: 0,
        Priority: Match.anyValue(),
        Host: '*',
        HTTPMethod: '*',
        URLPath: '*',
        ResourceARN: '*',
        Version: 1,
      },
    });
    const rule = Object.values(template.findResources('AWS::XRay::SamplingRule'))[0].Properties.SamplingRule;
    expect(rule.Priority).toBeLessThan(10_000);
    expect(rule.RuleName.length).toBeLessThanOrEqual(32);
    everything.hasResourceProperties('AWS::XRay::SamplingRule', { SamplingRule: Match.objectLike({ FixedRate: 1 }) });
    // Every function keeps active tracing: it follows the stage's decision.
    for (const fn of Object.values(template.findResources('AWS::Lambda::Function')))
      expect(fn.Properties.TracingConfig).toEqual({ Mode: 'Active' });
  });

  it('publishes {base_url} of the stage and what the admin CLI needs', () => {
    const { stack, template } = synth();

    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;

    expect(Object.keys(outputs).sort()).toEqual([
      'AlarmTopicArn',
      'ApiBaseUrl',
      'ApiId',
      'CarrierCallbackBaseUrl',
      'Stage',
      'TableName',
      'TwilioSecretArn',
      'UsagePlanId',
    ]);

    expect(JSON.stringify(outputs.ApiBaseUrl.Value)).toMatch(/"\/api\/v1"\]\]\}$/);
    expect(outputs.TableName.Value).toEqual({ Ref: logicalIdOf(stack, stack.table.table) });
    expect(outputs.ApiId.Value).toEqual({ Ref: logicalIdOf(stack, stack.api.api) });
    expect(outputs.UsagePlanId.Value).toEqual({ Ref: logicalIdOf(stack, stack.api.usagePlan) });
    expect(outputs.Stage.Value).toBe('dev');
  });

  it('maps a custom domain root to the stage, so {base_url} is https://<domain>/api/v1, dualstack like the API', () => {
    const certificateArn = 'arn:aws:acm:eu-west-1:123456789012:certificate/11111111-2222-3333-4444-555555555555';
    const { stack, template } = synth({ customDomain: { domainName: 'api.example.com', certificateArn } });

    template.hasResourceProperties('AWS::ApiGateway::DomainName', {
      DomainName: 'api.example.com',
      RegionalCertificateArn: certificateArn,
      EndpointConfiguration: { Types: ['REGIONAL'], IpAddressType: 'dualstack' },
      SecurityPolicy: 'TLS_1_2',
    });
    const mapping = Object.values(template.findResources('AWS::ApiGateway::BasePathMapping'))[0].Properties;
    expect(mapping.BasePath).toBeUndefined();
    expect(mapping.Stage).toEqual({ Ref: logicalIdOf(stack, stack.api.stage) });
    expect(template.toJSON().Outputs.ApiBaseUrl.Value).toBe('https://api.example.com/api/v1');
  });

  it('adds provider callbacks outside /api/v1, under a declared prefix, without an authorizer', () => {
    const { stack } = buildStack();
    const fn = stack.api.routeFunctions.getOpenApi;

    stack.api.addProviderCallback('POST', '/carrier/twilio/fax/status', fn);

    const method = methodsByRoute(Template.fromStack(stack)).get('POST /carrier/twilio/fax/status');
    expect(method).toMatchObject({ AuthorizationType: 'NONE' });
    expect(method!.AuthorizerId).toBeUndefined();
    expect(() => stack.api.addProviderCallback('POST', `${API_PREFIX}/carrier`, fn)).toThrow(/outside/);
    // Outside the prefixes the WAF exemption covers: refused rather than silently rate-limited per address.
    expect(() => stack.api.addProviderCallback('POST', '/carrier/other/status', fn)).toThrow(
      /none of the declared prefixes/,
    );
  });
});

describe('the usage-plan throttle', () => {
  /**
   * A client that obeys the exact limiter (N per fixed minute) at its most bursty: N requests at
   * the last millisecond of a window and N at the first of the next, minute after minute.
   */
  function admittedOfWorstCaseClient(limit: number, throttle: { rateLimit: number; burstLimit: number }): number {
    let tokens = throttle.burstLimit;
    let last = 0;
    let admitted = 0;
    const burstAt = (t: number) => {
      tokens = Math.min(throttle.burstLimit, tokens + ((t - last) / 1000) * throttle.rateLimit);
      last = t;
      for (let i = 0; i < limit; i += 1) {
        if (tokens >= 1) {
          tokens -= 1;
          admitted += 1;
        }
      }
    };
    for (let minute = 1; minute <= 5; minute += 2) {
      burstAt(minute * 60_000 - 1);
      burstAt(minute * 60_000);
    }
    return admitted;
  }

  it.each([120, 61, 1000])('admits everything the exact limiter of %i per minute admits', (limit) => {
    const throttle = usagePlanThrottle(limit);

    const admitted = admittedOfWorstCaseClient(limit, throttle);

    expect(admitted).toBe(6 * limit);
    expect(throttle.rateLimit * 60).toBeGreaterThanOrEqual(limit);
  });

  it('would refuse part of it with a burst of only one window', () => {
    const admitted = admittedOfWorstCaseClient(120, { rateLimit: 2, burstLimit: 120 });

    expect(admitted).toBeLessThan(6 * 120);
  });
});
