import { join } from 'node:path';
import { CfnOutput, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import type { RouteSpec } from '../lambdas/handlers/http/route-spec';
import { CARRIER_PREFIX, CARRIER_ROUTES, type CarrierRouteSpec } from '../lambdas/handlers/carrier/routes';
import {
  callbackRateLimitRefusal,
  TWILIO_SIGNATURE_HEADER,
  TWILIO_SIGNATURE_PATTERN,
  UNSIGNED_CALLBACK_REFUSAL,
} from '../lambdas/contexts/carrier/callback-protection';
import type { ServiceConfig } from './config';
import { Carrier, CARRIER_SENDER_FUNCTION_OPTIONS } from './constructs/carrier';
import { FunctionFactory, REPO_ROOT } from './constructs/function-factory';
import { Observability } from './constructs/observability';
import { METRIC_NAMESPACE, PublicApi } from './constructs/public-api';
import { ScheduledTexts } from './constructs/scheduled-texts';
import { ServiceTable } from './constructs/table';
import { TextSettlement } from './constructs/text-settlement';
import { WebhookPipeline } from './constructs/webhook-pipeline';
import {
  CARRIER_CALLBACK_TABLE_ACCESS,
  SCHEDULED_TEXTS_TABLE_ACCESS,
  TEXT_SETTLEMENT_TABLE_ACCESS,
  WEBHOOK_ROUTER_TABLE_ACCESS,
  WEBHOOK_SENDER_TABLE_ACCESS,
} from './table-access';
import { ROUTER_FILTER_PATTERNS } from '../lambdas/contexts/webhooks/filter-criteria';
import { ENDPOINTS_DISABLED_METRIC } from '../lambdas/contexts/webhooks/health-metrics';
import { SETTLEMENT_FAILED_METRIC } from '../lambdas/contexts/texting/settlement-grace';
import { LATE_AFTER_SECONDS, SCHEDULED_TEXT_LATENESS_METRIC } from '../lambdas/handlers/scheduled/firing-metrics';
import { writeReferencePage } from '../lambdas/handlers/api/openapi/reference-page';
import { REFERENCE_PAGE_FILE } from '../lambdas/handlers/api/openapi/reference-page-file';

/** The functions' Powertools service name: the `service` dimension of their business metrics. */
const SERVICE_NAME = 'cct-service';

/**
 * Where synth builds the reference page before the CDK copies it into GET /docs's bundle (git ignores node_modules).
 */
const REFERENCE_PAGE_BUILD_DIR = join(REPO_ROOT, 'node_modules', '.cache', 'cct-service', 'reference-page');

/** Where the webhook handlers live and which stream records reach the router. */
export type WebhookSources = {
  routerEntry: string;
  senderEntry: string;
  routerFilterPatterns: readonly Record<string, unknown>[];
};

export type ServiceStackProps = StackProps & {
  config: ServiceConfig;
  /** Narrows the served operations (tests); the route manifest by default. */
  routes?: readonly RouteSpec[];
  /**
   * The webhook pipeline (table stream -> router -> SQS -> sender): the real handlers by default; `false` leaves it out
   * (tests).
   */
  webhooks?: WebhookSources | false;
  /** The carrier's callback routes: the carrier route manifest by default. */
  carrierRoutes?: readonly CarrierRouteSpec[];
};

/** The service's own webhook handlers and the stream records that may raise an event. */
export const WEBHOOK_SOURCES: WebhookSources = {
  routerEntry: 'lambdas/handlers/webhooks/router.ts',
  senderEntry: 'lambdas/handlers/webhooks/sender.ts',
  routerFilterPatterns: ROUTER_FILTER_PATTERNS,
};

/**
 * The whole service in one stack, kept thin: it only composes the parts and publishes the outputs
 * an operator and the admin CLI need. Each part is a construct with its own props: table,
 * functions, public API, carrier (the Twilio secret, the provider callbacks and the sender's
 * wiring), observability and the webhook pipeline.
 */
export class ServiceStack extends Stack {
  readonly config: ServiceConfig;
  readonly table: ServiceTable;
  readonly functions: FunctionFactory;
  readonly api: PublicApi;
  readonly observability: Observability;
  readonly carrier: Carrier;
  readonly textSettlement: TextSettlement;
  readonly scheduledTexts: ScheduledTexts;
  readonly webhooks?: WebhookPipeline;

  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    // A stack that keeps data is hard to delete by mistake: CloudFormation refuses to delete it
    // until termination protection is turned off (docs/deploy.md, "Removing a stage").
    super(scope, id, { terminationProtection: props.config.removalPolicy === RemovalPolicy.RETAIN, ...props });
    const { config } = props;
    this.config = config;

    this.table = new ServiceTable(this, 'Data', {
      removalPolicy: config.removalPolicy,
      deletionProtection: config.deletionProtection,
    });
    this.functions = this.createFunctions();
    this.api = this.createApi(props);
    this.carrier = this.createCarrier(props);
    this.textSettlement = new TextSettlement(this, 'TextSettlement', {
      table: this.table,
      functions: this.functions,
      entry: 'lambdas/handlers/scheduled/settle-texts.ts',
      tableAccess: TEXT_SETTLEMENT_TABLE_ACCESS,
    });
    this.scheduledTexts = new ScheduledTexts(this, 'ScheduledTexts', {
      table: this.table,
      functions: this.functions,
      entry: 'lambdas/handlers/scheduled/fire-scheduled-texts.ts',
      tableAccess: SCHEDULED_TEXTS_TABLE_ACCESS,
      carrier: this.carrier,
    });

    this.observability = new Observability(this, 'Observability', {
      stage: config.stage,
      alarmEmail: config.alarmEmail,
      api: this.api,
      table: this.table,
    });
    this.monitorFunctions();
    const webhookSources = props.webhooks ?? WEBHOOK_SOURCES;
    if (webhookSources) this.webhooks = this.createWebhooks(webhookSources);
    this.addOutputs();
  }

  /** The functions' factory, with the environment every function shares. */
  private createFunctions(): FunctionFactory {
    const { config } = this;
    return new FunctionFactory(this, 'Functions', {
      environment: {
        TABLE_NAME: this.table.tableName,
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        // The functions' business metrics, next to the access-log metrics of the same stage.
        POWERTOOLS_METRICS_NAMESPACE: `${METRIC_NAMESPACE}/${config.stage}`,
        RATE_LIMIT_PER_KEY: String(config.rateLimitPerKey),
      },
      logRetention: config.logRetention,
      removalPolicy: config.removalPolicy,
      logLevel: config.logLevel,
    });
  }

  /** The public API, with the carrier's callback prefix exempt from the WAF limits and protected by signature. */
  private createApi(props: ServiceStackProps): PublicApi {
    const { config } = this;
    return new PublicApi(this, 'PublicApi', {
      config,
      table: this.table,
      functions: this.functions,
      routes: props.routes,
      routeFunctionOptions: {
        // POST /messages reads the Twilio secret at init, so its bundle carries the preload.
        sendMessage: CARRIER_SENDER_FUNCTION_OPTIONS,
        // GET /docs serves the page built now from the committed document and the installed renderer.
        getApiReference: { files: { [REFERENCE_PAGE_FILE]: writeReferencePage(REFERENCE_PAGE_BUILD_DIR) } },
      },
      providerCallbackPrefixes: [`${CARRIER_PREFIX}/`],
      providerCallbackProtection: {
        signatureHeader: TWILIO_SIGNATURE_HEADER,
        signaturePattern: TWILIO_SIGNATURE_PATTERN,
        limitPerMinutePerAddress: config.carrierCallbackLimitPerAddress,
        unsignedRefusal: UNSIGNED_CALLBACK_REFUSAL,
        rateLimitedRefusal: callbackRateLimitRefusal(config.carrierCallbackLimitPerAddress),
      },
    });
  }

  /** The carrier's secret and callbacks, wired to the send function when the API has one. */
  private createCarrier(props: ServiceStackProps): Carrier {
    const { config } = this;
    const carrier = new Carrier(this, 'Carrier', {
      api: this.api,
      table: this.table,
      functions: this.functions,
      routes: props.carrierRoutes ?? CARRIER_ROUTES,
      tableAccess: CARRIER_CALLBACK_TABLE_ACCESS,
      throttle: config.carrierCallbackThrottle,
      twilioSecretArn: config.twilioSecretArn,
      removalPolicy: config.removalPolicy,
      reservedConcurrency: config.carrierCallbackReservedConcurrency,
    });
    const sender = this.api.routeFunctions.sendMessage;
    if (sender) carrier.connectSender(sender);
    return carrier;
  }

  /** Metrics and alarms of every function of the API, the carrier and the settlement sweep. */
  private monitorFunctions(): void {
    this.observability.monitorFunction('Authorizer', this.api.authorizerFunction, { alarmOnErrors: false });
    for (const [operationId, fn] of Object.entries(this.api.routeFunctions)) {
      this.observability.monitorFunction(operationId, fn);
    }
    for (const [operationId, fn] of Object.entries(this.carrier.callbackFunctions)) {
      this.observability.monitorFunction(operationId, fn);
    }
    this.observability.monitorFunction('SettleTexts', this.textSettlement.sweeper);
    // A text the sweep skipped stays charged until a run settles it: someone must look at why.
    this.observability.monitorBusinessCount('TextsSettlementFailed', {
      namespace: `${METRIC_NAMESPACE}/${this.config.stage}`,
      metricName: SETTLEMENT_FAILED_METRIC,
      service: SERVICE_NAME,
      description:
        'The settlement sweep could not fail and refund a text whose carrier outcome stayed unknown and skipped it ' +
        '(the SettleTexts log names the organization, the message and the error); each run tries it again',
    });
    this.monitorScheduledTexts();
  }

  /** The function that fires scheduled texts, and the spec's promise: each goes out within a minute after its time. */
  private monitorScheduledTexts(): void {
    this.observability.monitorFunction('FireScheduledTexts', this.scheduledTexts.firer);
    this.observability.monitorBusinessMaximum('ScheduledTextsLate', {
      namespace: `${METRIC_NAMESPACE}/${this.config.stage}`,
      metricName: SCHEDULED_TEXT_LATENESS_METRIC,
      service: SERVICE_NAME,
      threshold: LATE_AFTER_SECONDS,
      description:
        'A scheduled text went out more than a minute after its sendAt: a minute held more texts than one run ' +
        'fires, the carrier slowed the runs down, or runs failed (FireScheduledTexts errors and throttles; ' +
        'docs/capacity.md, "Scheduled texts")',
    });
  }

  /** The webhook pipeline (table stream -> router -> SQS -> sender) and its alarms. */
  private createWebhooks(webhookSources: WebhookSources): WebhookPipeline {
    const { config } = this;
    const webhooks = new WebhookPipeline(this, 'Webhooks', {
      table: this.table,
      functions: this.functions,
      ...webhookSources,
      routerTableAccess: WEBHOOK_ROUTER_TABLE_ACCESS,
      senderTableAccess: WEBHOOK_SENDER_TABLE_ACCESS,
    });
    this.observability.monitorFunction('WebhookRouter', webhooks.router);
    this.observability.monitorStreamConsumer('WebhookRouter', webhooks.router);
    this.observability.monitorFunction('WebhookSender', webhooks.sender);
    this.observability.monitorDeadLetterQueue('WebhookDeadLetters', webhooks.deadLetterQueue);
    this.observability.monitorDeadLetterQueue('WebhookRouterFailures', webhooks.routerFailures);
    // The sender disables an endpoint that answered 410 or failed for 5 days: an integrator is missing events.
    this.observability.monitorBusinessCount('WebhookEndpointsDisabled', {
      namespace: `${METRIC_NAMESPACE}/${config.stage}`,
      metricName: ENDPOINTS_DISABLED_METRIC,
      service: SERVICE_NAME,
      description:
        'The webhook sender disabled an endpoint (it answered 410 Gone, or every attempt failed for 5 days): ' +
        '`webhook list` shows which and why; `webhook enable` then `webhook recover` once it is fixed',
    });
    return webhooks;
  }

  /** What an operator and the admin CLI read from the stack. */
  private addOutputs(): void {
    const { config } = this;
    new CfnOutput(this, 'ApiBaseUrl', { value: this.api.baseUrl, description: '{base_url} of the spec' });
    new CfnOutput(this, 'TableName', {
      value: this.table.tableName,
      description: 'The single DynamoDB table (admin CLI)',
    });
    new CfnOutput(this, 'ApiId', { value: this.api.api.restApiId });
    new CfnOutput(this, 'UsagePlanId', {
      value: this.api.usagePlan.usagePlanId,
      description: 'Usage plan of the API Gateway keys (buckets) that meter the service keys',
    });
    new CfnOutput(this, 'Stage', { value: config.stage });
    new CfnOutput(this, 'TwilioSecretArn', {
      value: this.carrier.secret.secretArn,
      description: 'Secrets Manager secret holding {"accountSid","authToken"} of Twilio (docs/deploy.md)',
    });
    new CfnOutput(this, 'CarrierCallbackBaseUrl', {
      value: this.carrier.publicBaseUrl,
      description: `Twilio's callback URLs are this followed by ${CARRIER_PREFIX}/... (docs/deploy.md)`,
    });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.observability.alarmTopic.topicArn });
    if (this.api.domain) {
      new CfnOutput(this, 'ApiDomainTarget', {
        value: this.api.domain.domainNameAliasDomainName,
        description: `Point a CNAME or alias record of ${config.customDomain?.domainName} here`,
      });
    }
  }
}
