import { Duration, Size, Stack, Validations } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { Function as LambdaFunction, IFunction } from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as xray from 'aws-cdk-lib/aws-xray';
import { Construct } from 'constructs';
import { ROUTES } from '../../lambdas/handlers/api/routes';
import { API_PREFIX, type HttpMethod, type RouteSpec } from '../../lambdas/handlers/http/route-spec';
import {
  ACCESS_DENIED_TEMPLATE,
  GATEWAY_RESPONSES,
  type GatewayResponse,
} from '../../lambdas/handlers/http/gateway-responses';
import { MINIMUM_COMPRESSION_BYTES } from '../../lambdas/handlers/http/compression';
import { encodeRoutePermissions, ROUTE_SCOPES_ENV } from '../../lambdas/handlers/authorizer/policy';
import { AUTHORIZER_TIMEOUT_SECONDS } from '../../lambdas/handlers/authorizer/decision-time';
import { AUTHORIZATION_HEADER_REGEX } from '../../lambdas/contexts/tenants/api-key-format';
import {
  usagePlanKeyPrefixOf,
  USAGE_PLAN_BUCKETS_ENV,
  USAGE_PLAN_KEY_PREFIX_ENV,
  type UsagePlanBuckets,
} from '../../lambdas/handlers/authorizer/usage-plan-keys';
import type { ServiceConfig } from '../config';
import { AUTHORIZER_TABLE_ACCESS, tableAccessOf } from '../table-access';
import type { FunctionFactory, FunctionSpec } from './function-factory';
import { NetworkRateLimit, type ExemptPathProtection } from './network-rate-limit';
import type { ServiceTable } from './table';
import { UsagePlanBucketStack } from './usage-plan-buckets';

export type PublicApiProps = {
  config: ServiceConfig;
  table: ServiceTable;
  functions: FunctionFactory;
  /** The operations to serve; the route manifest unless a test narrows it. */
  routes?: readonly RouteSpec[];
  /** Handler module of the TOKEN authorizer, relative to the project root. */
  authorizerEntry?: string;
  /** Extra settings of some routes' functions (e.g. the secret preload of POST /messages), by operationId. */
  routeFunctionOptions?: Readonly<Partial<Record<string, RouteFunctionOptions>>>;
  /**
   * Path prefixes (from the API root, ending in `/`) under which `addProviderCallback` may add
   * methods. The per-address WAF limit does not apply under them: see `NetworkRateLimit`.
   */
  providerCallbackPrefixes?: readonly string[];
  /** The edge rules of those paths (signature header shape, limit per address): see `NetworkRateLimit`. */
  providerCallbackProtection?: ExemptPathProtection;
};

/** What a route's function may have beyond the defaults of the factory. */
export type RouteFunctionOptions = Pick<FunctionSpec, 'preload' | 'environment' | 'files'>;

/** Stage-level throttle of one method: steady requests per second and bucket size. */
export type MethodThrottle = { rateLimit: number; burstLimit: number };

/**
 * API Gateway's answer when the authorizer named a usage-plan key (`usageIdentifierKey`) that is
 * not an enabled API key of the stage's usage plan: a bucket the stack has not finished creating.
 * The contract's 401 with `WWW-Authenticate: Bearer`, like every key the API does not accept.
 */
export const INVALID_USAGE_PLAN_KEY_RESPONSE: GatewayResponse = GATEWAY_RESPONSES.unauthorized;

/** Namespace of the metrics this construct derives from its access log. */
export const METRIC_NAMESPACE = 'CctService';

/**
 * What one key may send, as a token bucket: the floor of a usage-plan bucket's throttle (a bucket
 * holds many keys, see `usagePlanBucketThrottle`), derived from the exact limit (N per fixed
 * minute window, kept by the handlers) so that the edge never refuses what the exact limiter would accept.
 * API Gateway throttles with a token bucket: it holds up to `burstLimit` tokens and refills
 * `rateLimit` per second.
 * - rate: N/60 per second, rounded up (120/min -> 2 rps), sustains N per minute indefinitely.
 * - burst: 2N (240). A fixed window lets a client send N in the last instant of one minute and N
 *   more in the first instant of the next: 2N within a second. A bucket of only N (120) would
 *   throttle the second half of that legitimate sequence; 2N admits it, and after it the bucket
 *   has refilled N by the next window boundary, so the pattern can repeat.
 * The exact limiter stays the one that answers 429 in normal use.
 */
