import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import {
  APIGatewayClient,
  CreateApiKeyCommand,
  DeleteApiKeyCommand,
  FlushStageAuthorizersCacheCommand,
} from '@aws-sdk/client-api-gateway';
import {
  CloudFormationClient,
  DescribeStackResourcesCommand,
  DescribeStacksCommand,
} from '@aws-sdk/client-cloudformation';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import {
  usagePlanKeyFor,
  usagePlanKeyPrefixOf,
  usagePlanKeyValues,
} from '../../lambdas/handlers/authorizer/usage-plan-keys';
import { keyCreate, keyRevoke, keyRotate } from '../../local/admin/commands/key';
import { tenantUpdate } from '../../local/admin/commands/tenant';
import { authorizerFlush } from '../../local/admin/commands/authorizer';
import { runAdmin } from '../../local/admin/main';
import { stageClock } from '../../local/admin/authorizer-cache';
import { handler as authorizer } from '../../lambdas/handlers/authorizer/handler';
import { encodeRoutePermissions, ROUTE_SCOPES_ENV } from '../../lambdas/handlers/authorizer/policy';
import {
  AUTHORIZER_TIMEOUT_SECONDS,
  IN_FLIGHT_DECISION_BOUND_MS,
} from '../../lambdas/handlers/authorizer/decision-time';
import { generateApiKey } from '../../lambdas/contexts/tenants/api-keys';
import { ROUTES } from '../../lambdas/handlers/api/routes';
import { API_PREFIX } from '../../lambdas/handlers/http/route-spec';
import { policyAllows } from '../../local/authorizer';
import { defineCommand } from '../../local/admin/registry';
import {
  DEFAULT_USAGE_PLAN_BUCKETS,
  USAGE_PLAN_BUCKETS_ENV,
  USAGE_PLAN_KEY_PREFIX_ENV,
} from '../../lambdas/handlers/authorizer/usage-plan-keys';

import { settleSpend } from '../../lambdas/contexts/texting/spend';

jest.mock('../../lambdas/contexts/texting/spend', () => {
  const actual = jest.requireActual('../../lambdas/contexts/texting/spend');
  return { ...actual, settleSpend: jest.fn(actual.settleSpend) };
});

const cfn = mockClient(CloudFormationClient);
const apigw = mockClient(APIGatewayClient);
const ddb = mockClient(DynamoDBDocumentClient);

const STACK = 'CctService-dev';
const tenantId = '0199a000-0000-7000-8000-000000000001';
const keyId = '0199a000-0000-7000-8000-0000000000aa';
const OUTPUTS = {
  TableName: 'CctService-dev-DataTable-ABC',
  ApiBaseUrl: 'https://abc123.execute-api.eu-west-1.amazonaws.com/dev/api/v1',
  ApiId: 'abc123',
  Stage: 'dev',
};
/** The buckets the stack of that name makes (lib/constructs/public-api.ts) with the default count. */
const BUCKETS = { prefix: usagePlanKeyPrefixOf(STACK), count: DEFAULT_USAGE_PLAN_BUCKETS };

/** What every command sees of the target: the table it would work on. */
const where = defineCommand({
  words: ['where', 'am'],
  summary: 'Print the table',
  usage: '',
  options: {},
  parse: () => undefined,
  run: async () => ({
    table: process.env.TABLE_NAME,
    endpoint: process.env.DYNAMODB_ENDPOINT ?? null,
    region: process.env.AWS_REGION,
  }),
});

const COMMANDS = [keyCreate, keyRevoke, keyRotate, tenantUpdate, authorizerFlush, where];

async function admin(...argv: string[]) {
  const out = { stdout: '', stderr: '' };
  const code = await runAdmin(argv, { stdout: (t) => (out.stdout += t), stderr: (t) => (out.stderr += t) }, COMMANDS);
  return { code, ...out, json: out.stdout ? JSON.parse(out.stdout) : undefined };
}

