import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { configFromContext } from '../lib/config';
import { ServiceStack } from '../lib/service-stack';

/**
 * The CDK app: one stack per stage (`-c stage=prod`). cdk-nag's AWS Solutions pack runs as a
 * validation plugin, so `cdk synth` and `cdk deploy` fail on any unacknowledged finding.
 */
const app = new App();
const config = configFromContext(app.node);

new ServiceStack(app, `CctService-${config.stage}`, {
  config,
  description: `Call, Contact and Text-Message Service (${config.stage})`,
  // Environment-agnostic unless the CLI has a target, so synth needs no AWS credentials.
  env: process.env.CDK_DEFAULT_ACCOUNT
    ? { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION }
    : undefined,
  tags: { service: 'cct-service', stage: config.stage },
});

Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
