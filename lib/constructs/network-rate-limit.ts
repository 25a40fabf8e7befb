import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';

export type NetworkRateLimitProps = {
  /** The API Gateway stage to protect. */
  stage: apigateway.Stage;
  /** The stage's name as a literal (the path of an execute-api URL starts with it). */
  stageName: string;
  /** Requests per client address per minute (spec section 8: 600). */
  limitPerMinute: number;
  /**
   * Requests per API key (the `Authorization` header) per minute, counted at the edge; see
   * `apiKeyRule`. Absent: no such rule.
   */
  limitPerMinutePerApiKey?: number;
  /** Name of the web ACL and prefix of its metric names; unique per stage within account and region. */
  name: string;
  /**
   * Path prefixes (from the API root, e.g. `/carrier/twilio/`) the per-address limit does not
   * count: see `exemptionStatement`.
   */
  exemptPathPrefixes?: readonly string[];
  /**
   * The exempt paths' own edge rules (the carrier's callbacks): refuse a request whose signature
   * header is missing or cannot be a signature, and limit each address separately from the API.
   */
  exemptPathProtection?: ExemptPathProtection;
};

export type ExemptPathProtection = {
  /** Lower-case header name, e.g. `x-twilio-signature`. */
  signatureHeader: string;
  /** Regular expression a genuine header value matches (WAF regex syntax). */
  signaturePattern: string;
  /** Requests per address and minute to the exempt paths, all of them together. */
  limitPerMinutePerAddress: number;
  /** The bodies (the contract's Error shape) of the 403 for a missing signature and of the 429. */
  unsignedRefusal: { error: string; code: string };
  rateLimitedRefusal: { error: string; code: string };
};

/** The window the limit is counted over; with `limitPerMinute` per 60 s this is the spec's "per minute". */
export const WINDOW_SECONDS = 60;

const RULE_NAME = 'PerClientAddressRateLimit';
export const API_KEY_RULE_NAME = 'PerApiKeyRateLimit';
export const UNSIGNED_CALLBACK_RULE_NAME = 'CallbackWithoutSignature';
export const CALLBACK_PER_ADDRESS_RULE_NAME = 'CallbackPerClientAddressRateLimit';

/**
 * Matches requests under the exempt prefixes, as the path reaches the stage: `/<prefix>...` through
 * a custom domain (mapped at its root), `/<stage>/<prefix>...` through the execute-api URL. The
 * path is URL-decoded and normalised (`//`, `./`, `../` resolved) first, so a request can only be
 * exempt when its real target lies under the prefix: `/carrier/twilio/../../api/v1/calls` is
 * counted like `/api/v1/calls`.
 */
export function exemptionStatement(
  prefixes: readonly string[],
  stageName: string,
): wafv2.CfnWebACL.StatementProperty | undefined {
  const startsWith = (searchString: string): wafv2.CfnWebACL.StatementProperty => ({
    byteMatchStatement: {
      fieldToMatch: { uriPath: {} },
      positionalConstraint: 'STARTS_WITH',
      searchString,
      textTransformations: [
        { priority: 0, type: 'URL_DECODE' },
        { priority: 1, type: 'NORMALIZE_PATH' },
      ],
    },
  });
  const statements = prefixes.flatMap((prefix) => [startsWith(prefix), startsWith(`/${stageName}${prefix}`)]);
  if (statements.length === 0) return undefined;
  return statements.length === 1 ? statements[0] : { orStatement: { statements } };
}
const BODY_KEY = 'rateLimited';
const API_KEY_BODY_KEY = 'apiKeyRateLimited';
const CALLBACK_RATE_BODY_KEY = 'callbackRateLimited';
const UNSIGNED_BODY_KEY = 'callbackUnsigned';

/**
 * Every rate-based rule's answer: 429 with the body named by `bodyKey` and `Retry-After` of a whole
 * window (WAF unblocks once the rate over the window falls below the limit).
 */
const rateLimitedBlock = (bodyKey: string): wafv2.CfnWebACL.RuleActionProperty => ({
  block: {
    customResponse: {
      responseCode: 429,
      customResponseBodyKey: bodyKey,
      responseHeaders: [{ name: 'Retry-After', value: String(WINDOW_SECONDS) }],
    },
  },
});

/**
 * Metrics, and no sampled requests: WAF keeps a sample's headers for three hours, readable by anyone
 * allowed `wafv2:GetSampledRequests`, and every API request's `Authorization` header is its API key.
 */
