import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';
import {
  DEFAULT_CALLBACK_LIMIT_PER_ADDRESS,
  DEFAULT_CALLBACK_THROTTLE,
} from '../lambdas/contexts/carrier/callback-protection';
import { DEFAULT_USAGE_PLAN_BUCKETS, MAX_USAGE_PLAN_BUCKETS } from '../lambdas/handlers/authorizer/usage-plan-keys';

/**
 * Everything a deployment may vary, in one typed object. `bin/app.ts` fills it from CDK context
 * (`-c key=value` or cdk.json), tests build it directly; constructs never read context themselves,
 * so each one can be tested with exactly the configuration it is given.
 */
export type ServiceConfig = {
  /** Names the API stage, prefixes the stack name and decides the data-safety defaults. */
  stage: string;
  /** How long API Gateway caches an authorizer decision; revocation takes effect within it. 0 disables the cache. */
  authorizerCacheTtlSeconds: number;
  /** Where alarms are e-mailed; without it the topic still exists for other subscribers (chat, paging). */
  alarmEmail?: string;
  logRetention: RetentionDays;
  /**
   * The exact per-key limit the handlers enforce and GET /me reports (spec section 8); WAF's edge limit per key is
   * twice it.
   */
  rateLimitPerKey: number;
  /**
   * How many usage-plan keys (buckets) the stack creates for the authorizer to name: any number of
   * service keys costs the account this many of its 10,000 API Gateway keys, and the buckets' nested
   * stack two resources each of CloudFormation's 500 (lambdas/handlers/authorizer/usage-plan-keys.ts).
   * One abusive key slows the other keys of its bucket until WAF blocks it: 1 in this many.
   */
  usagePlanBuckets: number;
  /**
   * API Gateway's throttle quota of the account in the region (10,000 requests/s by default; 2,500 in some regions);
   * sizes the buckets' throttle.
   */
  regionRequestsPerSecond: number;
  /** Per client address, before authentication (spec section 8), enforced by WAF. */
  networkRateLimitPerMinute: number;
  /**
   * RETAIN unless `-c removalPolicy=destroy` says otherwise, whatever the stage: a first deploy
   * (`cdk deploy` with no context, stage `dev`) must not make a table that a stack deletion erases.
   * A retaining stack also gets termination protection (lib/service-stack.ts).
   */
  removalPolicy: RemovalPolicy;
  /** Deletion protection on the table; on whenever the table is retained. */
  deletionProtection: boolean;
  customDomain?: { domainName: string; certificateArn: string };
  /**
   * Keyed methods require a usage-plan key: the authorizer returns `usageIdentifierKey` (the
   * bucket of the key's id, one of those the stack creates) and API Gateway meters it in the usage
   * plan; off, the usage plan is inert.
   */
  requireUsagePlanKey: boolean;
  /**
   * The Twilio credentials' Secrets Manager secret, by complete ARN (with its 6-character
   * suffix), when the operator manages it outside the stack; otherwise the stack creates one
   * with empty fields for the operator to fill in.
   */
  twilioSecretArn?: string;
  /** Stage throttle of each carrier callback method, for all callers together (the provider). */
  carrierCallbackThrottle: { rateLimit: number; burstLimit: number };
  /** WAF limit per client address and minute on the carrier callback paths, all of them together. */
  carrierCallbackLimitPerAddress: number;
  /** Powertools log level of every function. */
  logLevel: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /**
   * The share of API requests X-Ray records, from 0 to 1: the stage's sampling rule, with no
   * reservoir (lib/constructs/public-api.ts). Each recorded trace costs $5 per million, so the
   * share prices tracing per request (docs/deploy.md, "What a million requests cost"); 1 traces
   * every request (a development stage), 0 none.
   */
  traceSampleRate: number;
  /** Creates the account-wide role API Gateway needs to write execution and access logs. */
  apiGatewayCloudWatchRole: boolean;
  /**
   * Concurrency reserved for the authorizer and for each carrier callback function: every keyed
   * request of an uncached key and every STOP go through them, so they must not wait behind the
   * rest of the account's functions (docs/capacity.md). 0 reserves none.
   */
  authorizerReservedConcurrency: number;
  carrierCallbackReservedConcurrency: number;
};

export const DEFAULT_STAGE = 'dev';

const STAGE_PATTERN = /^[a-z][a-z0-9-]{0,19}$/;

/** A complete secret ARN: partition, region, account, name and the 6 characters Secrets Manager appends. */
const SECRET_ARN_PATTERN =
  /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$/;

/** Retention values CloudWatch Logs accepts; anything else would fail at deploy time, so refuse it at synth. */
const VALID_RETENTION = new Set(Object.values(RetentionDays).filter((v): v is number => typeof v === 'number'));

/**
 * 1 % of API requests traced: a hundred traces per 10,000 requests is enough to see where a slow
 * request's time goes, at $0.05 per million requests (docs/decisions.md, "Tracing, sampled").
 */
export const DEFAULT_TRACE_SAMPLE_RATE = 0.01;

