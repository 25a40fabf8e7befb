import { SecretValue, Validations, type RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { carrierRoutes, type CarrierRouteSpec } from '../../lambdas/handlers/carrier/routes';
import type { FunctionFactory, FunctionSpec } from './function-factory';
import { functionId, type MethodThrottle, type PublicApi, type RouteFunctionOptions } from './public-api';
import type { ServiceTable, TableAccess } from './table';

/**
 * The module that reads the Twilio secret while a function initialises (top-level await in the
 * ES module bundle); every function that reads the secret is bundled with it.
 */
export const TWILIO_SECRET_PRELOAD = 'lambdas/contexts/carrier/twilio-secret-preload.ts';

/** What the sending function (POST /messages) needs at bundling time: the secret's preload. */
export const CARRIER_SENDER_FUNCTION_OPTIONS: RouteFunctionOptions = { preload: [TWILIO_SECRET_PRELOAD] };

/**
 * The secret's shape, with empty fields: what the stack stores when it creates the secret, for
 * the operator to fill in (`aws secretsmanager put-secret-value`, docs/deploy.md). CloudFormation
 * only writes it when the secret is created, and again only if this value changes in the
 * template, which would overwrite the real credentials: never change it.
 */
export const TWILIO_SECRET_TEMPLATE = JSON.stringify({ accountSid: '', authToken: '' });

export type CarrierProps = {
  api: PublicApi;
  table: ServiceTable;
  functions: FunctionFactory;
  /** One function and one POST method per entry (the carrier route manifest). */
  routes: readonly CarrierRouteSpec[];
  /** What each callback's function does to the table, by operationId (lib/table-access.ts). */
  tableAccess: Readonly<Record<string, TableAccess>>;
  /** Stage throttle of each callback method. */
  throttle: MethodThrottle;
  /** An existing secret (complete ARN); without it the construct creates one. */
  twilioSecretArn?: string;
  /** Applied to a secret the construct creates. */
  removalPolicy: RemovalPolicy;
  /** Concurrency reserved for each callback function (0: none): a STOP must not wait for other functions. */
  reservedConcurrency: number;
};

/**
 * The carrier side in AWS: the Twilio credentials' secret, one function per provider callback
 * (signed, form-encoded POSTs under /carrier/twilio, outside /api/v1 and without an API key),
 * and the wiring of the function that sends texts. Every function that talks to Twilio or checks
 * its signatures reads the one secret, at init and then through a cache
 * (lambdas/contexts/carrier/internal/twilio-secret.ts).
 */
export class Carrier extends Construct {
  readonly secret: secretsmanager.ISecret;
  /** The callback functions, by operationId of the carrier route manifest. */
  readonly callbackFunctions: Readonly<Record<string, LambdaFunction>>;
  /** The root Twilio's callback URLs start with; the handlers check signatures against it. */
  readonly publicBaseUrl: string;

  constructor(scope: Construct, id: string, props: CarrierProps) {
    super(scope, id);
    this.publicBaseUrl = props.api.publicRootUrl;

    if (props.twilioSecretArn) {
      this.secret = secretsmanager.Secret.fromSecretCompleteArn(this, 'TwilioCredentials', props.twilioSecretArn);
    } else {
      const secret = new secretsmanager.Secret(this, 'TwilioCredentials', {
        description:
          'Twilio credentials of the carrier side, as JSON: {"accountSid": "AC...", "authToken": "..."} ' +
          '(docs/deploy.md)',
        secretStringValue: SecretValue.unsafePlainText(TWILIO_SECRET_TEMPLATE),
        removalPolicy: props.removalPolicy,
      });
      Validations.of(secret).acknowledge({
        id: 'AwsSolutions-SMG4',
        reason:
          'Twilio issues these credentials: a new Auth Token is created and promoted in the Twilio console, which a ' +
          'rotation function cannot do without the credentials it rotates. The operator rotates them by hand ' +
          '(docs/deploy.md) and the functions re-read the secret within 5 minutes.',
      });
      this.secret = secret;
    }

    const callbackFunctions: Record<string, LambdaFunction> = {};
    for (const route of props.routes) {
      const access = props.tableAccess[route.operationId];
      if (!access) throw new Error(`Carrier route ${route.operationId} has no table access (lib/table-access.ts)`);
      const fn = props.functions.create(functionId(route.operationId), {
        ...this.functionSpec(route),
        reservedConcurrency: props.reservedConcurrency,
      });
      props.table.grant(fn, access);
      this.grantSecretRead(fn);
      props.api.addProviderCallback(route.method, route.path, fn, { throttle: props.throttle });
      callbackFunctions[route.operationId] = fn;
    }
    this.callbackFunctions = callbackFunctions;
  }

  /**
   * Makes `fn` (POST /messages, bundled with CARRIER_SENDER_FUNCTION_OPTIONS) send through Twilio
   * with the secret's credentials, asking for status callbacks at this stack's callback URL.
   */
  connectSender(fn: LambdaFunction): void {
    fn.addEnvironment('CARRIER', 'twilio');
    fn.addEnvironment('TWILIO_SECRET_ARN', this.secret.secretArn);
    fn.addEnvironment('TWILIO_STATUS_CALLBACK_URL', `${this.publicBaseUrl}${carrierRoutes.twilioSmsStatus.path}`);
    this.grantSecretRead(fn);
  }

  private functionSpec(route: CarrierRouteSpec): FunctionSpec {
    return {
      entry: route.handler,
      description: `${route.method} ${route.path} (${route.operationId})`,
      preload: [TWILIO_SECRET_PRELOAD],
      environment: { PUBLIC_BASE_URL: this.publicBaseUrl, TWILIO_SECRET_ARN: this.secret.secretArn },
    };
  }

  /**
   * GetSecretValue on this one secret, nothing else: `secret.grantRead` would add DescribeSecret,
   * which the functions never call. The secret uses the account's `aws/secretsmanager` key, which
   * Secrets Manager uses on the caller's behalf, so no KMS grant is needed.
   */
  private grantSecretRead(fn: LambdaFunction): void {
    fn.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [this.secret.secretArn] }),
    );
  }
}
