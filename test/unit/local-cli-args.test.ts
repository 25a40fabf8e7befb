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
      },
    });
  });

  it('reads every option', () => {
    const parsed = parseRuntimeArgs([
      '--port', '8080',
      '--state-dir', '/tmp/cct',
      '--dynamodb-endpoint', 'http://127.0.0.1:8000/',
      '--authorizer-cache-ttl', '0',
      '--rate-limit-per-key', '1000',
      '--rate-limit-per-network', '0',
      '--stop-with-pid', '4242',
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
      },
    });
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
  ])('refuses %s with a usage error naming it', (_name, argv, message) => {
    expect(() => parseRuntimeArgs(argv)).toThrow(UsageError);
    expect(() => parseRuntimeArgs(argv)).toThrow(message);
  });
});