const described = (status = 'UPDATE_COMPLETE', outputs: Record<string, string> = OUTPUTS) => ({
  Stacks: [
    {
      StackName: STACK,
      StackStatus: status,
      CreationTime: new Date(),
      Outputs: Object.entries(outputs).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
    } as never,
  ],
});
const givenStack = (status?: string, outputs?: Record<string, string>) =>
  cfn.on(DescribeStacksCommand, { StackName: STACK }).resolves(described(status, outputs));

const tenantRow = {
  id: tenantId,
  name: 'Acme',
  slug: 'acme',
  plan: 'pro',
  numbers: [],
  approvedHosts: [],
  updatedAt: '2026-11-01T00:00:00.000Z',
};
const givenTenant = () =>
  ddb.on(GetCommand, { Key: { pk: `T#${tenantId}`, sk: 'TENANT' } }).resolves({ Item: tenantRow });

const keyRow = {
  pk: 'KEYHASH#h',
  sk: 'APIKEY',
  id: keyId,
  tenantId,
  name: 'k',
  prefix: 'cct_abcdefgh',
  scopes: ['sms.send'],
  expiresAt: null,
  createdAt: '2026-10-01T00:00:00.000Z',
};

const savedEnv = { ...process.env };
/**
 * The CLI's flushes of a stage's authorizer cache and its waits between them, in order; a wait is recorded rather than
 * slept.
 */
let steps: string[];
beforeEach(() => {
  cfn.reset();
  apigw.reset();
  ddb.reset();
  steps = [];
  jest.spyOn(stageClock, 'sleep').mockImplementation(async (ms) => void steps.push(`wait ${ms} ms`));
});
afterEach(() => {
  process.env = { ...savedEnv };
  jest.restoreAllMocks();
});

describe('--stack: the operator CLI against a deployed stack', () => {
  it('finds the table through the stack outputs, in the given region, for any command', async () => {
    givenStack();

    const result = await admin('--stack', STACK, '--region', 'eu-west-1', 'where', 'am');

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.json).toEqual({ table: OUTPUTS.TableName, endpoint: null, region: 'eu-west-1' });
    expect(cfn).toHaveReceivedCommandWith(DescribeStacksCommand, { StackName: STACK });
    expect(await (cfn.call(0).thisValue as CloudFormationClient).config.region()).toBe('eu-west-1');
  });

  it.each([
    [
      'a stack that does not exist',
      () =>
        cfn
          .on(DescribeStacksCommand)
          .rejects(Object.assign(new Error(`Stack with id ${STACK} does not exist`), { name: 'ValidationError' })),
      /Stack CctService-dev not found in eu-west-1/,
    ],
    ['a stack that is not deployed', () => givenStack('ROLLBACK_COMPLETE'), /is ROLLBACK_COMPLETE, not deployed/],
    [
      'a stack of something else',
      () => givenStack('CREATE_COMPLETE', { ApiId: 'x' }),
      /has no output TableName, ApiBaseUrl, Stage/,
    ],
  ])('fails with exit 1 on %s', async (_name, given, message) => {
    given();

    const result = await admin('--stack', STACK, '--region', 'eu-west-1', 'where', 'am');

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message);
  });

  it('refuses --stack with --table-name, and --region without --stack', async () => {
    expect((await admin('--stack', STACK, '--table-name', 't', 'where', 'am')).stderr).toMatch(
      /leave out --table-name/,
    );
    expect(
      (
        await admin(
          '--table-name',
          't',
          '--dynamodb-endpoint',
          'http://127.0.0.1:1',
          '--region',
          'eu-west-1',
          'where',
          'am',
        )
      ).stderr,
    ).toMatch(/--region goes with --stack/);
    expect(cfn.calls()).toHaveLength(0);
  });
});

