import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  GetApiKeysCommand,
} from '@aws-sdk/client-api-gateway';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { keyCreate, keyRevoke } from '../../local/admin/commands/key';
import { runAdmin } from '../../local/admin/main';
import { defineCommand } from '../../local/admin/registry';

const cfn = mockClient(CloudFormationClient);
const apigw = mockClient(APIGatewayClient);
const ddb = mockClient(DynamoDBDocumentClient);

const STACK = 'CctService-dev';
const tenantId = '0199a000-0000-7000-8000-000000000001';
const keyId = '0199a000-0000-7000-8000-0000000000aa';
const OUTPUTS = {
  TableName: 'CctService-dev-DataTable-ABC',
  UsagePlanId: 'up1234',
  ApiBaseUrl: 'https://abc123.execute-api.eu-west-1.amazonaws.com/dev/api/v1',
  ApiId: 'abc123',
};

/** What every command sees of the target: the table it would work on. */
const where = defineCommand({
  words: ['where', 'am'],
  summary: 'Print the table',
  usage: '',
  options: {},
  parse: () => undefined,
  run: async () => ({ table: process.env.TABLE_NAME, endpoint: process.env.DYNAMODB_ENDPOINT ?? null, region: process.env.AWS_REGION }),
});

async function admin(...argv: string[]) {
  const out = { stdout: '', stderr: '' };
  const code = await runAdmin(argv, { stdout: (t) => (out.stdout += t), stderr: (t) => (out.stderr += t) }, [keyCreate, keyRevoke, where]);
  return { code, ...out, json: out.stdout ? JSON.parse(out.stdout) : undefined };
}

const givenStack = (status = 'UPDATE_COMPLETE', outputs: Record<string, string> = OUTPUTS) =>
  cfn.on(DescribeStacksCommand, { StackName: STACK }).resolves({
    Stacks: [
      {
        StackName: STACK,
        StackStatus: status,
        CreationTime: new Date(),
        Outputs: Object.entries(outputs).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
      } as never,
    ],
  });

const givenTenant = () =>
  ddb.on(GetCommand, { Key: { pk: `T#${tenantId}`, sk: 'TENANT' } }).resolves({ Item: { id: tenantId, name: 'Acme', slug: 'acme', plan: 'pro' } });

const keyRow = { pk: 'KEYHASH#h', sk: 'APIKEY', id: keyId, tenantId, name: 'k', prefix: 'cct_abcdefgh', scopes: ['sms.send'], expiresAt: null, createdAt: '2026-10-01T00:00:00.000Z' };

const savedEnv = { ...process.env };
beforeEach(() => {
  cfn.reset();
  apigw.reset();
  ddb.reset();
});
afterEach(() => {
  process.env = { ...savedEnv };
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
    ['a stack that does not exist', () => cfn.on(DescribeStacksCommand).rejects(Object.assign(new Error(`Stack with id ${STACK} does not exist`), { name: 'ValidationError' })), /Stack CctService-dev not found in eu-west-1/],
    ['a stack that is not deployed', () => givenStack('ROLLBACK_COMPLETE'), /is ROLLBACK_COMPLETE, not deployed/],
    ['a stack of something else', () => givenStack('CREATE_COMPLETE', { ApiId: 'x' }), /has no output TableName, UsagePlanId, ApiBaseUrl/],
  ])('fails with exit 1 on %s', async (_name, given, message) => {
    given();

    const result = await admin('--stack', STACK, '--region', 'eu-west-1', 'where', 'am');

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message);
  });

  it('refuses --stack with --table-name, and --region without --stack', async () => {
    expect((await admin('--stack', STACK, '--table-name', 't', 'where', 'am')).stderr).toMatch(/leave out --table-name/);
    expect((await admin('--table-name', 't', '--dynamodb-endpoint', 'http://127.0.0.1:1', '--region', 'eu-west-1', 'where', 'am')).stderr).toMatch(
      /--region goes with --stack/,
    );
    expect(cfn.calls()).toHaveLength(0);
  });
});

