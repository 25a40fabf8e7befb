import { RemovalPolicy } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { ROUTES } from '../../lambdas/handlers/api/routes';
import { CARRIER_PREFIX, CARRIER_ROUTES, carrierRoutes } from '../../lambdas/handlers/carrier/routes';
import { TWILIO_SECRET_PRELOAD, TWILIO_SECRET_TEMPLATE } from '../../lib/constructs/carrier';
import { FunctionFactory } from '../../lib/constructs/function-factory';
import { CARRIER_CALLBACK_TABLE_ACCESS } from '../../lib/table-access';
import {
  actionsOf,
  buildStack,
  logicalIdOf,
  resourcePaths,
  statementsOfFunction,
  synth,
  type Statement,
} from './support';

type Resource = {
  Type: string;
  Properties: Record<string, unknown>;
  DependsOn?: string | string[];
  DeletionPolicy?: string;
};
type Synthesized = ReturnType<typeof synth>;

const IMPORTED_SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:cct/twilio-AbC123';
const DOMAIN = { domainName: 'api.example.com', certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc' };

const resourcesOf = (template: Template) => template.toJSON().Resources as Record<string, Resource>;

function methodAt(template: Template, httpMethod: string, path: string): Record<string, unknown> | undefined {
  const paths = resourcePaths(template);
  return Object.values(template.findResources('AWS::ApiGateway::Method'))
    .map((m) => m.Properties as Record<string, unknown> & { HttpMethod: string; ResourceId: { Ref: string } })
    .find((m) => m.HttpMethod === httpMethod && paths.get(m.ResourceId.Ref) === path);
}

const environmentOf = ({ stack, template }: Synthesized, fn: Parameters<typeof logicalIdOf>[1]) =>
  (resourcesOf(template)[logicalIdOf(stack, fn)].Properties.Environment as { Variables: Record<string, unknown> })
    .Variables;

const secretStatements = (statements: Statement[]) =>
  statements.filter((s) => actionsOf(s).some((a) => a.startsWith('secretsmanager:')));

/** The execute-api root the handlers sign against, as CloudFormation builds it: no reference to the stage resource. */
const executeApiRoot = ({ stack }: Synthesized, stage: string) => ({
  'Fn::Join': [
    '',
    [
      'https://',
      { Ref: logicalIdOf(stack, stack.api.api) },
      '.execute-api.',
      { Ref: 'AWS::Region' },
      '.',
      { Ref: 'AWS::URLSuffix' },
      `/${stage}`,
    ],
  ],
});

describe('the carrier side', () => {
  it('makes one function per carrier route from its handler, bundled with the secret preload', () => {
    const create = jest.spyOn(FunctionFactory.prototype, 'create');

    const { stack } = buildStack();

    const specs = new Map(create.mock.calls.map(([id, spec]) => [id, spec]));
    for (const route of CARRIER_ROUTES) {
      const fn = stack.carrier.callbackFunctions[route.operationId];
      expect(fn).toBeDefined();
      const spec = [...specs.values()].find((s) => s.entry === route.handler);
      expect(spec).toMatchObject({ preload: [TWILIO_SECRET_PRELOAD] });
    }
    // POST /messages and the firing of scheduled texts read the secret too; no other function does.
    const withPreload = [...specs.values()]
      .filter((s) => s.preload?.length)
      .map((s) => s.entry)
      .sort();
    expect(withPreload).toEqual(
      [
        ...CARRIER_ROUTES.map((r) => r.handler),
        ROUTES.find((r) => r.operationId === 'sendMessage')!.handler,
        'lambdas/handlers/scheduled/fire-scheduled-texts.ts',
      ].sort(),
    );
    create.mockRestore();
  });

  it('serves each callback as a POST outside /api/v1 through its own function, with no authorizer and no usage-plan key', () => {
    const synthesized = synth();
    const { stack, template } = synthesized;

    for (const route of CARRIER_ROUTES) {
      const method = methodAt(template, 'POST', route.path);

      expect(route.path.startsWith(`${CARRIER_PREFIX}/`)).toBe(true);
      expect(method).toMatchObject({ AuthorizationType: 'NONE' });
      expect(method!.AuthorizerId).toBeUndefined();
      expect(method!.ApiKeyRequired ?? false).toBe(false);
      expect(JSON.stringify(method!.Integration)).toContain(
        `"${logicalIdOf(stack, stack.carrier.callbackFunctions[route.operationId])}","Arn"`,
      );
    }
  });

  it('tells each callback function its public root (built from the API id, region and stage name) and the secret, never a credential', () => {
    const synthesized = synth();
    const { stack } = synthesized;
    const secret = { Ref: logicalIdOf(stack, stack.carrier.secret as never) };

    for (const route of CARRIER_ROUTES) {
      const env = environmentOf(synthesized, stack.carrier.callbackFunctions[route.operationId]);

      expect(env.PUBLIC_BASE_URL).toEqual(executeApiRoot(synthesized, 'dev'));
      expect(env.TWILIO_SECRET_ARN).toEqual(secret);
      expect(Object.keys(env).filter((k) => /TOKEN|ACCOUNT_SID/.test(k))).toEqual([]);
    }
  });

  it('sends texts through Twilio with the secret, asking for status callbacks at the stack’s own callback URL', () => {
    const synthesized = synth();
    const { stack } = synthesized;
    const root = executeApiRoot(synthesized, 'dev');

    const env = environmentOf(synthesized, stack.api.routeFunctions.sendMessage);

    expect(env).toMatchObject({
      CARRIER: 'twilio',
      TWILIO_SECRET_ARN: { Ref: logicalIdOf(stack, stack.carrier.secret as never) },
    });
    expect(env.TWILIO_STATUS_CALLBACK_URL).toEqual({
      'Fn::Join': ['', [...root['Fn::Join'][1].slice(0, -1), `/dev${carrierRoutes.twilioSmsStatus.path}`]],
    });
  });

  it('uses the custom domain root for signatures and status callbacks when there is one', () => {
    const synthesized = synth({ customDomain: DOMAIN });
    const { stack } = synthesized;

    for (const fn of Object.values(stack.carrier.callbackFunctions)) {
      expect(environmentOf(synthesized, fn).PUBLIC_BASE_URL).toBe('https://api.example.com');
    }
    expect(environmentOf(synthesized, stack.api.routeFunctions.sendMessage).TWILIO_STATUS_CALLBACK_URL).toBe(
      'https://api.example.com/carrier/twilio/sms/status',
    );
  });

  it('puts no Twilio credential in any function environment', () => {
    const { template } = synth();

    for (const fn of Object.values(template.findResources('AWS::Lambda::Function'))) {
      const names = Object.keys((fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables);
      expect(names.filter((n) => ['TWILIO_AUTH_TOKEN', 'TWILIO_ACCOUNT_SID'].includes(n))).toEqual([]);
    }
  });

  it('creates the secret with empty fields for the operator, kept unless the stage is thrown away', () => {
    const dev = synth();
    const thrownAway = synth({ removalPolicy: RemovalPolicy.DESTROY, deletionProtection: false });

    const secretOf = ({ stack, template }: Synthesized) =>
      resourcesOf(template)[logicalIdOf(stack, stack.carrier.secret as never)];

    expect(JSON.parse(secretOf(dev).Properties.SecretString as string)).toEqual({ accountSid: '', authToken: '' });
    expect(secretOf(dev).Properties.SecretString).toBe(TWILIO_SECRET_TEMPLATE);
    expect(secretOf(dev).Properties.GenerateSecretString).toBeUndefined();
    expect(secretOf(dev).DeletionPolicy).toBe('Retain');
    expect(secretOf(thrownAway).DeletionPolicy).toBe('Delete');
    // The generated name: a stage can be deleted and deployed again without a name clash with
    // the deleted secret's recovery window.
    expect(secretOf(dev).Properties.Name).toBeUndefined();
    expect(dev.template.toJSON().Outputs.TwilioSecretArn.Value).toEqual({
      Ref: logicalIdOf(dev.stack, dev.stack.carrier.secret as never),
    });
  });

  it('uses an existing secret by its complete ARN instead of creating one', () => {
    const synthesized = synth({ twilioSecretArn: IMPORTED_SECRET_ARN });
    const { stack, template } = synthesized;

    expect(Object.keys(template.findResources('AWS::SecretsManager::Secret'))).toEqual([]);
    expect(environmentOf(synthesized, stack.api.routeFunctions.sendMessage).TWILIO_SECRET_ARN).toBe(
      IMPORTED_SECRET_ARN,
    );
    for (const fn of Object.values(stack.carrier.callbackFunctions)) {
      expect(environmentOf(synthesized, fn).TWILIO_SECRET_ARN).toBe(IMPORTED_SECRET_ARN);
      expect(secretStatements(statementsOfFunction(template, logicalIdOf(stack, fn)))).toEqual([
        { Action: 'secretsmanager:GetSecretValue', Effect: 'Allow', Resource: IMPORTED_SECRET_ARN },
      ]);
    }
    expect(template.toJSON().Outputs.TwilioSecretArn.Value).toBe(IMPORTED_SECRET_ARN);
  });

  it('lets exactly the callbacks, POST /messages and the firing of scheduled texts read the secret, with GetSecretValue on that secret only', () => {
    const { stack, template } = synth();
    const secret = { Ref: logicalIdOf(stack, stack.carrier.secret as never) };
    const readers = new Set([
      ...Object.values(stack.carrier.callbackFunctions),
      stack.api.routeFunctions.sendMessage,
      stack.scheduledTexts.firer,
    ]);

    for (const fn of stack.functions.functions) {
      const statements = secretStatements(statementsOfFunction(template, logicalIdOf(stack, fn)));

      expect([fn.node.id, statements]).toEqual([
        fn.node.id,
        readers.has(fn) ? [{ Action: 'secretsmanager:GetSecretValue', Effect: 'Allow', Resource: secret }] : [],
      ]);
    }
  });

  it.each(Object.entries(CARRIER_CALLBACK_TABLE_ACCESS))(
    'grants %s exactly the table actions its ingestion code sends',
    (operationId, access) => {
      const { stack, template } = synth();
      const fn = stack.carrier.callbackFunctions[operationId];
      const tableArn = { 'Fn::GetAtt': [logicalIdOf(stack, stack.table.table), 'Arn'] };

      const statements = statementsOfFunction(template, logicalIdOf(stack, fn));
      const dynamo = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));

      expect(dynamo).toEqual([{ Action: [...access.actions].sort(), Effect: 'Allow', Resource: tableArn }]);
      const everything = statements.flatMap(actionsOf);
      expect(everything.filter((a) => a.includes('*'))).toEqual([]);
      // Its own log group, X-Ray, the table and the secret: nothing else.
      expect([...new Set(everything.map((a) => a.split(':')[0]))].sort()).toEqual([
        'dynamodb',
        'logs',
        'secretsmanager',
        'xray',
      ]);
      expect(statements.find((s) => actionsOf(s).some((a) => a.startsWith('logs:')))!.Resource).toEqual({
        'Fn::GetAtt': [logicalIdOf(stack, fn.logGroup), 'Arn'],
      });
    },
  );

  it('pins the ingestion actions the code needs', () => {
    expect(CARRIER_CALLBACK_TABLE_ACCESS).toEqual({
      twilioVoiceStatus: {
        actions: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'],
      },
      twilioVoiceRecording: { actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'] },
      twilioVoiceTranscription: { actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'] },
      // A STOP or the carrier's opt-out cancels the number's scheduled texts: Query its rows, DeleteItem each.
      twilioSmsInbound: {
        actions: [
          'dynamodb:GetItem',
          'dynamodb:PutItem',
          'dynamodb:UpdateItem',
          'dynamodb:ConditionCheckItem',
          'dynamodb:Query',
          'dynamodb:DeleteItem',
        ],
      },
      // A STOP or the carrier's opt-out cancels the number's scheduled texts: Query its rows, DeleteItem each.
      twilioSmsStatus: {
        actions: [
          'dynamodb:GetItem',
          'dynamodb:PutItem',
          'dynamodb:UpdateItem',
          'dynamodb:ConditionCheckItem',
          'dynamodb:Query',
          'dynamodb:DeleteItem',
        ],
      },
    });
  });

  it('throttles each callback method at the stage, logging errors only and never the form bodies', () => {
    const stageOf = ({ template }: Synthesized) =>
      Object.values(template.findResources('AWS::ApiGateway::Stage'))[0].Properties.MethodSettings as Record<
        string,
        unknown
      >[];

    const defaults = stageOf(synth());
    const tuned = stageOf(synth({ carrierCallbackThrottle: { rateLimit: 7, burstLimit: 9 } }));

    for (const route of CARRIER_ROUTES) {
      const resourcePath = `/${route.path.replace(/\//g, '~1')}`;
      expect(defaults).toContainEqual({
        HttpMethod: 'POST',
        ResourcePath: resourcePath,
        ThrottlingRateLimit: 50,
        ThrottlingBurstLimit: 100,
        LoggingLevel: 'ERROR',
        DataTraceEnabled: false,
      });
      expect(tuned).toContainEqual(
        expect.objectContaining({ ResourcePath: resourcePath, ThrottlingRateLimit: 7, ThrottlingBurstLimit: 9 }),
      );
    }
    expect(resourcePathOf(carrierRoutes.twilioSmsInbound.path)).toBe('/~1carrier~1twilio~1sms~1inbound');
  });

  type WafRule = {
    Name: string;
    Priority: number;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    Statement: Record<string, any>;
    Action: {
      Block: { CustomResponse: { ResponseCode: number; CustomResponseBodyKey: string; ResponseHeaders?: unknown } };
    };
  };
  const webAclOf = (template: Template) =>
    Object.values(template.findResources('AWS::WAFv2::WebACL'))[0].Properties as {
      Rules: WafRule[];
      CustomResponseBodies: Record<string, { ContentType: string; Content: string }>;
    };
  const callbackPaths = (stage: string) => {
    const startsWith = (searchString: string) => ({
      ByteMatchStatement: {
        FieldToMatch: { UriPath: {} },
        PositionalConstraint: 'STARTS_WITH',
        SearchString: searchString,
        TextTransformations: [
          { Priority: 0, Type: 'URL_DECODE' },
          { Priority: 1, Type: 'NORMALIZE_PATH' },
        ],
      },
    });
    // Under /carrier/twilio/ (custom domain) or /<stage>/carrier/twilio/ (execute-api URL).
    return { OrStatement: { Statements: [startsWith('/carrier/twilio/'), startsWith(`/${stage}/carrier/twilio/`)] } };
  };

  it.each([
    ['dev', {}],
    ['prod', { stage: 'prod' }],
  ])(
    'exempts the callback paths from the per-address WAF limit (%s), after decoding and normalising the path',
    (stage, overrides) => {
      const { template } = synth(overrides);

      const rule = webAclOf(template).Rules.find((r) => r.Name === 'PerClientAddressRateLimit');

      expect(rule?.Statement.RateBasedStatement).toEqual({
        Limit: 600,
        EvaluationWindowSec: 60,
        AggregateKeyType: 'IP',
        ScopeDownStatement: { NotStatement: { Statement: callbackPaths(stage) } },
      });
    },
  );

  it('refuses a callback without a well-formed X-Twilio-Signature at the edge with 403, before any throttle or function', () => {
    const { template } = synth();

    const acl = webAclOf(template);
    const rule = acl.Rules.find((r) => r.Name === 'CallbackWithoutSignature');

    // First of all rules, so an unsigned flood spends neither the callback throttle nor an invocation.
    expect(rule?.Priority).toBe(0);
    expect(rule?.Statement).toEqual({
      AndStatement: {
        Statements: [
          callbackPaths('dev'),
          {
            NotStatement: {
              Statement: {
                RegexMatchStatement: {
                  FieldToMatch: { SingleHeader: { Name: 'x-twilio-signature' } },
                  RegexString: '^[A-Za-z0-9+/]{27}=$',
                  TextTransformations: [{ Priority: 0, Type: 'NONE' }],
                },
              },
            },
          },
        ],
      },
    });
    expect(rule?.Action.Block.CustomResponse.ResponseCode).toBe(403);
    const body = acl.CustomResponseBodies[rule!.Action.Block.CustomResponse.CustomResponseBodyKey];
    expect(JSON.parse(body.Content)).toEqual({
      error: expect.stringContaining('X-Twilio-Signature'),
      code: 'invalid_signature',
    });
  });

  it('limits each address on the callback paths on its own, 1,200 a minute unless configured, answering 429 with Retry-After', () => {
    const defaults = webAclOf(synth().template);
    const tuned = webAclOf(synth({ carrierCallbackLimitPerAddress: 3000 }).template);

    const ruleOf = (acl: ReturnType<typeof webAclOf>) =>
      acl.Rules.find((r) => r.Name === 'CallbackPerClientAddressRateLimit');
    expect(ruleOf(defaults)?.Priority).toBe(1);
    expect(ruleOf(defaults)?.Statement.RateBasedStatement).toEqual({
      Limit: 1200,
      EvaluationWindowSec: 60,
      AggregateKeyType: 'IP',
      ScopeDownStatement: callbackPaths('dev'),
    });
    expect(ruleOf(tuned)?.Statement.RateBasedStatement.Limit).toBe(3000);
    const response = ruleOf(defaults)!.Action.Block.CustomResponse;
    expect(response.ResponseCode).toBe(429);
    expect(response.ResponseHeaders).toEqual([{ Name: 'Retry-After', Value: '60' }]);
    expect(JSON.parse(defaults.CustomResponseBodies[response.CustomResponseBodyKey].Content)).toEqual({
      error: expect.stringContaining('1200'),
      code: 'rate_limited',
    });
  });

  it('alarms on errors and throttles of every callback function', () => {
    const { stack, template } = synth();
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => a.Properties);

    for (const route of CARRIER_ROUTES) {
      const fnRef = {
        Name: 'FunctionName',
        Value: { Ref: logicalIdOf(stack, stack.carrier.callbackFunctions[route.operationId]) },
      };
      for (const metric of ['Errors', 'Throttles']) {
        expect(alarms).toContainEqual(
          expect.objectContaining({
            AlarmName: `cct-service-dev-${route.operationId}${metric}`,
            MetricName: metric,
            Dimensions: [fnRef],
          }),
        );
      }
    }
  });

  it.each([
    ['the execute-api URL', {}],
    ['a custom domain', { customDomain: DOMAIN }],
  ])(
    'has no circular dependency with %s (functions hold the public URL, methods hold the functions)',
    (_name, overrides) => {
      const { template } = synth(overrides);
      const resources = resourcesOf(template);

      const edges = new Map<string, Set<string>>();
      const collect = (value: unknown, into: Set<string>): void => {
        if (Array.isArray(value)) value.forEach((v) => collect(v, into));
        else if (value && typeof value === 'object') {
          for (const [key, inner] of Object.entries(value)) {
            if (key === 'Ref' && typeof inner === 'string' && resources[inner]) into.add(inner);
            else if (key === 'Fn::GetAtt' && Array.isArray(inner) && resources[inner[0] as string])
              into.add(inner[0] as string);
            else collect(inner, into);
          }
        }
      };
      for (const [id, resource] of Object.entries(resources)) {
        const deps = new Set<string>([resource.DependsOn ?? []].flat());
        collect(resource.Properties, deps);
        edges.set(id, deps);
      }
      const state = new Map<string, 'visiting' | 'done'>();
      const cycleFrom = (id: string, path: string[]): string[] | undefined => {
        if (state.get(id) === 'done') return undefined;
        if (state.get(id) === 'visiting') return [...path, id];
        state.set(id, 'visiting');
        for (const dep of edges.get(id) ?? []) {
          const cycle = cycleFrom(dep, [...path, id]);
          if (cycle) return cycle;
        }
        state.set(id, 'done');
        return undefined;
      };

      const cycles = Object.keys(resources)
        .map((id) => cycleFrom(id, []))
        .filter(Boolean);

      expect(cycles).toEqual([]);
    },
  );
});

function resourcePathOf(path: string): string {
  return `/${path.replace(/\//g, '~1')}`;
}