describe('key create --stack: keys without a ceiling', () => {
  it('issues 10,100 keys, past API Gateway’s quota of 10,000 a region, with no API Gateway call at all: every one is metered by one of the stack’s usage-plan buckets (100 by default)', async () => {
    // Prepare: the stack, its organization and a table that takes every key. The clients' send is answered by a
    // plain function for this test, not sinon's stub: its matching and history cost more than the commands.
    const stack = described();
    jest.spyOn(CloudFormationClient.prototype, 'send').mockImplementation(async () => stack);
    let puts = 0;
    jest.spyOn(DynamoDBDocumentClient.prototype, 'send').mockImplementation(async (command: unknown) => {
      if (command instanceof PutCommand) puts += 1;
      return (command as { input: { Key?: unknown } }).input.Key ? { Item: tenantRow } : {};
    });
    let apiGatewayCalls = 0;
    jest.spyOn(APIGatewayClient.prototype, 'send').mockImplementation(async () => void (apiGatewayCalls += 1));
    const keyIds: string[] = [];
    // Act: the CLI's AWS path, one invocation per key, 100 at a time as an operator's script might run them
    for (let batch = 0; batch < 101; batch += 1) {
      const results = await Promise.all(
        Array.from({ length: 100 }, () => admin('--stack', STACK, 'key', 'create', '--tenant', tenantId)),
      );
      for (const result of results) {
        if (result.code !== 0) throw new Error(result.stderr);
        keyIds.push(result.json.apiKey.id);
      }
    }
    // Assess: 10,100 keys in the table, none in API Gateway, all metered by the stack's buckets
    expect(new Set(keyIds).size).toBe(10_100);
    expect(puts).toBe(10_100);
    expect(apiGatewayCalls).toBe(0);
    const named = new Set(keyIds.map((id) => usagePlanKeyFor(id, BUCKETS)));
    expect(named).toEqual(new Set(usagePlanKeyValues(BUCKETS)));
  }, 60_000);

  it('prints the key once, its record and {base_url}, and stores the key', async () => {
    givenStack();
    givenTenant();
    ddb.on(PutCommand).resolves({});

    const result = await admin('--stack', STACK, 'key', 'create', '--tenant', tenantId, '--scopes', 'sms.send');

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(Object.keys(result.json).sort()).toEqual(['apiKey', 'baseUrl', 'key']);
    expect(result.json.baseUrl).toBe(OUTPUTS.ApiBaseUrl);
    expect(ddb).toHaveReceivedCommandWith(PutCommand, {
      Item: expect.objectContaining({ id: result.json.apiKey.id, tenantId, scopes: ['sms.send'] }),
    });
  });
});