const SAMPLED_REQUESTS = false;

const visibility = (metricName: string): wafv2.CfnWebACL.VisibilityConfigProperty => ({
  cloudWatchMetricsEnabled: true,
  metricName,
  sampledRequestsEnabled: SAMPLED_REQUESTS,
});

/**
 * The exempt paths' rules, evaluated before the per-address API limit. First the signature's
 * shape: an unsigned flood is refused here, at the edge, and never reaches the throttle it would
 * share with the provider's genuine callbacks. Then a per-address limit of their own, so one
 * address sending forged signatures is cut off without counting the provider's addresses.
 */
function exemptPathRules(
  exempt: wafv2.CfnWebACL.StatementProperty,
  protection: ExemptPathProtection,
  name: string,
): wafv2.CfnWebACL.RuleProperty[] {
  return [
    {
      name: UNSIGNED_CALLBACK_RULE_NAME,
      priority: 0,
      statement: {
        andStatement: {
          statements: [
            exempt,
            {
              notStatement: {
                statement: {
                  // A missing header matches no statement on it, so the NOT holds and the request is blocked.
                  regexMatchStatement: {
                    fieldToMatch: { singleHeader: { Name: protection.signatureHeader } },
                    regexString: protection.signaturePattern,
                    textTransformations: [{ priority: 0, type: 'NONE' }],
                  },
                },
              },
            },
          ],
        },
      },
      action: { block: { customResponse: { responseCode: 403, customResponseBodyKey: UNSIGNED_BODY_KEY } } },
      visibilityConfig: visibility(`${name}-${UNSIGNED_CALLBACK_RULE_NAME}`),
    },
    {
      name: CALLBACK_PER_ADDRESS_RULE_NAME,
      priority: 1,
      statement: {
        rateBasedStatement: {
          limit: protection.limitPerMinutePerAddress,
          evaluationWindowSec: WINDOW_SECONDS,
          aggregateKeyType: 'IP',
          scopeDownStatement: exempt,
        },
      },
      action: rateLimitedBlock(CALLBACK_RATE_BODY_KEY),
      visibilityConfig: visibility(`${name}-${CALLBACK_PER_ADDRESS_RULE_NAME}`),
    },
  ];
}

/**
 * The limit per API key at the edge: a rate-based rule aggregated on the `Authorization` header
 * (a custom aggregation key), so any number of keys is counted, each on its own, before API
 * Gateway: a flood on one key is refused here without an authorizer or function invocation. The
 * header is lower-cased and its white space compressed first, so writing `bearer` or two spaces
 * does not make another counter (the authorizer accepts both spellings); keys themselves are
 * random enough that two never meet once lower-cased. A request without the header is not
 * counted (the per-address rule still is). WAF's count is approximate and reacts within about
 * 30 s; the exact limit stays the handlers'.
 */
function apiKeyRule(limitPerMinute: number, priority: number, name: string): wafv2.CfnWebACL.RuleProperty {
  return {
    name: API_KEY_RULE_NAME,
    priority,
    statement: {
      rateBasedStatement: {
        limit: limitPerMinute,
        evaluationWindowSec: WINDOW_SECONDS,
        aggregateKeyType: 'CUSTOM_KEYS',
        customKeys: [
          {
            header: {
              name: 'authorization',
              textTransformations: [
                { priority: 0, type: 'LOWERCASE' },
                { priority: 1, type: 'COMPRESS_WHITE_SPACE' },
              ],
            },
          },
        ],
      },
    },
    action: rateLimitedBlock(API_KEY_BODY_KEY),
    visibilityConfig: visibility(`${name}-${API_KEY_RULE_NAME}`),
  };
}

/** The spec's Error shape with the code the service uses for every 429, one body per rule that blocks. */
function responseBodies(
  props: NetworkRateLimitProps,
  withCallbackRules: boolean,
): Record<string, wafv2.CfnWebACL.CustomResponseBodyProperty> {
  return {
    [BODY_KEY]: {
      contentType: 'APPLICATION_JSON',
      content: JSON.stringify({
        error: `Too many requests from this network: at most ${props.limitPerMinute} per minute; retry after the number of seconds in Retry-After`,
        code: 'rate_limited',
      }),
    },
    ...(props.limitPerMinutePerApiKey !== undefined && {
      [API_KEY_BODY_KEY]: {
        contentType: 'APPLICATION_JSON',
        content: JSON.stringify({
          error: 'Too many requests with this API key; retry after the number of seconds in Retry-After',
          code: 'rate_limited',
        }),
      },
    }),
    ...(withCallbackRules && {
      [CALLBACK_RATE_BODY_KEY]: {
        contentType: 'APPLICATION_JSON',
        content: JSON.stringify(props.exemptPathProtection?.rateLimitedRefusal),
      },
      [UNSIGNED_BODY_KEY]: {
        contentType: 'APPLICATION_JSON',
        content: JSON.stringify(props.exemptPathProtection?.unsignedRefusal),
      },
    }),
  };
}

