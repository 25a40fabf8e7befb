import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Validations } from 'aws-cdk-lib';
import * as sns from 'aws-cdk-lib/aws-sns';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { ServiceConfig } from '../../lib/config';
import { buildStack, testApp } from './support';

describe('cdk-nag AWS Solutions checks', () => {
  let outdir: string;
  beforeEach(() => {
    outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'cct-nag-'));
  });
  afterEach(() => fs.rmSync(outdir, { recursive: true, force: true }));

  /** The stack under the AWS Solutions pack, as bin/app.ts sets it up. */
  const checkedStack = (overrides: Partial<ServiceConfig>) => {
    const { app, stack } = buildStack(overrides, testApp({}, outdir));
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    return { app, stack };
  };

  it.each<[string, Partial<ServiceConfig>]>([
    ['dev', {}],
    [
      'prod with every option',
      {
        stage: 'prod',
        alarmEmail: 'ops@example.com',
        requireUsagePlanKey: false,
        twilioSecretArn: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:cct/twilio-AbC123',
        customDomain: {
          domainName: 'api.example.com',
          certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc',
        },
      },
    ],
  ])('finds nothing unacknowledged in the %s stack', (_name, overrides) => {
    const { app } = checkedStack(overrides);

    expect(() => app.synth()).not.toThrow();
  });

  it('does report a finding nobody acknowledged (the check really runs)', () => {
    const { app, stack } = checkedStack({});
    new sns.Topic(stack, 'TopicWithoutTls');

    expect(() => app.synth()).toThrow(/AwsSolutions-SNS3/);
  });
});