export function usagePlanThrottle(limitPerMinute: number): { rateLimit: number; burstLimit: number } {
  return { rateLimit: Math.ceil(limitPerMinute / 60), burstLimit: 2 * limitPerMinute };
}

/**
 * Throttle of each usage-plan bucket. A bucket meters every key whose id hashes to it, so it cannot
 * hold one key's limit: it is an aggregate backstop, twice a bucket's fair share of the region's
 * API Gateway throttle (`regionRequestsPerSecond`, 10,000 by default), and never less than what one
 * key may send (`usagePlanThrottle`). A key flooding past WAF's per-key rule (while WAF has not yet
 * noticed, up to about 30 s) is stopped here before it takes the region's throttle or the account's
 * Lambda concurrency, at the price of slowing the other keys of its bucket for that while.
 */
export function usagePlanBucketThrottle(
  config: Pick<ServiceConfig, 'rateLimitPerKey' | 'usagePlanBuckets' | 'regionRequestsPerSecond'>,
): MethodThrottle {
  const perKey = usagePlanThrottle(config.rateLimitPerKey);
  const share = Math.ceil((2 * config.regionRequestsPerSecond) / config.usagePlanBuckets);
  // Two seconds of the rate, but no more than API Gateway's account burst (5,000 by default).
  return {
    rateLimit: Math.max(perKey.rateLimit, share),
    burstLimit: Math.max(perKey.burstLimit, Math.min(2 * share, 5_000)),
  };
}

/**
 * WAF's limit per key (the `Authorization` header) and 60-second window, at the edge. WAF counts
 * over a sliding window while the exact limiter counts fixed minutes, which admit N at the end of
 * one minute and N at the start of the next: 2N within 60 s. So the edge allows 2N: it never
 * refuses what the exact limiter accepts, and stops a flood on one key before it costs an
 * invocation (docs/decisions.md, "Keys without a ceiling").
 */
export const apiKeyEdgeLimitPerMinute = (limitPerMinute: number): number => Math.max(10, 2 * limitPerMinute);

/**
 * A generic Error body for gateway 4xx that `GATEWAY_RESPONSES` does not name (for example 403
 * INVALID_API_KEY or 413 over API Gateway's 10 MB limit). API Gateway's own message, quoted as
 * a JSON string by `messageString`, becomes `error`.
 */
const DEFAULT_4XX_TEMPLATE =
  '{"error":$context.error.messageString,"code":"request_refused","requestId":"$context.requestId"}';

/**
 * A gateway response body is a VTL template: `$` and `#` would be evaluated, not sent. The
 * bodies are constants, so refusing them at synth is enough.
 */
function literalJsonTemplate(body: GatewayResponse['body']): string {
  const json = JSON.stringify(body);
  if (/[$#]/.test(json)) throw new Error(`Gateway response body must not contain $ or # (VTL): ${json}`);
  // The only expression: the request id, as in the x-amzn-RequestId header and the access log.
  return `${json.slice(0, -1)},"requestId":"$context.requestId"}`;
}

/** Header values of a gateway response are mapping expressions: a literal is single-quoted. */
const quotedHeaders = (headers: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, `'${value.replace(/'/g, '')}'`]));

/**
 * The access log as JSON, one line per request. Never the Authorization header: it carries the API
 * key. The bench renders it with each request's values to price its CloudWatch Logs ingestion.
 */
export const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  extendedRequestId: '$context.extendedRequestId',
  xrayTraceId: '$context.xrayTraceId',
  requestTime: '$context.requestTime',
  sourceIp: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  httpMethod: '$context.httpMethod',
  resourcePath: '$context.resourcePath',
  path: '$context.path',
  status: '$context.status',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  integrationStatus: '$context.integration.status',
  // Why API Gateway answered by itself (UNAUTHORIZED, THROTTLED, AUTHORIZER_FAILURE, ...).
  errorResponseType: '$context.error.responseType',
  errorMessage: '$context.error.message',
  authorizerStatus: '$context.authorizer.status',
  authorizerLatency: '$context.authorizer.latency',
  authorizerError: '$context.authorizer.error',
  // Who called, from the authorizer's context: lets an operator follow one tenant or key.
  tenantId: '$context.authorizer.tenantId',
  keyId: '$context.authorizer.keyId',
} as const;

