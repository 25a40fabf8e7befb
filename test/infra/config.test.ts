import { App, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { configFromContext } from '../../lib/config';

const configOf = (context: Record<string, unknown>) => configFromContext(new App({ context }).node);

describe('configuration from CDK context', () => {
  it('defaults to a dev stage that keeps its data, with the spec limits', () => {
    const config = configOf({});

    expect(config).toEqual({
      stage: 'dev',
      authorizerCacheTtlSeconds: 300,
      alarmEmail: undefined,
      logRetention: RetentionDays.ONE_MONTH,
      rateLimitPerKey: 120,
      usagePlanBuckets: 100,
      regionRequestsPerSecond: 10_000,
      networkRateLimitPerMinute: 600,
      removalPolicy: RemovalPolicy.RETAIN,
      deletionProtection: true,
      customDomain: undefined,
      requireUsagePlanKey: true,
      twilioSecretArn: undefined,
      carrierCallbackThrottle: { rateLimit: 50, burstLimit: 100 },
      carrierCallbackLimitPerAddress: 1200,
      logLevel: 'INFO',
      traceSampleRate: 0.01,
      apiGatewayCloudWatchRole: true,
      authorizerReservedConcurrency: 100,
      carrierCallbackReservedConcurrency: 20,
    });
  });

  it('retains and protects data on every stage unless told to destroy it', () => {
    for (const stage of ['dev', 'prod']) {
      expect(configOf({ stage })).toMatchObject({ removalPolicy: RemovalPolicy.RETAIN, deletionProtection: true });
      expect(configOf({ stage, removalPolicy: 'destroy' })).toMatchObject({
        removalPolicy: RemovalPolicy.DESTROY,
        deletionProtection: false,
      });
    }
  });

  it('reads -c values, which arrive as strings', () => {
    const config = configOf({
      stage: 'staging',
      authorizerCacheTtlSeconds: '60',
      alarmEmail: 'ops@example.com',
      logRetentionDays: '90',
      domainName: 'api.example.com',
      certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc',
      requireUsagePlanKey: 'false',
      removalPolicy: 'destroy',
      twilioSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:cct/twilio-AbC123',
      carrierCallbackRateLimit: '200',
      carrierCallbackLimitPerAddress: '3000',
      authorizerReservedConcurrency: '0',
      carrierCallbackReservedConcurrency: '5',
      usagePlanBuckets: '50',
      regionRequestsPerSecond: '2500',
      traceSampleRate: '0.25',
    });

    expect(config).toMatchObject({
      stage: 'staging',
      authorizerCacheTtlSeconds: 60,
      alarmEmail: 'ops@example.com',
      logRetention: 90,
      customDomain: {
        domainName: 'api.example.com',
        certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc',
      },
      requireUsagePlanKey: false,
      removalPolicy: RemovalPolicy.DESTROY,
      deletionProtection: false,
      twilioSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:cct/twilio-AbC123',
      // The burst follows a higher rate unless given.
      carrierCallbackThrottle: { rateLimit: 200, burstLimit: 200 },
      carrierCallbackLimitPerAddress: 3000,
      authorizerReservedConcurrency: 0,
      carrierCallbackReservedConcurrency: 5,
      usagePlanBuckets: 50,
      regionRequestsPerSecond: 2500,
      traceSampleRate: 0.25,
    });
  });

  it.each([
    [{ stage: 'Prod!' }, /stage/],
    [{ authorizerCacheTtlSeconds: '3601' }, /authorizerCacheTtlSeconds/],
    [{ authorizerCacheTtlSeconds: 'soon' }, /authorizerCacheTtlSeconds/],
    [{ logRetentionDays: '31' }, /logRetentionDays/],
    [{ domainName: 'api.example.com' }, /certificateArn/],
    [{ removalPolicy: 'snapshot' }, /removalPolicy/],
    [{ requireUsagePlanKey: 'yes' }, /requireUsagePlanKey/],
    [{ logLevel: 'TRACE' }, /logLevel/],
    [{ authorizerReservedConcurrency: '-1' }, /authorizerReservedConcurrency/],
    // Two resources each, of the nested stack's 500.
    [{ usagePlanBuckets: '241' }, /usagePlanBuckets/],
    // X-Ray's FixedRate is a fraction.
    [{ traceSampleRate: '5' }, /traceSampleRate/],
    [{ traceSampleRate: 'half' }, /traceSampleRate/],
    [{ usagePlanBuckets: '0' }, /usagePlanBuckets/],
    [{ carrierCallbackReservedConcurrency: 'lots' }, /carrierCallbackReservedConcurrency/],
    // A partial ARN (no 6-character suffix) would make IAM grant a pattern instead of one secret.
    [{ twilioSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:cct/twilio' }, /twilioSecretArn/],
    [{ twilioSecretArn: 'cct/twilio' }, /twilioSecretArn/],
    [{ carrierCallbackRateLimit: '0' }, /carrierCallbackRateLimit/],
    [{ carrierCallbackRateLimit: '100', carrierCallbackBurstLimit: '50' }, /carrierCallbackBurstLimit/],
    // WAF refuses rate-based limits below 10.
    [{ carrierCallbackLimitPerAddress: '5' }, /carrierCallbackLimitPerAddress/],
  ])('refuses %j at synth, naming the key', (context, message) => {
    expect(() => configOf(context)).toThrow(message);
  });
});
