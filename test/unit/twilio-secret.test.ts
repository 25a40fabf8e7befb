import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { clearCaches } from '@aws-lambda-powertools/parameters';
import { carrierRoutes } from '../../lambdas/handlers/carrier/routes';
import { callbackHandler } from '../../lambdas/handlers/carrier/callback-handler';
import { CarrierError } from '../../lambdas/contexts/texting/carrier-port';
import { createCarrier } from '../../lambdas/contexts/carrier/create-carrier';
import { TwilioCarrier } from '../../lambdas/contexts/carrier/internal/twilio';
import { callbackConfigFromEnv } from '../../lambdas/contexts/carrier/callback-config';
import { CALLBACK_CONNECTION_OVERRIDES } from '../../lambdas/contexts/carrier/callback-protection';
import { smsStatusCallback } from '../../lambdas/contexts/carrier/callbacks';
import { computeTwilioSignature } from '../../lambdas/contexts/carrier/signature';
import {
  parseTwilioSecret,
  pendingTwilioSecretRefresh,
  preloadTwilioSecret,
  readTwilioSecret,
  resetTwilioSecretSnapshot,
  SECRET_MAX_AGE_SECONDS,
  twilioCredentialSource,
  twilioSecretNow,
} from '../../lambdas/contexts/carrier/internal/twilio-secret';

const secrets = mockClient(SecretsManagerClient);
const ddb = mockClient(DynamoDBDocumentClient);
const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:cct-twilio-AbC123';
const CREDENTIALS = { accountSid: 'AC0123456789abcdef0123456789abcdef', authToken: 'token-from-the-secret' };

const givenSecret = (value: unknown) =>
  secrets
    .on(GetSecretValueCommand, { SecretId: SECRET_ARN })
    .resolves({ ARN: SECRET_ARN, SecretString: JSON.stringify(value) });

const savedEnv = { ...process.env };
const START = Date.parse('2026-11-21T10:00:00Z');
/** Moves the clock (only the clock: timers and I/O run for real), for Powertools' cache and the snapshot alike. */
const later = (seconds: number) => jest.setSystemTime(Date.now() + seconds * 1000);
beforeEach(() => {
  jest.useFakeTimers({
    now: START,
    doNotFake: [
      'nextTick',
      'setImmediate',
      'clearImmediate',
      'setTimeout',
      'clearTimeout',
      'setInterval',
      'clearInterval',
      'queueMicrotask',
      'hrtime',
      'performance',
    ],
  });
  secrets.reset();
  ddb.reset();
  clearCaches();
  resetTwilioSecretSnapshot();
  process.env = { ...savedEnv };
  delete process.env.AWS_LAMBDA_FUNCTION_NAME;
  delete process.env.TWILIO_SECRET_ARN;
});
afterEach(() => {
  jest.useRealTimers();
  jest.restoreAllMocks();
});

/** In Lambda, with the stack's environment. */
const inLambdaWithSecret = () =>
  Object.assign(process.env, { AWS_LAMBDA_FUNCTION_NAME: 'cct-fn', TWILIO_SECRET_ARN: SECRET_ARN });

describe('where the Twilio credentials come from', () => {
  it('is the secret when TWILIO_SECRET_ARN is set, else the environment outside Lambda', () => {
    expect(twilioCredentialSource()).toEqual({ kind: 'environment' });
    process.env.TWILIO_SECRET_ARN = SECRET_ARN;
    expect(twilioCredentialSource()).toEqual({ kind: 'secret', secretArn: SECRET_ARN });
  });

  it('refuses plain environment credentials inside Lambda', () => {
    Object.assign(process.env, {
      AWS_LAMBDA_FUNCTION_NAME: 'cct-fn',
      TWILIO_AUTH_TOKEN: 'plain',
      TWILIO_ACCOUNT_SID: 'ACplain',
    });

    expect(() => twilioCredentialSource()).toThrow(/TWILIO_SECRET_ARN.*never from plain environment variables/);
  });

  it('names the missing field of an unfilled secret, never a value', () => {
    expect(() => parseTwilioSecret({ accountSid: '', authToken: '' }, SECRET_ARN)).toThrow(
      `secret ${SECRET_ARN} has no accountSid yet`,
    );
    expect(() => parseTwilioSecret({ accountSid: 'AC1', authToken: ' ' }, SECRET_ARN)).toThrow('has no authToken yet');
    expect(() => parseTwilioSecret('AC1:token', SECRET_ARN)).toThrow('is not a JSON object');
    expect(() => parseTwilioSecret(['AC1'], SECRET_ARN)).toThrow('is not a JSON object');
    expect(parseTwilioSecret({ ...CREDENTIALS, note: 'x' }, SECRET_ARN)).toEqual(CREDENTIALS);
  });
});