const ACCESS_LOG_FORMAT = apigateway.AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS));

/** The carrier's callback prefixes, each starting and ending with / and lying outside /api/v1. */
function checkedCallbackPrefixes(prefixes: readonly string[]): readonly string[] {
  for (const prefix of prefixes) {
    if (!prefix.startsWith('/') || !prefix.endsWith('/') || prefix.startsWith(`${API_PREFIX}/`)) {
      throw new Error(`A provider callback prefix starts and ends with / and lies outside ${API_PREFIX}: ${prefix}`);
    }
  }
  return prefixes;
}

/**
 * The public REST API: every operation of the route manifest under /api/v1, one function each,
 * a TOKEN authorizer, the gateway responses of `GATEWAY_RESPONSES`, a usage plan of a fixed
 * number of buckets as the backstop, and WAF rate limits per client address and per API key.
 */
export class PublicApi extends Construct {
  readonly api: apigateway.RestApi;
  readonly stage: apigateway.Stage;
  readonly authorizer: apigateway.TokenAuthorizer;
  readonly authorizerFunction: LambdaFunction;
  /** The function of each operation, by operationId. */
  readonly routeFunctions: Readonly<Record<string, LambdaFunction>>;
  readonly usagePlan: apigateway.UsagePlan;
  /**
   * The usage-plan keys the stack creates, which the authorizer names (lambdas/handlers/authorizer/usage-plan-keys.ts).
   */
  readonly usagePlanBuckets: UsagePlanBuckets;
  /** The nested stack holding the buckets' API keys and their places in the plan. */
  readonly usagePlanBucketStack: UsagePlanBucketStack;
  readonly accessLogGroup: logs.LogGroup;
  /** Which API requests X-Ray records (`traceSampleRate`); see `traceSamplingRule`. */
  readonly traceSampling: xray.CfnSamplingRule;
  readonly networkRateLimit: NetworkRateLimit;
  readonly domain?: apigateway.DomainName;
  /** `{base_url}` of the spec: the stage URL (or custom domain) followed by /api/v1. */
  readonly baseUrl: string;
  /**
   * The API root as a caller outside sees it, without /api/v1: `https://<domain>` with a custom
   * domain, else `https://<api id>.execute-api.<region>.<suffix>/<stage>`. Built from the REST API's
   * id and the stage *name*, not from the stage resource (`api.url`): a function's environment may
   * hold it without the cycle function -> stage -> deployment -> method -> function.
   */
  readonly publicRootUrl: string;
  private readonly providerCallbackPrefixes: readonly string[];
  private readonly authorizerFailures: cloudwatch.Metric;
  private readonly config: ServiceConfig;

  constructor(scope: Construct, id: string, props: PublicApiProps) {
    super(scope, id);
    const { config, table } = props;
    this.config = config;
    const serviceName = `cct-service-${config.stage}`;

    this.accessLogGroup = new logs.LogGroup(this, 'AccessLogs', {
      retention: config.logRetention,
      removalPolicy: config.removalPolicy,
    });
    this.api = this.createRestApi(serviceName);
    this.stage = this.api.deploymentStage;
    this.traceSampling = traceSamplingRule(this, serviceName, config);

    this.authorizerFunction = this.createAuthorizerFunction(props);
    table.grant(this.authorizerFunction, AUTHORIZER_TABLE_ACCESS);
    this.authorizer = this.createAuthorizer();

    this.routeFunctions = this.addRoutes(props);
    this.answerOtherMethods(props.routes ?? ROUTES);

    this.installGatewayResponses();
    // The RestApi's own output is the bare stage URL; ApiBaseUrl (with /api/v1) replaces it.
    this.api.node.tryRemoveChild('Endpoint');

    this.usagePlan = this.createUsagePlan(serviceName);
    this.usagePlanBuckets = { prefix: usagePlanKeyPrefixOf(Stack.of(this).stackName), count: config.usagePlanBuckets };
    this.usagePlanBucketStack = this.createUsagePlanBuckets(serviceName);

    this.providerCallbackPrefixes = checkedCallbackPrefixes(props.providerCallbackPrefixes ?? []);
    this.networkRateLimit = this.createNetworkRateLimit(serviceName, props);

    const urls = this.publicUrls();
    this.domain = urls.domain;
    this.baseUrl = urls.baseUrl;
    this.publicRootUrl = urls.publicRootUrl;

    this.authorizerFailures = this.authorizerFailureMetric();
    this.acknowledgeFindings();
  }

