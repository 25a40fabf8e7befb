import { parseRuntimeArgs } from '../../local/cli-args';
import { UsageError } from '../../local/usage-error';

describe('npm start options', () => {
  it('defaults to port 3000, state in .local, data kept, a 300 s authorizer cache and the rate limits of the spec', () => {
    const parsed = parseRuntimeArgs([]);

    expect(parsed).toEqual({
      help: false,
      options: {
        port: 3000,
        stateDir: '.local',
        inMemory: false,
        dynamodbEndpoint: undefined,
        authorizerCacheTtlSeconds: 300,
        rateLimitPerKey: 120,
        rateLimitPerNetwork: 600,
        stopWithPid: undefined,
        webhookBackoffMs: 60_000,
        webhookTimeoutMs: 10_000,
        allowHttpWebhooks: false,
        textGraceMs: 3_600_000,
        scheduledTextsEveryMs: 10_000,
        scheduledTextsLeadMs: 0,
        twilioAuthToken: undefined,
        publicUrl: undefined,
        logLevel: 'error',
        // The stack's defaults: each callback method's throttle and the WAF's callback limit per address.
        carrierCallbacks: { rateLimit: 50, burstLimit: 100, limitPerMinutePerAddress: 1200 },
        dynamodbLimits: undefined,
      },
    });
  });

  it('reads every option', () => {
    const parsed = parseRuntimeArgs([
      '--port',
      '8080',
      '--state-dir',
      '/tmp/cct',
      '--dynamodb-endpoint',
      'http://127.0.0.1:8000/',
      '--authorizer-cache-ttl',
      '0',
      '--rate-limit-per-key',
      '1000',
      '--rate-limit-per-network',
      '0',
      '--stop-with-pid',
      '4242',
      '--webhook-backoff-ms',
      '20',
      '--webhook-timeout-ms',
      '500',
      '--allow-http-webhooks',
      '--text-grace-ms',
      '2000',
      '--twilio-auth-token',
      'a-token',
      '--public-url',
      'https://abc.tunnel.example/',
      '--log-level',
      'DEBUG',
      '--callback-rate-limit',
      '5',
      '--callback-burst-limit',
      '8',
      '--callback-limit-per-address',
      '0',
      '--dynamodb-limits',
      '--transaction-hold-ms',
      '5',
      '--partition-write-units',
      '10',
      '--item-write-units',
      '0',
      '--partition-read-units',
      '30',
      '--scheduled-texts-every-ms',
      '500',
      '--scheduled-texts-lead-ms',
      '70000',
    ]);

    expect(parsed).toEqual({
      help: false,
      options: {
        port: 8080,
        stateDir: '/tmp/cct',
        inMemory: false,
        dynamodbEndpoint: 'http://127.0.0.1:8000',
        authorizerCacheTtlSeconds: 0,
        rateLimitPerKey: 1000,
        rateLimitPerNetwork: 0,
        stopWithPid: 4242,
        webhookBackoffMs: 20,
        webhookTimeoutMs: 500,
        allowHttpWebhooks: true,
        textGraceMs: 2000,
        scheduledTextsEveryMs: 500,
        scheduledTextsLeadMs: 70_000,
        twilioAuthToken: 'a-token',
        // As written, without the trailing slash: the carrier signs the URL it was configured with.
        publicUrl: 'https://abc.tunnel.example',
        logLevel: 'debug',
        carrierCallbacks: { rateLimit: 5, burstLimit: 8, limitPerMinutePerAddress: 0 },
        dynamodbLimits: {
          transactionHoldMs: 5,
          budgets: {
            partitionWriteUnits: 10,
            indexPartitionWriteUnits: 10,
            itemWriteUnits: 0,
            partitionReadUnits: 30,
            itemReadUnits: 30,
          },
        },
      },
    });
  });

  it("puts the limits engine in front of DynamoDB Local with DynamoDB's defaults: a 25 ms hold, 1,000 write and 3,000 read units per second", () => {
    const parsed = parseRuntimeArgs(['--dynamodb-limits']);

    expect(parsed.help === false && parsed.options.dynamodbLimits).toEqual({
      transactionHoldMs: 25,
      budgets: {
        partitionWriteUnits: 1000,
        indexPartitionWriteUnits: 1000,
        itemWriteUnits: 1000,
        partitionReadUnits: 3000,
        itemReadUnits: 3000,
      },
    });
  });

  it('refuses a limits option without --dynamodb-limits, rather than ignore it', () => {
    expect(() => parseRuntimeArgs(['--transaction-hold-ms', '50'])).toThrow(
      '--transaction-hold-ms: only applies with --dynamodb-limits',
    );
  });

  it('names the levels when --log-level is not one of them', () => {
    expect(() => parseRuntimeArgs(['--log-level', 'loud'])).toThrow(
      '--log-level: must be one of debug, info, warn, error, silent',
    );
  });

  it('answers help', () => {
    expect(parseRuntimeArgs(['--help'])).toEqual({ help: true });
    expect(parseRuntimeArgs(['-h'])).toEqual({ help: true });
  });

  it.each([
    ['an unknown option', ['--verbose'], /verbose/],
    ['a positional argument', ['3000'], /3000/],
    ['a port that is not a number', ['--port', 'http'], /^--port: /],
    ['a port out of range', ['--port', '70000'], /^--port: /],
    ['a negative cache TTL', ['--authorizer-cache-ttl', '-1'], /authorizer-cache-ttl/],
    ['a rate limit that is not a whole number', ['--rate-limit-per-key', '1.5'], /^--rate-limit-per-key: /],
    ['a cache TTL over API Gateway’s hour', ['--authorizer-cache-ttl', '3601'], /^--authorizer-cache-ttl: .*3600/],
    ['an endpoint that is not a URL', ['--dynamodb-endpoint', 'localhost:8000'], /^--dynamodb-endpoint: /],
    ['--in-memory with an endpoint', ['--in-memory', '--dynamodb-endpoint', 'http://127.0.0.1:8000'], /--in-memory/],
    ['a zero backoff', ['--webhook-backoff-ms', '0'], /^--webhook-backoff-ms: /],
    ['a timeout that is not a number', ['--webhook-timeout-ms', '1s'], /^--webhook-timeout-ms: /],
    ['an empty token', ['--twilio-auth-token', ''], /^--twilio-auth-token: /],
    ['a public URL that is not a URL', ['--public-url', 'example.com'], /^--public-url: /],
    ['a public URL with a query string', ['--public-url', 'https://example.com/?a=1'], /^--public-url: /],
    [
      'a callback burst below its rate',
      ['--callback-rate-limit', '10', '--callback-burst-limit', '5'],
      /^--callback-burst-limit: /,
    ],
    [
      'a callback limit that is not a number',
      ['--callback-limit-per-address', 'many'],
      /^--callback-limit-per-address: /,
    ],
  ])('refuses %s with a usage error naming it', (_name, argv, message) => {
    expect(() => parseRuntimeArgs(argv)).toThrow(UsageError);
    expect(() => parseRuntimeArgs(argv)).toThrow(message);
  });
});