describe('reading the secret through Powertools', () => {
  it('sends one GetSecretValue and serves further reads from the cache until it is 5 minutes old', async () => {
    givenSecret(CREDENTIALS);

    await expect(readTwilioSecret(SECRET_ARN)).resolves.toEqual(CREDENTIALS);
    await expect(readTwilioSecret(SECRET_ARN)).resolves.toEqual(CREDENTIALS);

    expect(secrets).toHaveReceivedCommandTimes(GetSecretValueCommand, 1);
    expect(secrets).toHaveReceivedCommandWith(GetSecretValueCommand, { SecretId: SECRET_ARN });
    expect(SECRET_MAX_AGE_SECONDS).toBe(300);
  });

  it('fails naming the secret when Secrets Manager refuses or the value is no JSON', async () => {
    secrets
      .on(GetSecretValueCommand)
      .rejectsOnce(Object.assign(new Error('User is not authorized'), { name: 'AccessDeniedException' }));
    await expect(readTwilioSecret(SECRET_ARN)).rejects.toThrow(
      `Could not read the Twilio credentials from Secrets Manager secret ${SECRET_ARN}`,
    );

    secrets.on(GetSecretValueCommand).resolves({ SecretString: 'AC0123456789:the-auth-token' });
    const notJson = await readTwilioSecret(SECRET_ARN, { forceFetch: true }).catch((err: Error) => err);
    // JSON.parse's own message would quote the value: none of it may reach a log.
    expect(notJson).toEqual(
      new Error(
        `Could not read the Twilio credentials from Secrets Manager secret ${SECRET_ARN}: its value is not JSON`,
      ),
    );
    expect((notJson as Error).cause).toBeUndefined();
  });
});

describe('the snapshot read at init', () => {
  it('is nothing to load without a secret', async () => {
    await preloadTwilioSecret();

    expect(secrets.calls()).toHaveLength(0);
  });

  it('fails the init when the secret is still the stack’s empty template', async () => {
    inLambdaWithSecret();
    givenSecret({ accountSid: '', authToken: '' });

    await expect(preloadTwilioSecret()).rejects.toThrow('has no accountSid yet');
  });

  it('serves synchronously once loaded, and refreshes in the background after 5 minutes', async () => {
    inLambdaWithSecret();
    givenSecret(CREDENTIALS);
    expect(() => twilioSecretNow(SECRET_ARN)).toThrow(/not loaded at init/);

    await preloadTwilioSecret();
    expect(twilioSecretNow(SECRET_ARN)).toEqual(CREDENTIALS);

    const rotated = { ...CREDENTIALS, authToken: 'rotated-token' };
    givenSecret(rotated);
    later(SECRET_MAX_AGE_SECONDS + 1);
    // Powertools' cache runs on the same clock, so the refresh really asks Secrets Manager.
    expect(twilioSecretNow(SECRET_ARN)).toEqual(CREDENTIALS);
    await pendingTwilioSecretRefresh();
    expect(twilioSecretNow(SECRET_ARN)).toEqual(rotated);
    expect(secrets).toHaveReceivedCommandTimes(GetSecretValueCommand, 2);
  });

  it('keeps the last good credentials when a refresh fails, and reports it', async () => {
    inLambdaWithSecret();
    givenSecret(CREDENTIALS);
    await preloadTwilioSecret();
    secrets.on(GetSecretValueCommand).rejects(new Error('throttled'));
    const reported: Error[] = [];

    later(SECRET_MAX_AGE_SECONDS + 1);
    twilioSecretNow(SECRET_ARN, (err) => reported.push(err));
    await pendingTwilioSecretRefresh();

    expect(twilioSecretNow(SECRET_ARN)).toEqual(CREDENTIALS);
    expect(reported.map((e) => e.message)).toEqual([expect.stringContaining('throttled')]);
  });
});

