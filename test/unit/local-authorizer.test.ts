import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { AuthorizerTimeoutError, invokeAuthorizer, methodArnOf, policyAllows } from '../../local/authorizer';
import authorizerOutputFixture from '../fixtures/aws/authorizer-output.json';

const stage = 'arn:aws:execute-api:local:000000000000:local/local';
const result = (
  ...statements: { Effect: 'Allow' | 'Deny'; Resource: string | string[] }[]
): APIGatewayAuthorizerResult => ({
  principalId: 'k1',
  policyDocument: { Version: '2012-10-17', Statement: statements.map((s) => ({ Action: 'execute-api:Invoke', ...s })) },
});

describe('the local evaluation of an authorizer policy', () => {
  it('allows a method ARN an Allow names, a * standing for a path parameter', () => {
    const policy = result({ Effect: 'Allow', Resource: [`${stage}/GET/api/v1/contacts/*`, `${stage}/GET/api/v1/me`] });

    expect(
      policyAllows(policy, methodArnOf('local', 'GET', '/api/v1/contacts/0199a000-0000-7000-8000-0000000000c1')),
    ).toBe(true);
    expect(policyAllows(policy, methodArnOf('local', 'GET', '/api/v1/me'))).toBe(true);
    expect(
      policyAllows(policy, methodArnOf('local', 'DELETE', '/api/v1/contacts/0199a000-0000-7000-8000-0000000000c1')),
    ).toBe(false);
    expect(policyAllows(policy, methodArnOf('local', 'GET', '/api/v1/contacts'))).toBe(false);
  });

  it('lets an explicit Deny win over an Allow, as IAM does', () => {
    const policy = result({ Effect: 'Allow', Resource: `${stage}/*` }, { Effect: 'Deny', Resource: `${stage}/POST/*` });

    expect(policyAllows(policy, methodArnOf('local', 'GET', '/api/v1/me'))).toBe(true);
    expect(policyAllows(policy, methodArnOf('local', 'POST', '/api/v1/messages'))).toBe(false);
  });

  it('denies what the Deny of the output AWS documents names', () => {
    const documented = authorizerOutputFixture as APIGatewayAuthorizerResult;

    expect(policyAllows(documented, 'arn:aws:execute-api:us-west-2:123456789012:ymy8tbxw7b/prod/GET/')).toBe(false);
  });
});

describe('the local invocation of the authorizer', () => {
  it('sends the TOKEN event and keeps the policy it answers', async () => {
    const handler = jest.fn(async () => result({ Effect: 'Allow', Resource: `${stage}/*` }));

    const outcome = await invokeAuthorizer(handler, 'Bearer k', `${stage}/GET/api/v1/me`);

    expect(handler).toHaveBeenCalledWith({
      type: 'TOKEN',
      authorizationToken: 'Bearer k',
      methodArn: `${stage}/GET/api/v1/me`,
    });
    expect(outcome).toMatchObject({ kind: 'policy', result: { principalId: 'k1' } });
  });

  it('ends an invocation at the authorizer function’s timeout, as Lambda does, and never uses its late answer', async () => {
    let answer!: (result: APIGatewayAuthorizerResult) => void;
    const handler = () => new Promise<APIGatewayAuthorizerResult>((resolve) => (answer = resolve));

    const outcome = invokeAuthorizer(handler, 'Bearer k', `${stage}/GET/api/v1/me`, 20).catch((err: Error) => err);
    const ended = await outcome;
    answer(result({ Effect: 'Allow', Resource: `${stage}/*` }));

    expect(ended).toBeInstanceOf(AuthorizerTimeoutError);
    expect(await outcome).toBe(ended);
  });

  it('takes a thrown "Unauthorized" for the 401 and lets any other failure through (a 500)', async () => {
    const refused = await invokeAuthorizer(
      async () => Promise.reject(new Error('Unauthorized')),
      'Bearer k',
      `${stage}/GET/api/v1/me`,
    );
    const failing = invokeAuthorizer(
      async () => Promise.reject(new Error('table unreachable')),
      'Bearer k',
      `${stage}/GET/api/v1/me`,
    );

    expect(refused).toEqual({ kind: 'unauthorized' });
    await expect(failing).rejects.toThrow('table unreachable');
  });
});