describe('key create --stack', () => {
  it('issues the key in the stack table, then its API Gateway key (value usage-<key id>) in the stack usage plan', async () => {
    givenStack();
    givenTenant();
    ddb.on(PutCommand).resolves({});
    apigw.on(CreateApiKeyCommand).resolves({ id: 'gwkey1' });
    apigw.on(CreateUsagePlanKeyCommand).resolves({ id: 'gwkey1', type: 'API_KEY' });

    const result = await admin('--stack', STACK, 'key', 'create', '--tenant', tenantId, '--scopes', 'sms.send');

    expect(result).toMatchObject({ code: 0, stderr: '' });
    const { key, apiKey, usagePlanKey, baseUrl } = result.json;
    expect(key).toMatch(/^cct_/);
    expect(usagePlanKey).toEqual({ apiGatewayKeyId: 'gwkey1', usagePlanId: 'up1234' });
    expect(baseUrl).toBe(OUTPUTS.ApiBaseUrl);
    expect(ddb).toHaveReceivedCommandWith(PutCommand, { Item: expect.objectContaining({ id: apiKey.id, tenantId, scopes: ['sms.send'] }) });
    expect(apigw).toHaveReceivedCommandWith(CreateApiKeyCommand, {
      name: `usage-${apiKey.id}`,
      value: `usage-${apiKey.id}`,
      enabled: true,
      description: expect.stringContaining(apiKey.id),
    });
    expect(apigw).toHaveReceivedCommandWith(CreateUsagePlanKeyCommand, { usagePlanId: 'up1234', keyId: 'gwkey1', keyType: 'API_KEY' });
    // The full key never leaves the CLI's output: not in the API Gateway key, not in its description.
    expect(JSON.stringify(apigw.calls().map((c) => c.args[0].input))).not.toContain(key);
  });

  it('revokes the new key again and prints no key when its API Gateway key cannot be made', async () => {
    givenStack();
    givenTenant();
    ddb.on(PutCommand).resolves({});
    ddb.on(QueryCommand).callsFake(async (input) => ({ Items: [{ ...keyRow, id: input.ExpressionAttributeValues[':pk'].slice('AKID#'.length), revokedAt: null }] }));
    ddb.on(UpdateCommand).resolves({ Attributes: { ...keyRow, revokedAt: '2026-11-21T10:00:00.000Z' } });
    apigw.on(CreateApiKeyCommand).resolves({ id: 'gwkey1' });
    apigw.on(CreateUsagePlanKeyCommand).rejects(Object.assign(new Error('Invalid Usage Plan ID'), { name: 'NotFoundException' }));
    apigw.on(DeleteApiKeyCommand).resolves({});

    const result = await admin('--stack', STACK, 'key', 'create', '--tenant', tenantId);

    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/Could not create the API Gateway key for the new API key .* which was revoked again: Invalid Usage Plan ID/);
    expect(apigw).toHaveReceivedCommandWith(DeleteApiKeyCommand, { apiKey: 'gwkey1' });
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, { UpdateExpression: expect.stringContaining('SET revokedAt = :now') });
  });

  it('refuses to issue a key in an AWS table without --stack (it would lack its usage-plan key)', async () => {
    const result = await admin('--table-name', OUTPUTS.TableName, 'key', 'create', '--tenant', tenantId);

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/give --stack <name>/);
    expect(ddb.calls()).toHaveLength(0);
  });

  it('issues a plain key in the local runtime (DynamoDB Local): no usage plans there', async () => {
    givenTenant();
    ddb.on(PutCommand).resolves({});

    const result = await admin('--table-name', 'cct-local', '--dynamodb-endpoint', 'http://127.0.0.1:8000', 'key', 'create', '--tenant', tenantId);

    expect(result.code).toBe(0);
    expect(Object.keys(result.json).sort()).toEqual(['apiKey', 'key']);
    expect(apigw.calls()).toHaveLength(0);
    expect(cfn.calls()).toHaveLength(0);
  });
});

describe('key revoke --stack', () => {
  beforeEach(() => {
    givenStack();
    ddb.on(QueryCommand).resolves({ Items: [{ ...keyRow, revokedAt: null }] });
    ddb.on(UpdateCommand).resolves({ Attributes: { ...keyRow, revokedAt: '2026-11-21T10:00:00.000Z' } });
  });

  it('revokes the key in the table, then deletes its API Gateway key', async () => {
    apigw
      .on(GetApiKeysCommand)
      .resolves({ items: [{ id: 'other', name: `usage-${keyId}-not-this-one` }, { id: 'gwkey1', name: `usage-${keyId}` }] });
    apigw.on(DeleteApiKeyCommand).resolves({});

    const result = await admin('--stack', STACK, 'key', 'revoke', keyId);

    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.json).toEqual({
      apiKey: expect.objectContaining({ id: keyId, revokedAt: '2026-11-21T10:00:00.000Z' }),
      usagePlanKey: { apiGatewayKeyId: 'gwkey1', deleted: true },
    });
    expect(ddb).toHaveReceivedCommandWith(UpdateCommand, { UpdateExpression: expect.stringContaining('SET revokedAt = :now') });
    expect(apigw).toHaveReceivedCommandWith(GetApiKeysCommand, { nameQuery: `usage-${keyId}`, includeValues: false });
    expect(apigw).toHaveReceivedCommandWith(DeleteApiKeyCommand, { apiKey: 'gwkey1' });
    expect(apigw).toHaveReceivedCommandTimes(DeleteApiKeyCommand, 1);
  });

  it('revokes a key that never had an API Gateway key, and says so', async () => {
    apigw.on(GetApiKeysCommand).resolves({ items: [] });

    const result = await admin('--stack', STACK, 'key', 'revoke', keyId);

    expect(result.code).toBe(0);
    expect(result.json.usagePlanKey).toBeNull();
    expect(apigw).not.toHaveReceivedCommand(DeleteApiKeyCommand);
  });
});