  /** The REST API with its stage: dualstack, keys from the authorizer, compression, access logs. */
  private createRestApi(serviceName: string): apigateway.RestApi {
    const { config } = this;
    return new apigateway.RestApi(this, 'Api', {
      restApiName: serviceName,
      description: 'Call, Contact and Text-Message Service, public JSON API v1',
      // Dualstack: IPv6 clients reach the API as well as IPv4 ones (a regional REST API supports
      // it; the AWS default is IPv4 only). Nothing here filters on source addresses, and the WAF
      // rule counts IPv6 clients per address like IPv4 ones (NetworkRateLimit).
      endpointConfiguration: {
        types: [apigateway.EndpointType.REGIONAL],
        ipAddressType: apigateway.IpAddressType.DUAL_STACK,
      },
      // Usage plans meter the key the authorizer returns (`usageIdentifierKey`), so clients send
      // only their bearer key and never a second x-api-key header.
      apiKeySourceType: apigateway.ApiKeySourceType.AUTHORIZER,
      cloudWatchRole: config.apiGatewayCloudWatchRole,
      // gzip or deflate for a client that asks (Accept-Encoding), from 1 KiB: every list page and the
      // OpenAPI document, not single resources or errors (lambdas/handlers/http/compression.ts).
      // The local runtime compresses by the same rule.
      minCompressionSize: Size.bytes(MINIMUM_COMPRESSION_BYTES),
      deployOptions: {
        stageName: config.stage,
        tracingEnabled: true,
        accessLogDestination: new apigateway.LogGroupLogDestination(this.accessLogGroup),
        accessLogFormat: ACCESS_LOG_FORMAT,
        // Execution logs for failures only; data tracing stays off because it would log the
        // Authorization header (the API key) and request bodies.
        loggingLevel: apigateway.MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
      },
    });
  }

  /** The TOKEN authorizer's function: API key -> organization, key and scopes. */
  private createAuthorizerFunction(props: PublicApiProps): LambdaFunction {
    const { config } = this;
    return props.functions.create('Authorizer', {
      entry: props.authorizerEntry ?? 'lambdas/handlers/authorizer/handler.ts',
      description: 'TOKEN authorizer: API key -> organization, key and scopes',
      // Two GetItems; a stuck authorizer holds every request, so fail fast. The timeout also bounds
      // how long a decision can be in flight, which the CLI waits out after a revocation (decision-time.ts).
      timeout: Duration.seconds(AUTHORIZER_TIMEOUT_SECONDS),
      // Which routes each scope opens: the allow policy names exactly those (./authorizer/policy.ts).
      environment: { [ROUTE_SCOPES_ENV]: encodeRoutePermissions(props.routes ?? ROUTES, API_PREFIX) },
      // Every request of a key not in the cache waits for it: it must never queue behind the rest
      // of the account's functions, nor can a flood of unknown keys take more than this.
      reservedConcurrency: config.authorizerReservedConcurrency,
    });
  }

  private createAuthorizer(): apigateway.TokenAuthorizer {
    const { config } = this;
    return new apigateway.TokenAuthorizer(this, 'ApiKeyAuthorizer', {
      authorizerName: 'api-key',
      handler: this.authorizerFunction,
      identitySource: apigateway.IdentitySource.header('Authorization'),
      // Any header that is not `Bearer <key>` is refused with 401 (UNAUTHORIZED) by API Gateway
      // itself: a malformed token costs no invocation and leaves no decision in the cache.
      validationRegex: AUTHORIZATION_HEADER_REGEX,
      resultsCacheTtl: Duration.seconds(config.authorizerCacheTtlSeconds),
    });
  }