/**
 * The pre-authentication limit per client network, as a WAF web ACL on the stage. WAF counts per
 * source address: an IPv6 client is counted per /128 address, not per /64 network as the spec
 * words it (WAF has no prefix aggregation), so one IPv6 /64 holder can exceed 600/min by rotating
 * addresses. WAF's counting is also approximate (it re-evaluates every few seconds), so a client
 * may get slightly more than the limit before being blocked. The local runtime groups IPv6 by
 * /64 exactly. The key limiter (120/min per key) still applies behind it.
 *
 * Exempt path prefixes (the carrier's callbacks) are not counted by that limit: the telephony
 * provider posts every organization's callbacks from a pool of addresses, which the API's limit
 * would throttle. They get rules of their own instead (`exemptPathProtection`): an unsigned
 * request is refused here, before API Gateway's throttle of the callback method, and each address
 * has a separate, higher limit; behind them the method throttle (PublicApi.addProviderCallback)
 * and the function's signature check. See lambdas/contexts/carrier/callback-protection.ts.
 */
export class NetworkRateLimit extends Construct {
  readonly webAcl: wafv2.CfnWebACL;
  readonly ruleMetricName: string;
  private readonly webAclName: string;

  constructor(scope: Construct, id: string, props: NetworkRateLimitProps) {
    super(scope, id);
    this.webAclName = props.name;
    this.ruleMetricName = `${props.name}-${RULE_NAME}`;
    const exempt = exemptionStatement(props.exemptPathPrefixes ?? [], props.stageName);
    const exemptRules =
      exempt && props.exemptPathProtection ? exemptPathRules(exempt, props.exemptPathProtection, props.name) : [];

    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      name: props.name,
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      description: `At most ${props.limitPerMinute} requests per ${WINDOW_SECONDS} s per client address`,
      visibilityConfig: visibility(props.name),
      customResponseBodies: responseBodies(props, exemptRules.length > 0),
      rules: this.rules(props, exempt, exemptRules),
    });

    const association = new wafv2.CfnWebACLAssociation(this, 'Association', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
    // The stage ARN is built from the API id and the stage *name*, so CloudFormation would not
    // otherwise wait for the stage to exist before associating.
    association.node.addDependency(props.stage);
  }

  /** The exempt paths' own rules, then the per-address limit (outside them), then the per-key limit. */
  private rules(
    props: NetworkRateLimitProps,
    exempt: wafv2.CfnWebACL.StatementProperty | undefined,
    exemptRules: wafv2.CfnWebACL.RuleProperty[],
  ): wafv2.CfnWebACL.RuleProperty[] {
    return [
      ...exemptRules,
      {
        name: RULE_NAME,
        priority: exemptRules.length,
        statement: {
          rateBasedStatement: {
            limit: props.limitPerMinute,
            evaluationWindowSec: WINDOW_SECONDS,
            // The caller's source address as API Gateway sees it (no proxy in front).
            aggregateKeyType: 'IP',
            // Only requests outside the exempt prefixes are counted (and blocked).
            ...(exempt && { scopeDownStatement: { notStatement: { statement: exempt } } }),
          },
        },
        action: rateLimitedBlock(BODY_KEY),
        visibilityConfig: visibility(this.ruleMetricName),
      },
      ...(props.limitPerMinutePerApiKey === undefined
        ? []
        : [apiKeyRule(props.limitPerMinutePerApiKey, exemptRules.length + 1, props.name)]),
    ];
  }

  /** Requests blocked by the API's per-address rule, or by the named rule (WAF's own metric). */
  metricBlockedRequests(
    region: string,
    props: cloudwatch.MetricOptions = {},
    ruleName: string = RULE_NAME,
  ): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: 'AWS/WAFV2',
      metricName: 'BlockedRequests',
      dimensionsMap: { WebACL: this.webAclName, Rule: `${this.webAclName}-${ruleName}`, Region: region },
      statistic: 'Sum',
      ...props,
    });
  }
}
