import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ROUTE_SCOPES_ENV } from '../../lambdas/handlers/authorizer/policy';
import { DEFAULT_USAGE_PLAN_BUCKETS } from '../../lambdas/handlers/authorizer/usage-plan-keys';
import { ROUTES } from '../../lambdas/handlers/api/routes';
import { logicalIdOf, synth } from './support';

/** The logical ids of the functions the factory made (every function of the service). */
const factoryFunctionIds = ({ stack }: ReturnType<typeof synth>): string[] =>
  stack.functions.functions.map((fn) => logicalIdOf(stack, fn)).sort();

type FunctionProps = {
  Runtime: string;
  Architectures: string[];
  TracingConfig: { Mode: string };
  MemorySize: number;
  Timeout: number;
  Environment: { Variables: Record<string, unknown> };
  LoggingConfig: { LogGroup: { Ref: string } };
};

const functionsOf = (template: ReturnType<typeof synth>['template']) =>
  Object.values(template.findResources('AWS::Lambda::Function')).map((f) => f.Properties as FunctionProps);

/** One configuration for two tests: another log level and limit, and no reserved concurrency. */
const TUNED = {
  logLevel: 'DEBUG',
  rateLimitPerKey: 200,
  authorizerReservedConcurrency: 0,
  carrierCallbackReservedConcurrency: 0,
} as const;

describe('the function factory', () => {
  it('runs every function on Node.js 24 on arm64 with active tracing', () => {
    const synthesized = synth();
    const { template } = synthesized;

    const functions = functionsOf(template);

    // Every function of the template comes from the factory (none made another way).
    expect(Object.keys(template.findResources('AWS::Lambda::Function')).sort()).toEqual(
      factoryFunctionIds(synthesized),
    );
    for (const fn of functions) {
      expect(fn.Runtime).toBe('nodejs24.x');
      expect(fn.Architectures).toEqual(['arm64']);
      expect(fn.TracingConfig).toEqual({ Mode: 'Active' });
    }
  });

  it('gives API handlers and carrier callbacks 256 MB and 10 s, the two contact batches 28 s, and the authorizer 3 s', () => {
    const { stack, template } = synth();

    const byId = template.toJSON().Resources as Record<string, { Properties: FunctionProps }>;

    const { upsertContacts, deleteContacts, ...others } = stack.api.routeFunctions;
    for (const fn of [...Object.values(others), ...Object.values(stack.carrier.callbackFunctions)]) {
      expect(byId[logicalIdOf(stack, fn)].Properties).toMatchObject({ MemorySize: 256, Timeout: 10 });
    }
    // A batch of 100 contacts: inside API Gateway's 29 s, and the Idempotency-Key's in-progress lock (60 s).
    for (const batch of [upsertContacts, deleteContacts])
      expect(byId[logicalIdOf(stack, batch)].Properties).toMatchObject({ MemorySize: 256, Timeout: 28 });
    expect(byId[logicalIdOf(stack, stack.api.authorizerFunction)].Properties).toMatchObject({
      MemorySize: 256,
      Timeout: 3,
    });
  });

  it('reserves concurrency for the authorizer, each carrier callback and the firing of scheduled texts, and for no other function', () => {
    const { stack, template } = synth();
    // Configured with no reservation (the same synth as the environment test below).
    const unreserved = synth(TUNED).template;

    const reserved = Object.fromEntries(
      Object.entries(template.findResources('AWS::Lambda::Function')).flatMap(([id, fn]) =>
        fn.Properties.ReservedConcurrentExecutions === undefined
          ? []
          : [[id, fn.Properties.ReservedConcurrentExecutions]],
      ),
    );
    expect(reserved).toEqual({
      [logicalIdOf(stack, stack.api.authorizerFunction)]: 100,
      ...Object.fromEntries(Object.values(stack.carrier.callbackFunctions).map((fn) => [logicalIdOf(stack, fn), 20])),
      // One run at a time, whatever the configuration (lib/constructs/scheduled-texts.ts).
      [logicalIdOf(stack, stack.scheduledTexts.firer)]: 1,
    });
    expect(Object.keys(stack.carrier.callbackFunctions)).toHaveLength(5);
    const firerId = logicalIdOf(stack, stack.scheduledTexts.firer);
    for (const [id, fn] of Object.entries(unreserved.findResources('AWS::Lambda::Function')))
      expect(fn.Properties.ReservedConcurrentExecutions).toBe(id === firerId ? 1 : undefined);
  });

  it('configures every function through its environment', () => {
    const { stack, template } = synth(TUNED);

    const authorizerId = logicalIdOf(stack, stack.api.authorizerFunction);
    for (const [id, { Properties: fn }] of Object.entries(template.findResources('AWS::Lambda::Function')) as [
      string,
      { Properties: FunctionProps },
    ][]) {
      const variables = fn.Environment.Variables;
      expect(variables).toEqual({
        TABLE_NAME: { Ref: logicalIdOf(stack, stack.table.table) },
        POWERTOOLS_SERVICE_NAME: 'cct-service',
        POWERTOOLS_METRICS_NAMESPACE: 'CctService/dev',
        POWERTOOLS_LOG_LEVEL: 'DEBUG',
        RATE_LIMIT_PER_KEY: '200',
        NODE_OPTIONS: '--enable-source-maps',
        // The webhook functions also get their queue (pinned in webhooks.test.ts).
        ...(variables.WEBHOOK_QUEUE_URL !== undefined && { WEBHOOK_QUEUE_URL: expect.anything() }),
        // The carrier's functions also get the Twilio secret and their URLs (pinned in carrier.test.ts).
        ...(variables.TWILIO_SECRET_ARN !== undefined && { TWILIO_SECRET_ARN: expect.anything() }),
        ...(variables.PUBLIC_BASE_URL !== undefined && { PUBLIC_BASE_URL: expect.anything() }),
        ...(variables.CARRIER !== undefined && { CARRIER: 'twilio', TWILIO_STATUS_CALLBACK_URL: expect.anything() }),
        // The authorizer also gets the scope each route requires and its usage-plan buckets (pinned in api.test.ts).
        ...(id === authorizerId && {
          [ROUTE_SCOPES_ENV]: expect.any(String),
          USAGE_PLAN_KEY_PREFIX: expect.any(String),
          USAGE_PLAN_BUCKETS: String(DEFAULT_USAGE_PLAN_BUCKETS),
        }),
      });
    }
  });

  it('logs each function to its own log group, kept 30 days by default', () => {
    const synthesized = synth();
    const { template } = synthesized;

    const logGroups = template.toJSON().Resources as Record<string, { Properties: { RetentionInDays: number } }>;

    for (const fn of functionsOf(template)) {
      expect(logGroups[fn.LoggingConfig.LogGroup.Ref].Properties.RetentionInDays).toBe(30);
    }
    const groups = new Set(functionsOf(template).map((fn) => fn.LoggingConfig.LogGroup.Ref));
    expect(groups.size).toBe(factoryFunctionIds(synthesized).length);
  });

  it('keeps logs for the configured retention, and keeps the groups', () => {
    const { template } = synth({ stage: 'prod', logRetention: RetentionDays.THREE_MONTHS });

    const groups = Object.values(template.findResources('AWS::Logs::LogGroup'));

    expect(groups.length).toBeGreaterThan(ROUTES.length);
    for (const group of groups) {
      expect(group.Properties.RetentionInDays).toBe(90);
      expect(group.DeletionPolicy).toBe('Retain');
    }
  });
});