describe('taking access away flushes the stage’s authorizer cache, so it bites at once', () => {
  const FLUSH = { restApiId: OUTPUTS.ApiId, stageName: OUTPUTS.Stage };
  beforeEach(() => {
    givenStack();
    givenTenant();
    ddb.on(QueryCommand).resolves({ Items: [{ ...keyRow, revokedAt: null, replacedBy: null }] });
    ddb.on(UpdateCommand).resolves({ Attributes: { ...keyRow, revokedAt: '2026-11-21T10:00:00.000Z' } });
    ddb.on(TransactWriteCommand).resolves({});
    apigw.on(FlushStageAuthorizersCacheCommand).callsFake(async () => {
      steps.push('flush');
      return {};
    });
  });

  it('key revoke: revokes the key in the table, then flushes the stage, waits out the authorizer’s timeout, flushes again (and deletes no API Gateway key)', async () => {
    const result = await admin('--stack', STACK, 'key', 'revoke', keyId);

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.json).toEqual({
      apiKey: expect.objectContaining({ id: keyId, revokedAt: '2026-11-21T10:00:00.000Z' }),
      authorizerCache: { flushed: true, where: 'stage dev of API abc123 (stack CctService-dev)' },
    });
    expect(apigw).toHaveReceivedCommandWith(FlushStageAuthorizersCacheCommand, FLUSH);
    expect(apigw).toHaveReceivedCommandTimes(FlushStageAuthorizersCacheCommand, 2);
    expect(apigw).not.toHaveReceivedCommand(DeleteApiKeyCommand);
    // The table first: a flush before it would let the next request cache the old decision again.
    expect(
      ddb.commandCalls(UpdateCommand)[0].calledBefore(apigw.commandCalls(FlushStageAuthorizersCacheCommand)[0]),
    ).toBe(true);
    expect(steps).toEqual(['flush', `wait ${IN_FLIGHT_DECISION_BOUND_MS} ms`, 'flush']);
    expect(IN_FLIGHT_DECISION_BOUND_MS).toBeGreaterThan(AUTHORIZER_TIMEOUT_SECONDS * 1000);
  });

  it('key rotate: flushes after the rotation, so the old key’s next decision carries its end of grace', async () => {
    const result = await admin('--stack', STACK, 'key', 'rotate', keyId, '--grace', '30m');

    expect(result.code).toBe(0);
    expect(result.json.authorizerCache).toMatchObject({ flushed: true });
    expect(apigw).toHaveReceivedCommandWith(FlushStageAuthorizersCacheCommand, FLUSH);
    expect(
      ddb.commandCalls(TransactWriteCommand)[0].calledBefore(apigw.commandCalls(FlushStageAuthorizersCacheCommand)[0]),
    ).toBe(true);
    expect(apigw).not.toHaveReceivedCommand(CreateApiKeyCommand);
  });

  it('tenant update: flushes when the plan (API access), name or slug changes, and not for other changes', async () => {
    const toStarter = await admin('--stack', STACK, 'tenant', 'update', tenantId, '--plan', 'starter');
    const flushesAfterPlan = apigw.commandCalls(FlushStageAuthorizersCacheCommand).length;
    const host = await admin('--stack', STACK, 'tenant', 'update', tenantId, '--approve-host', 'hooks.example.com');

    expect([toStarter.code, host.code]).toEqual([0, 0]);
    expect(toStarter.json.authorizerCache).toMatchObject({ flushed: true });
    expect(host.json.authorizerCache).toBeUndefined();
    expect(flushesAfterPlan).toBe(2);
    expect(apigw).toHaveReceivedCommandTimes(FlushStageAuthorizersCacheCommand, 2);
    expect(apigw).toHaveReceivedCommandWith(FlushStageAuthorizersCacheCommand, FLUSH);
  });

  it('fails, saying the revocation is done and how to retry, when the flush fails', async () => {
    apigw.on(FlushStageAuthorizersCacheCommand).rejects(
      Object.assign(new Error('User is not authorized to perform apigateway:DELETE'), {
        name: 'AccessDeniedException',
      }),
    );

    const result = await admin('--stack', STACK, 'key', 'revoke', keyId);

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /API key .* is revoked in the table, but the authorizer cache could not be flushed \(User is not authorized.*authorizer flush/,
    );
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, {
      UpdateExpression: expect.stringContaining('SET revokedAt = :now'),
    });
  });

  it('authorizer flush: flushes the stage alone', async () => {
    const result = await admin('--stack', STACK, 'authorizer', 'flush');

    expect(result.code).toBe(0);
    expect(apigw).toHaveReceivedCommandWith(FlushStageAuthorizersCacheCommand, FLUSH);
  });

  it('finds the stage serving a --table-name table from the stack CloudFormation says made it, and flushes it', async () => {
    cfn
      .on(DescribeStackResourcesCommand, { PhysicalResourceId: OUTPUTS.TableName })
      .resolves({ StackResources: [{ StackName: STACK } as never] });

    const result = await admin('--table-name', OUTPUTS.TableName, 'key', 'revoke', keyId);

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.json.authorizerCache).toEqual({
      flushed: true,
      where: 'stage dev of API abc123 (stack CctService-dev)',
    });
    expect(apigw).toHaveReceivedCommandTimes(FlushStageAuthorizersCacheCommand, 2);
  });

  it.each([
    ['key revoke', ['key', 'revoke', keyId], /API key .* is revoked in the table/],
    ['key rotate', ['key', 'rotate', keyId], /API key .* was rotated to /],
    ['tenant update --plan', ['tenant', 'update', tenantId, '--plan', 'starter'], /Organization .* is changed/],
  ])(
    '%s on a --table-name table no stack or runtime serves exits 1, saying the change is made and how to flush',
    async (_, argv, change) => {
      cfn
        .on(DescribeStackResourcesCommand)
        .rejects(
          Object.assign(new Error(`Stack for ${OUTPUTS.TableName} does not exist`), { name: 'ValidationError' }),
        );

      const result = await admin('--table-name', OUTPUTS.TableName, ...argv);

      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(change);
      expect(result.stderr).toMatch(/no authorizer cache was flushed \(no CloudFormation stack made table/);
      expect(result.stderr).toMatch(/--stack <stack> authorizer flush/);
      // What the change made is still printed (a rotated key is shown only once).
      expect(result.json.authorizerCache).toEqual({ flushed: false, reason: expect.any(String) });
      expect(apigw.calls()).toHaveLength(0);
    },
  );

  it('tenant update flushes the plan change even when settling the spend shards fails, then fails', async () => {
    jest.mocked(settleSpend).mockRejectedValueOnce(new Error('the settlement lease stayed taken'));

    const result = await admin(
      '--stack',
      STACK,
      'tenant',
      'update',
      tenantId,
      '--plan',
      'starter',
      '--spending-limit-cents',
      '500',
    );

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/the settlement lease stayed taken/);
    expect(apigw).toHaveReceivedCommandTimes(FlushStageAuthorizersCacheCommand, 2);
  });
});