/** Reserved concurrency by default (docs/capacity.md): 100 + 5 callbacks x 20 = 200 of the account's 1,000. */
export const DEFAULT_AUTHORIZER_RESERVED_CONCURRENCY = 100;
export const DEFAULT_CARRIER_CALLBACK_RESERVED_CONCURRENCY = 20;

/** The configuration of a stage when nothing is overridden: data retained, whatever the stage. */
export function defaultConfig(stage: string = DEFAULT_STAGE): ServiceConfig {
  return {
    stage,
    authorizerCacheTtlSeconds: 300,
    logRetention: RetentionDays.ONE_MONTH,
    rateLimitPerKey: 120,
    usagePlanBuckets: DEFAULT_USAGE_PLAN_BUCKETS,
    regionRequestsPerSecond: 10_000,
    networkRateLimitPerMinute: 600,
    removalPolicy: RemovalPolicy.RETAIN,
    deletionProtection: true,
    requireUsagePlanKey: true,
    carrierCallbackThrottle: { ...DEFAULT_CALLBACK_THROTTLE },
    carrierCallbackLimitPerAddress: DEFAULT_CALLBACK_LIMIT_PER_ADDRESS,
    logLevel: 'INFO',
    traceSampleRate: DEFAULT_TRACE_SAMPLE_RATE,
    apiGatewayCloudWatchRole: true,
    authorizerReservedConcurrency: DEFAULT_AUTHORIZER_RESERVED_CONCURRENCY,
    carrierCallbackReservedConcurrency: DEFAULT_CARRIER_CALLBACK_RESERVED_CONCURRENCY,
  };
}

/** Context values arrive as strings from `-c`, as JSON values from cdk.json: accept both. */
function contextString(node: Node, key: string): string | undefined {
  const value: unknown = node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  return String(value);
}

/** A number in [min, max] (a whole one unless `fractional`), or the fallback when the key is absent. */
function contextNumber(
  node: Node,
  key: string,
  fallback: number,
  min: number,
  max: number,
  fractional = false,
): number {
  const raw = contextString(node, key);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!(fractional ? Number.isFinite(value) : Number.isInteger(value)) || value < min || value > max) {
    throw new Error(
      `Context ${key} must be ${fractional ? 'a number' : 'an integer'} from ${min} to ${max}, got "${raw}"`,
    );
  }
  return value;
}

const contextInt = (node: Node, key: string, fallback: number, min: number, max: number): number =>
  contextNumber(node, key, fallback, min, max);

function contextBool(node: Node, key: string, fallback: boolean): boolean {
  const raw = contextString(node, key);
  if (raw === undefined) return fallback;
  if (raw !== 'true' && raw !== 'false') throw new Error(`Context ${key} must be true or false, got "${raw}"`);
  return raw === 'true';
}

function contextStage(node: Node): string {
  const stage = contextString(node, 'stage') ?? DEFAULT_STAGE;
  if (!STAGE_PATTERN.test(stage)) {
    throw new Error(`Context stage must match ${STAGE_PATTERN} (it names the stack and the API stage), got "${stage}"`);
  }
  return stage;
}

function contextLogRetention(node: Node, defaults: ServiceConfig): RetentionDays {
  const logRetention = contextInt(node, 'logRetentionDays', defaults.logRetention, 1, 9999);
  if (!VALID_RETENTION.has(logRetention)) {
    throw new Error(`Context logRetentionDays must be one of ${[...VALID_RETENTION].join(', ')}, got ${logRetention}`);
  }
  return logRetention;
}

function contextCustomDomain(node: Node): ServiceConfig['customDomain'] {
  const domainName = contextString(node, 'domainName');
  const certificateArn = contextString(node, 'certificateArn');
  if ((domainName === undefined) !== (certificateArn === undefined)) {
    throw new Error('Context domainName and certificateArn go together: set both or neither');
  }
  return domainName && certificateArn ? { domainName, certificateArn } : undefined;
}

function contextRemovalPolicy(node: Node, defaults: ServiceConfig): RemovalPolicy {
  const removal = contextString(node, 'removalPolicy');
  if (removal !== undefined && removal !== 'retain' && removal !== 'destroy') {
    throw new Error(`Context removalPolicy must be retain or destroy, got "${removal}"`);
  }
  if (removal === undefined) return defaults.removalPolicy;
  return removal === 'retain' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
}

function contextTwilioSecretArn(node: Node): string | undefined {
  const twilioSecretArn = contextString(node, 'twilioSecretArn');
  if (twilioSecretArn !== undefined && !SECRET_ARN_PATTERN.test(twilioSecretArn)) {
    throw new Error(
      `Context twilioSecretArn must be the complete ARN of a Secrets Manager secret ` +
        `(arn:aws:secretsmanager:<region>:<account>:secret:<name>-<6 characters>), got "${twilioSecretArn}"`,
    );
  }
  return twilioSecretArn;
}