  /** One function per operation of the manifest, granted its table access, behind its method. */
  private addRoutes(props: PublicApiProps): Record<string, LambdaFunction> {
    const { table, functions } = props;
    const routeFunctions: Record<string, LambdaFunction> = {};
    for (const route of props.routes ?? ROUTES) {
      const fn = functions.create(functionId(route.operationId), {
        entry: route.handler,
        description: `${route.method} ${API_PREFIX}${route.path} (${route.operationId})`,
        ...(route.timeoutSeconds !== undefined && { timeout: Duration.seconds(route.timeoutSeconds) }),
        ...props.routeFunctionOptions?.[route.operationId],
      });
      for (const access of tableAccessOf(route)) table.grant(fn, access);
      this.addMethod(route, fn);
      routeFunctions[route.operationId] = fn;
    }
    return routeFunctions;
  }

  /** The usage plan: a backstop per bucket of keys, behind the WAF limit and the exact limiter. */
  private createUsagePlan(serviceName: string): apigateway.UsagePlan {
    const { config } = this;
    return this.api.addUsagePlan('UsagePlan', {
      name: `${serviceName}-buckets`,
      description: `Backstop per bucket of keys, behind the WAF limit per key and the exact limiter of ${config.rateLimitPerKey} requests per minute per key`,
      throttle: usagePlanBucketThrottle(config),
      apiStages: [{ api: this.api, stage: this.stage }],
    });
  }

  /** The buckets' API keys in a nested stack, and their names in the authorizer's environment. */
  private createUsagePlanBuckets(serviceName: string): UsagePlanBucketStack {
    const bucketStack = new UsagePlanBucketStack(this, 'UsagePlanBuckets', {
      usagePlan: this.usagePlan,
      buckets: this.usagePlanBuckets,
      serviceName,
    });
    this.authorizerFunction.addEnvironment(USAGE_PLAN_KEY_PREFIX_ENV, this.usagePlanBuckets.prefix);
    this.authorizerFunction.addEnvironment(USAGE_PLAN_BUCKETS_ENV, String(this.usagePlanBuckets.count));
    return bucketStack;
  }

  /** WAF rate limits per client address and per API key; the carrier's callback paths are exempt. */
  private createNetworkRateLimit(serviceName: string, props: PublicApiProps): NetworkRateLimit {
    const { config } = this;
    return new NetworkRateLimit(this, 'NetworkRateLimit', {
      stage: this.stage,
      stageName: config.stage,
      limitPerMinute: config.networkRateLimitPerMinute,
      limitPerMinutePerApiKey: apiKeyEdgeLimitPerMinute(config.rateLimitPerKey),
      name: serviceName,
      exemptPathPrefixes: this.providerCallbackPrefixes,
      exemptPathProtection: props.providerCallbackProtection,
    });
  }

  /** `{base_url}` and the public root: the custom domain when configured, else the stage URL. */
  private publicUrls(): { domain?: apigateway.DomainName; baseUrl: string; publicRootUrl: string } {
    const { config } = this;
    if (!config.customDomain) {
      const stack = Stack.of(this);
      return {
        baseUrl: this.api.urlForPath(API_PREFIX),
        publicRootUrl: `https://${this.api.restApiId}.execute-api.${stack.region}.${stack.urlSuffix}/${config.stage}`,
      };
    }
    const domain = new apigateway.DomainName(this, 'Domain', {
      domainName: config.customDomain.domainName,
      certificate: acm.Certificate.fromCertificateArn(this, 'Certificate', config.customDomain.certificateArn),
      endpointType: apigateway.EndpointType.REGIONAL,
      securityPolicy: apigateway.SecurityPolicy.TLS_1_2,
    });
    // The domain answers IPv6 too, like the API. The construct has no property for it yet
    // (CloudFormation does: EndpointConfiguration.IpAddressType). A Route 53 alias of the
    // domain then needs an AAAA record next to the A record (docs/deploy.md).
    (domain.node.defaultChild as apigateway.CfnDomainName).addPropertyOverride(
      'EndpointConfiguration.IpAddressType',
      'dualstack',
    );
    // The domain root maps to the stage: the resources already live under /api/v1, so
    // https://<domain>/api/v1 is {base_url} with no stage name in it.
    domain.addBasePathMapping(this.api, { stage: this.stage });
    return {
      domain,
      baseUrl: `https://${config.customDomain.domainName}${API_PREFIX}`,
      publicRootUrl: `https://${config.customDomain.domainName}`,
    };
  }