describe('no window: a decision in flight during the command is not what a request after it gets', () => {
  // A stage as the CLI's AWS path meets it: API Gateway's authorizer cache (emptied by the mocked
  // FlushStageAuthorizersCache), the authorizer (the real handler) and the table (rows the mocked
  // client reads at the moment of each read, and the CLI's writes change).
  const { key, hash, prefix } = generateApiKey();
  const methodArn = `arn:aws:execute-api:eu-west-1:123456789012:abc123/dev/GET${API_PREFIX}/me`;
  type Decision = Awaited<ReturnType<typeof authorizer>> | 'Unauthorized';
  let cache: Map<string, Decision>;
  let rows: { key: Record<string, unknown>; tenant: Record<string, unknown> };
  /**
   * The request in flight: its authorizer's read of the organization row reads it at once, and answers once `answer` is
   * called.
   */
  let held: { waiting: boolean; read: () => void; answered: Promise<void>; answer: () => void } | undefined;

  const invokeAuthorizer = (): Promise<Decision> =>
    authorizer({ type: 'TOKEN', authorizationToken: `Bearer ${key}`, methodArn }).catch((err: Error) => {
      if (err.message !== 'Unauthorized') throw err;
      return 'Unauthorized' as const;
    });
  /** A request as API Gateway serves it: the cached decision, else the authorizer's, cached whenever it comes. */
  async function request(): Promise<number> {
    let decision = cache.get(key);
    if (!decision) {
      decision = await invokeAuthorizer();
      cache.set(key, decision);
    }
    if (decision === 'Unauthorized') return 401;
    return policyAllows(decision, methodArn) ? 200 : 403;
  }
  /**
   * Starts a request whose authorizer reads both rows now and answers once `held.answer` is called; resolves when they
   * are read.
   */
  async function requestHeldAfterItsReads(): Promise<{ status: Promise<number> }> {
    let answer!: () => void;
    let read!: () => void;
    const readDone = new Promise<void>((done) => (read = done));
    held = { waiting: true, read, answered: new Promise((done) => (answer = done)), answer: () => answer() };
    const status = request();
    await readDone;
    return { status };
  }

  beforeAll(() => {
    process.env[ROUTE_SCOPES_ENV] = encodeRoutePermissions(ROUTES, API_PREFIX);
    process.env[USAGE_PLAN_KEY_PREFIX_ENV] = usagePlanKeyPrefixOf(STACK);
    process.env[USAGE_PLAN_BUCKETS_ENV] = String(DEFAULT_USAGE_PLAN_BUCKETS);
  });
  beforeEach(() => {
    cache = new Map();
    held = undefined;
    rows = {
      key: {
        ...keyRow,
        pk: `KEYHASH#${hash}`,
        prefix,
        scopes: ['sms.send'],
        revokedAt: null,
        replacedBy: null,
        usagePlanKey: 'bucket',
      },
      tenant: { ...tenantRow, billingStatus: 'active', createdAt: '2026-10-01T00:00:00.000Z' },
    };
    givenStack();
    ddb
      .on(GetCommand, { Key: { pk: `KEYHASH#${hash}`, sk: 'APIKEY' } })
      .callsFake(async () => ({ Item: { ...rows.key } }));
    ddb.on(GetCommand, { Key: { pk: `T#${tenantId}`, sk: 'TENANT' } }).callsFake(async (input) => {
      const Item = { ...rows.tenant };
      if (input.ConsistentRead && held?.waiting) {
        held.waiting = false;
        held.read();
        await held.answered;
      }
      return { Item };
    });
    ddb.on(QueryCommand).callsFake(async () => ({ Items: [{ ...rows.key }] }));
    ddb.on(UpdateCommand).callsFake(async (input) => {
      rows.key = { ...rows.key, revokedAt: input.ExpressionAttributeValues[':now'] };
      return { Attributes: { ...rows.key } };
    });
    ddb.on(TransactWriteCommand).callsFake(async (input) => {
      for (const { Update } of input.TransactItems) {
        const values = Update?.ExpressionAttributeValues ?? {};
        if (Update?.Key.pk === rows.key.pk)
          rows.key = { ...rows.key, expiresAt: values[':expiresAt'], replacedBy: values[':newId'] };
        if (Update?.Key.pk === `T#${tenantId}`)
          rows.tenant = { ...rows.tenant, plan: values[':plan'], updatedAt: values[':updatedAt'] };
      }
      return {};
    });
    apigw.on(FlushStageAuthorizersCacheCommand).callsFake(async () => {
      steps.push('flush');
      cache.clear();
      // The decision in flight answers just after the first flush, as the window needs.
      if (steps.length === 1) held?.answer();
      return {};
    });
    // The wait: whatever was in flight when it began has answered (and been cached) by its end,
    // since Lambda ends an authorizer invocation at its timeout, which the wait exceeds.
    jest.spyOn(stageClock, 'sleep').mockImplementation(async (ms) => {
      steps.push(`wait ${ms} ms`);
      if (ms > AUTHORIZER_TIMEOUT_SECONDS * 1000) await new Promise((settled) => setImmediate(settled));
    });
  });

  it.each([
    ['key revoke', 401, ['key', 'revoke', keyId]],
    ['key rotate --grace 0', 401, ['key', 'rotate', keyId, '--grace', '0']],
    ['tenant update --plan starter', 403, ['tenant', 'update', tenantId, '--plan', 'starter']],
  ])('%s: the next request after the command returns is refused (%i)', async (_command, refused, argv) => {
    // Prepare: a request whose authorizer read the rows before the command, its answer held
    const inFlight = await requestHeldAfterItsReads();
    // Act
    const result = await admin('--stack', STACK, ...(argv as string[]));
    const next = await request();
    // Assess: the decision in flight was the old allow, and it was cached, then flushed
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(await inFlight.status).toBe(200);
    expect(next).toBe(refused);
    expect(steps).toEqual(['flush', `wait ${IN_FLIGHT_DECISION_BOUND_MS} ms`, 'flush']);
  });
});