function contextCallbackThrottle(node: Node, defaults: ServiceConfig): ServiceConfig['carrierCallbackThrottle'] {
  // API Gateway accepts up to the account's limit (10,000 per second by default).
  const rateLimit = contextInt(node, 'carrierCallbackRateLimit', defaults.carrierCallbackThrottle.rateLimit, 1, 10_000);
  const burstLimit = contextInt(
    node,
    'carrierCallbackBurstLimit',
    Math.max(defaults.carrierCallbackThrottle.burstLimit, rateLimit),
    1,
    5_000,
  );
  if (burstLimit < rateLimit) {
    throw new Error(
      `Context carrierCallbackBurstLimit (${burstLimit}) must be at least carrierCallbackRateLimit ` + `(${rateLimit})`,
    );
  }
  return { rateLimit, burstLimit };
}

function contextLogLevel(node: Node, defaults: ServiceConfig): ServiceConfig['logLevel'] {
  const logLevel = contextString(node, 'logLevel') ?? defaults.logLevel;
  if (!['DEBUG', 'INFO', 'WARN', 'ERROR'].includes(logLevel)) {
    throw new Error(`Context logLevel must be DEBUG, INFO, WARN or ERROR, got "${logLevel}"`);
  }
  return logLevel as ServiceConfig['logLevel'];
}

/** The limits on requests: the authorizer's cache, the key limiter, the usage plan, the region and WAF. */
function requestLimitsFromContext(node: Node, defaults: ServiceConfig) {
  return {
    // API Gateway accepts 0 (no cache) to 3600 seconds.
    authorizerCacheTtlSeconds: contextInt(
      node,
      'authorizerCacheTtlSeconds',
      defaults.authorizerCacheTtlSeconds,
      0,
      3600,
    ),
    rateLimitPerKey: contextInt(node, 'rateLimitPerKey', defaults.rateLimitPerKey, 1, 100_000),
    // Each bucket is two resources of its nested stack's 500 (CloudFormation's quota per template).
    usagePlanBuckets: contextInt(node, 'usagePlanBuckets', defaults.usagePlanBuckets, 1, MAX_USAGE_PLAN_BUCKETS),
    regionRequestsPerSecond: contextInt(
      node,
      'regionRequestsPerSecond',
      defaults.regionRequestsPerSecond,
      1,
      10_000_000,
    ),
    // WAF rate-based rules accept limits from 10 up.
    networkRateLimitPerMinute: contextInt(
      node,
      'networkRateLimitPerMinute',
      defaults.networkRateLimitPerMinute,
      10,
      2_000_000_000,
    ),
  };
}

/**
 * Lambda keeps at least 100 of the account's concurrency unreserved; the deploy fails, naming the function, when a
 * reservation would take more than that leaves.
 */
function reservedConcurrencyFromContext(node: Node, defaults: ServiceConfig) {
  return {
    authorizerReservedConcurrency: contextInt(
      node,
      'authorizerReservedConcurrency',
      defaults.authorizerReservedConcurrency,
      0,
      10_000,
    ),
    carrierCallbackReservedConcurrency: contextInt(
      node,
      'carrierCallbackReservedConcurrency',
      defaults.carrierCallbackReservedConcurrency,
      0,
      10_000,
    ),
  };
}

/**
 * Reads the configuration from CDK context. Bad values throw here, at synth, with the key's name,
 * instead of surfacing as a failed CloudFormation update half-way through a deploy.
 */
export function configFromContext(node: Node): ServiceConfig {
  const stage = contextStage(node);
  const defaults = defaultConfig(stage);
  const logRetention = contextLogRetention(node, defaults);
  const customDomain = contextCustomDomain(node);
  const removalPolicy = contextRemovalPolicy(node, defaults);
  const twilioSecretArn = contextTwilioSecretArn(node);
  const carrierCallbackThrottle = contextCallbackThrottle(node, defaults);
  const logLevel = contextLogLevel(node, defaults);
  return {
    stage,
    ...requestLimitsFromContext(node, defaults),
    alarmEmail: contextString(node, 'alarmEmail'),
    logRetention,
    removalPolicy,
    // Deletion protection follows the removal policy: a table we mean to keep must also be hard to delete by hand.
    deletionProtection: removalPolicy === RemovalPolicy.RETAIN,
    customDomain,
    requireUsagePlanKey: contextBool(node, 'requireUsagePlanKey', defaults.requireUsagePlanKey),
    twilioSecretArn,
    carrierCallbackThrottle,
    // WAF rate-based rules accept limits from 10 up.
    carrierCallbackLimitPerAddress: contextInt(
      node,
      'carrierCallbackLimitPerAddress',
      defaults.carrierCallbackLimitPerAddress,
      10,
      2_000_000_000,
    ),
    logLevel,
    // X-Ray's FixedRate: a fraction from 0 to 1.
    traceSampleRate: contextNumber(node, 'traceSampleRate', defaults.traceSampleRate, 0, 1, true),
    apiGatewayCloudWatchRole: contextBool(node, 'apiGatewayCloudWatchRole', defaults.apiGatewayCloudWatchRole),
    ...reservedConcurrencyFromContext(node, defaults),
  };
}