  /**
   * Extension point for the carrier's callbacks: a method outside /api/v1 with no API key, since
   * the provider cannot hold one; the handler must verify the provider's request signature. The
   * path must lie under one of `providerCallbackPrefixes` (the WAF exemption covers exactly
   * those). `throttle` caps the method for all callers together, at the stage: an unsigned flood
   * is refused (429) by API Gateway before it costs an invocation, and WAF does not count it.
   */
  addProviderCallback(
    method: HttpMethod,
    path: string,
    fn: IFunction,
    options: { throttle?: MethodThrottle } = {},
  ): apigateway.Method {
    if (path.startsWith(API_PREFIX)) throw new Error(`Provider callbacks live outside ${API_PREFIX}: ${path}`);
    if (!this.providerCallbackPrefixes.some((prefix) => path.startsWith(prefix))) {
      throw new Error(
        `Provider callback ${path} is under none of the declared prefixes ` +
          `(${this.providerCallbackPrefixes.join(', ') || 'none'})`,
      );
    }
    const resource = this.api.root.resourceForPath(path.replace(/^\//, ''));
    const methodResource = resource.addMethod(method, new apigateway.LambdaIntegration(fn), {
      authorizationType: apigateway.AuthorizationType.NONE,
    });
    this.acknowledgeUnauthenticated(
      methodResource,
      'a telephony-provider callback: the provider signs each request and the handler verifies that signature',
    );
    if (options.throttle) this.throttleMethod(method, path, options.throttle);
    return methodResource;
  }

  /**
   * A method setting of the stage for one method. It replaces the stage-wide setting (every method) for
   * that method, so logging is restated: errors only, and never data tracing (it would log the
   * provider's form bodies, which are customers' texts and numbers).
   */
  private throttleMethod(method: HttpMethod, path: string, throttle: MethodThrottle): void {
    const cfnStage = this.stage.node.defaultChild as apigateway.CfnStage;
    const existing = (cfnStage.methodSettings ?? []) as apigateway.CfnStage.MethodSettingProperty[];
    cfnStage.methodSettings = [
      ...existing,
      {
        httpMethod: method,
        // API Gateway's notation for a resource path in a method setting: every / becomes ~1.
        resourcePath: `/${path.replace(/\//g, '~1')}`,
        throttlingRateLimit: throttle.rateLimit,
        throttlingBurstLimit: throttle.burstLimit,
        loggingLevel: apigateway.MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
      },
    ];
  }

  /**
   * Requests API Gateway answered 500 because the authorizer failed or could not be reached.
   * The authorizer's own Lambda `Errors` metric is useless for this: a TOKEN authorizer refuses a
   * bad key by throwing "Unauthorized", so every wrong key counts as a Lambda error.
   */
  metricAuthorizerFailures(): cloudwatch.Metric {
    return this.authorizerFailures;
  }

  private addMethod(route: RouteSpec, fn: LambdaFunction): void {
    const resource = this.api.root.resourceForPath(`${API_PREFIX}${route.path}`.replace(/^\//, ''));
    const authenticated = route.auth === 'apiKey';
    const method = resource.addMethod(route.method, new apigateway.LambdaIntegration(fn), {
      operationName: route.operationId,
      ...(authenticated
        ? {
            authorizer: this.authorizer,
            authorizationType: apigateway.AuthorizationType.CUSTOM,
            apiKeyRequired: this.config.requireUsagePlanKey,
          }
        : { authorizationType: apigateway.AuthorizationType.NONE }),
    });
    if (!authenticated) {
      this.acknowledgeUnauthenticated(
        method,
        `${route.method} ${route.path} needs no API key by the spec (section 5, rule 10)`,
      );
    }
  }

  /**
   * A path that exists answers 405 for the methods it lacks, as the local runtime does. API
   * Gateway would otherwise raise MISSING_AUTHENTICATION_TOKEN (404 here) for them. An `ANY`
   * method only catches what no explicit method takes; a mock integration answers it without
   * invoking anything. No key is needed to learn that a method does not exist.
   */
  private answerOtherMethods(routes: readonly RouteSpec[]): void {
    const byPath = new Map<string, string[]>();
    for (const route of routes) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route.method]);
    const { statusCode, body, headers } = GATEWAY_RESPONSES.methodNotAllowed;
    for (const [path, methods] of byPath) {
      const resource = this.api.root.resourceForPath(`${API_PREFIX}${path}`.replace(/^\//, ''));
      // RFC 9110 requires Allow on a 405.
      const responseHeaders = { ...headers, Allow: methods.join(', ') };
      const headerParameters = Object.fromEntries(
        Object.keys(responseHeaders).map((name) => [`method.response.header.${name}`, true]),
      );
      const integration = new apigateway.MockIntegration({
        requestTemplates: { 'application/json': '{"statusCode": 200}' },
        passthroughBehavior: apigateway.PassthroughBehavior.WHEN_NO_MATCH,
        integrationResponses: [
          {
            statusCode: String(statusCode),
            responseParameters: Object.fromEntries(
              Object.entries(quotedHeaders(responseHeaders)).map(([name, value]) => [
                `method.response.header.${name}`,
                value,
              ]),
            ),
            responseTemplates: { 'application/json': literalJsonTemplate(body) },
          },
        ],
      });
      const method = resource.addMethod('ANY', integration, {
        authorizationType: apigateway.AuthorizationType.NONE,
        methodResponses: [{ statusCode: String(statusCode), responseParameters: headerParameters }],
      });
      this.acknowledgeUnauthenticated(
        method,
        `it only answers 405 for methods ${path} does not have, from a mock integration`,
      );
    }
  }

  private installGatewayResponses(): void {
    const install = (type: apigateway.ResponseType, response: GatewayResponse, keepGatewayStatus = false) => {
      this.api.addGatewayResponse(type.responseType, {
        type,
        // DEFAULT_5XX keeps API Gateway's own status (502, 504): a client may treat a timeout
        // differently from a failure, and the Error body is the same either way.
        ...(!keepGatewayStatus && { statusCode: String(response.statusCode) }),
        responseHeaders: quotedHeaders(response.headers),
        templates: { 'application/json': literalJsonTemplate(response.body) },
      });
    };
    install(apigateway.ResponseType.UNAUTHORIZED, GATEWAY_RESPONSES.unauthorized);
    // Worded by the authorizer's context: a plan without API access, or a scope the key lacks.
    this.api.addGatewayResponse(apigateway.ResponseType.ACCESS_DENIED.responseType, {
      type: apigateway.ResponseType.ACCESS_DENIED,
      statusCode: '403',
      templates: { 'application/json': ACCESS_DENIED_TEMPLATE },
    });
    // API Gateway raises MISSING_AUTHENTICATION_TOKEN (403) for any path or method it has no
    // route for, before any authorizer runs; to a client of a key-authenticated API that is 404.
    install(apigateway.ResponseType.MISSING_AUTHENTICATION_TOKEN, GATEWAY_RESPONSES.notFound);
    install(apigateway.ResponseType.RESOURCE_NOT_FOUND, GATEWAY_RESPONSES.notFound);
    install(apigateway.ResponseType.INVALID_API_KEY, INVALID_USAGE_PLAN_KEY_RESPONSE);
    install(apigateway.ResponseType.THROTTLED, GATEWAY_RESPONSES.throttled);
    install(apigateway.ResponseType.QUOTA_EXCEEDED, GATEWAY_RESPONSES.throttled);
    install(apigateway.ResponseType.REQUEST_TOO_LARGE, GATEWAY_RESPONSES.requestTooLarge);
    install(apigateway.ResponseType.DEFAULT_5XX, GATEWAY_RESPONSES.internal, true);
    this.api.addGatewayResponse(apigateway.ResponseType.DEFAULT_4XX.responseType, {
      type: apigateway.ResponseType.DEFAULT_4XX,
      templates: { 'application/json': DEFAULT_4XX_TEMPLATE },
    });
  }

  private authorizerFailureMetric(): cloudwatch.Metric {
    const metricName = 'AuthorizerFailures';
    const namespace = `${METRIC_NAMESPACE}/${this.config.stage}`;
    this.accessLogGroup.addMetricFilter('AuthorizerFailuresFilter', {
      metricNamespace: namespace,
      metricName,
      filterPattern: logs.FilterPattern.any(
        logs.FilterPattern.stringValue('$.errorResponseType', '=', 'AUTHORIZER_FAILURE'),
        logs.FilterPattern.stringValue('$.errorResponseType', '=', 'AUTHORIZER_CONFIGURATION_ERROR'),
      ),
      metricValue: '1',
      // No datapoint means no failure, so alarms see 0 instead of missing data.
      defaultValue: 0,
    });
    return new cloudwatch.Metric({ namespace, metricName, statistic: 'Sum', period: Duration.minutes(5) });
  }

  private acknowledgeUnauthenticated(method: apigateway.Method, why: string): void {
    for (const id of ['AwsSolutions-APIG4', 'AwsSolutions-COG4']) {
      Validations.of(method).acknowledge({ id, reason: `No authorizer by design: ${why}.` });
    }
  }

  /** cdk-nag findings this construct accepts, each with the reason. */
  private acknowledgeFindings(): void {
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-APIG2',
      reason:
        'Requests are validated by the handlers with the zod schemas of the route manifest, which answer 400 naming ' +
        'the failing field as the spec requires; an API Gateway request validator would answer first with its own ' +
        'body.',
    });
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions-COG4',
      reason:
        'Clients authenticate with API keys (spec section 5), checked by the TOKEN Lambda authorizer on every ' +
        'authenticated method; there are no Cognito users.',
    });
    if (this.config.apiGatewayCloudWatchRole) {
      Validations.of(this.api).acknowledge({
        id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
        reason:
          "API Gateway's account-wide logging role must be able to create and write log groups it names itself " +
          '(execution logs); AWS maintains this policy for exactly that role.',
      });
    }
  }
}

