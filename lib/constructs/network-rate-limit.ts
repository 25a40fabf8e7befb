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
  /** Name of the web ACL and prefix of its metric names; unique per stage within account and region. */
  name: string;
  /**
   * Path prefixes (from the API root, e.g. `/carrier/twilio/`) the per-address limit does not
   * count: see `exemptionStatement`.
   */
  exemptPathPrefixes?: readonly string[];
};

/** The window the limit is counted over; with `limitPerMinute` per 60 s this is the spec's "per minute". */
export const WINDOW_SECONDS = 60;

const RULE_NAME = 'PerClientAddressRateLimit';

/**
 * Matches requests under the exempt prefixes, as the path reaches the stage: `/<prefix>...` through
 * a custom domain (mapped at its root), `/<stage>/<prefix>...` through the execute-api URL. The
 * path is URL-decoded and normalised (`//`, `./`, `../` resolved) first, so a request can only be
 * exempt when its real target lies under the prefix: `/carrier/twilio/../../api/v1/calls` is
 * counted like `/api/v1/calls`.
 */
export function exemptionStatement(prefixes: readonly string[], stageName: string): wafv2.CfnWebACL.StatementProperty | undefined {
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

/**
 * The pre-authentication limit per client network, as a WAF web ACL on the stage. WAF counts per
 * source address: an IPv6 client is counted per /128 address, not per /64 network as the spec
 * words it (WAF has no prefix aggregation), so one IPv6 /64 holder can exceed 600/min by rotating
 * addresses. WAF's counting is also approximate (it re-evaluates every few seconds), so a client
 * may get slightly more than the limit before being blocked. The local runtime groups IPv6 by
 * /64 exactly. The key limiter (120/min per key) still applies behind it.
 *
 * Exempt path prefixes (the carrier's callbacks) are not counted at all: the telephony provider
 * posts every organization's callbacks from a few addresses, which one per-address limit would
 * throttle. Their protection is the request signature (checked by the handler) and the stage's
 * method throttle of each callback (PublicApi.addProviderCallback), which caps all callers of a
 * callback together; the trade-off is that an unsigned flood on a callback path can crowd out the
 * provider's genuine callbacks for its duration, instead of being cut per address.
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

    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      name: props.name,
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      description: `At most ${props.limitPerMinute} requests per ${WINDOW_SECONDS} s per client address`,
      visibilityConfig: {
        cloudWatchMetricsEnabled: true,
        metricName: props.name,
        sampledRequestsEnabled: true,
      },
      // The spec's Error shape with the code the service uses for every 429.
      customResponseBodies: {
        [BODY_KEY]: {
          contentType: 'APPLICATION_JSON',
          content: JSON.stringify({
            error: `Too many requests from this network: at most ${props.limitPerMinute} per minute; retry after the number of seconds in Retry-After`,
            code: 'rate_limited',
          }),
        },
      },
      rules: [
        {
          name: RULE_NAME,
          priority: 0,
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
          action: {
            block: {
              customResponse: {
                responseCode: 429,
                customResponseBodyKey: BODY_KEY,
                // A whole window: WAF unblocks once the address's rate over the window falls below the limit.
                responseHeaders: [{ name: 'Retry-After', value: String(WINDOW_SECONDS) }],
              },
            },
          },
          visibilityConfig: {
            cloudWatchMetricsEnabled: true,
            metricName: this.ruleMetricName,
            sampledRequestsEnabled: true,
          },
        },
      ],
    });

    const association = new wafv2.CfnWebACLAssociation(this, 'Association', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
    // The stage ARN is built from the API id and the stage *name*, so CloudFormation would not
    // otherwise wait for the stage to exist before associating.
    association.node.addDependency(props.stage);
  }

  /** Requests blocked by the rate rule (WAF's own metric). */
  metricBlockedRequests(region: string, props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: 'AWS/WAFV2',
      metricName: 'BlockedRequests',
      dimensionsMap: { WebACL: this.webAclName, Rule: this.ruleMetricName, Region: region },
      statistic: 'Sum',
      ...props,
    });
  }
}