describe('the callback configuration', () => {
  it('reads the auth token from the environment outside Lambda (local runtime, tests)', () => {
    Object.assign(process.env, { TWILIO_AUTH_TOKEN: 'local-token', PUBLIC_BASE_URL: 'http://127.0.0.1:3000/' });

    expect(callbackConfigFromEnv()).toEqual({ authToken: 'local-token', publicBaseUrl: 'http://127.0.0.1:3000' });
  });

  it('refuses TWILIO_AUTH_TOKEN in Lambda, and a secret the init did not load', () => {
    Object.assign(process.env, {
      AWS_LAMBDA_FUNCTION_NAME: 'cct-fn',
      TWILIO_AUTH_TOKEN: 'plain',
      PUBLIC_BASE_URL: 'https://api.example.com',
    });
    expect(() => callbackConfigFromEnv()).toThrow(/TWILIO_SECRET_ARN/);

    process.env.TWILIO_SECRET_ARN = SECRET_ARN;
    expect(() => callbackConfigFromEnv()).toThrow(/not loaded at init/);
  });

  it('takes the current token from the secret on every read', async () => {
    inLambdaWithSecret();
    process.env.PUBLIC_BASE_URL = 'https://abc.execute-api.eu-west-1.amazonaws.com/dev';
    givenSecret(CREDENTIALS);
    await preloadTwilioSecret();

    const config = callbackConfigFromEnv();
    expect(config).toMatchObject({
      authToken: CREDENTIALS.authToken,
      publicBaseUrl: 'https://abc.execute-api.eu-west-1.amazonaws.com/dev',
    });

    givenSecret({ ...CREDENTIALS, authToken: 'rotated-token' });
    later(SECRET_MAX_AGE_SECONDS + 1);
    void config.authToken;
    await pendingTwilioSecretRefresh();
    expect(config.authToken).toBe('rotated-token');
  });

  it('verifies a callback signed with the secret’s token and refuses one signed with another', async () => {
    inLambdaWithSecret();
    const publicBaseUrl = 'https://abc.execute-api.eu-west-1.amazonaws.com/dev';
    process.env.PUBLIC_BASE_URL = publicBaseUrl;
    givenSecret(CREDENTIALS);
    await preloadTwilioSecret();
    const handler = callbackHandler(carrierRoutes.twilioSmsStatus, smsStatusCallback);
    // No organization has the number: answered 200 (so Twilio does not retry) once the signature holds.
    ddb.on(GetCommand).resolves({});
    ddb.on(BatchGetCommand).resolves({ Responses: {} });
    const params = {
      MessageSid: 'SM0123456789abcdef0123456789abcdef',
      MessageStatus: 'sending',
      From: '+14155550000',
      To: '+14155550100',
      AccountSid: CREDENTIALS.accountSid,
    };
    const body = new URLSearchParams(params).toString();
    const url = `${publicBaseUrl}${carrierRoutes.twilioSmsStatus.path}`;
    const event = (token: string) => ({
      body,
      isBase64Encoded: false,
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        'X-Twilio-Signature': computeTwilioSignature(url, params, token),
      },
      multiValueQueryStringParameters: null,
    });
    const context = { awsRequestId: 'r1', functionName: 'cct-fn', getRemainingTimeInMillis: () => 10_000 };

    const wrong = await handler(event('another-token') as never, context as never);

    expect(wrong.statusCode).toBe(403);
    const right = await handler(event(CREDENTIALS.authToken) as never, context as never);
    expect(right.statusCode).toBe(200);
    expect(ddb).toHaveReceivedCommand(BatchGetCommand);
  });
});