/**
 * The X-Ray sampling rule of the stage. API Gateway asks X-Ray's sampling rules whether to trace
 * each request, and every function behind it (the API's and the carrier callbacks') follows that
 * decision, so this one rule prices tracing per request: `traceSampleRate` of the requests at $5
 * per million traces, with no reservoir. X-Ray's default rule (1 a second, then 5 %) would record
 * almost every request of a quiet stage: for a stage of 1 million requests a month, about $4.60 of
 * traces. The webhook pipeline's and the settlement sweep's functions have no caller that traces:
 * Lambda samples them at its own fixed rate, which no rule changes (docs/deploy.md prices them).
 * Rule names are unique per account and at most 32 characters: `cct-service-<stage>` is.
 */
function traceSamplingRule(scope: Construct, serviceName: string, config: ServiceConfig): xray.CfnSamplingRule {
  return new xray.CfnSamplingRule(scope, 'TraceSampling', {
    samplingRule: {
      ruleName: serviceName,
      // Before X-Ray's default rule (10000); it matches this stage only.
      priority: 1000,
      reservoirSize: 0,
      fixedRate: config.traceSampleRate,
      // API Gateway's service name in X-Ray is `<API name>/<stage>`.
      serviceName: `${serviceName}/${config.stage}`,
      serviceType: 'AWS::ApiGateway::Stage',
      host: '*',
      httpMethod: '*',
      urlPath: '*',
      resourceArn: '*',
      version: 1,
    },
  });
}

/** `listCalls` -> `ListCallsFunction`: stable logical ids, so a deploy never renames a function. */
export function functionId(operationId: string): string {
  return `${operationId.charAt(0).toUpperCase()}${operationId.slice(1)}Function`;
}