describe('the carrier from configuration', () => {
  it('refuses the loopback carrier inside Lambda', () => {
    Object.assign(process.env, { CARRIER: 'loopback', AWS_LAMBDA_FUNCTION_NAME: 'cct-fn' });

    expect(() => createCarrier()).toThrow('CARRIER=loopback is for the local runtime and tests only');
  });

  it('refuses plain Twilio credentials inside Lambda', () => {
    Object.assign(process.env, {
      CARRIER: 'twilio',
      AWS_LAMBDA_FUNCTION_NAME: 'cct-fn',
      TWILIO_ACCOUNT_SID: 'AC1',
      TWILIO_AUTH_TOKEN: 'plain',
    });

    expect(() => createCarrier()).toThrow(/TWILIO_SECRET_ARN/);
  });

  it('sends with the secret’s credentials, read through the cache, when TWILIO_SECRET_ARN is set', async () => {
    Object.assign(inLambdaWithSecret(), {
      CARRIER: 'twilio',
      TWILIO_BASE_URL: 'https://twilio.test',
      TWILIO_STATUS_CALLBACK_URL: 'https://api.example.com/carrier/twilio/sms/status',
    });
    givenSecret(CREDENTIALS);
    await preloadTwilioSecret();
    const fetch = jest
      .spyOn(globalThis, 'fetch')
      .mockResolvedValue(new Response(JSON.stringify({ sid: 'SM1' }), { status: 201 }));

    const carrier = createCarrier();
    const receipt = await carrier.send({
      tenantId: 't1',
      messageId: 'm1',
      from: '+14155550000',
      to: '+14155550100',
      body: 'hi',
    });

    expect(carrier).toBeInstanceOf(TwilioCarrier);
    expect(receipt).toEqual({ messageSid: 'SM1' });
    const [url, init] = fetch.mock.calls[0] as [string, RequestInit];
    expect(url).toBe(`https://twilio.test/2010-04-01/Accounts/${CREDENTIALS.accountSid}/Messages.json`);
    expect((init.headers as Record<string, string>).Authorization).toBe(
      `Basic ${Buffer.from(`${CREDENTIALS.accountSid}:${CREDENTIALS.authToken}`).toString('base64')}`,
    );
    expect(new URLSearchParams(init.body as string).get('StatusCallback')).toBe(
      `https://api.example.com/carrier/twilio/sms/status?messageId=m1#${CALLBACK_CONNECTION_OVERRIDES}`,
    );
    // The preload's read is the one and only Secrets Manager call.
    expect(secrets).toHaveReceivedCommandTimes(GetSecretValueCommand, 1);
  });

  it('fails at init when the secret was not loaded, and a send whose credentials cannot be read as a carrier failure', async () => {
    Object.assign(inLambdaWithSecret(), { CARRIER: 'twilio' });
    expect(() => createCarrier()).toThrow(/not loaded at init/);

    const carrier = new TwilioCarrier({
      credentials: () => Promise.reject(new Error('AccessDenied')),
      baseUrl: 'https://twilio.test',
    });
    const fetch = jest.spyOn(globalThis, 'fetch');
    const sent = carrier.send({
      tenantId: 't1',
      messageId: 'm1',
      from: '+14155550000',
      to: '+14155550100',
      body: 'hi',
    });

    await expect(sent).rejects.toBeInstanceOf(CarrierError);
    await expect(sent).rejects.toMatchObject({
      message: 'The Twilio credentials could not be read',
      details: { kind: 'not_sent' },
    });
    expect(fetch).not.toHaveBeenCalled();
  });
});
