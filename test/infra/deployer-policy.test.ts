import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { actionsOf, synth, type Statement } from './support';

/**
 * docs/iam/cloudformation-execution-policy.json is what CloudFormation may do when it deploys the
 * stack (docs/deploy.md, "A least-privilege deployer"). Held against the synthesized templates of
 * every configuration: a resource type the stack starts to use fails here until the policy (and
 * the table below) grants what creating it takes, and the policy grants no service the stack does
 * not use.
 */
const DOCS = join(__dirname, '..', '..', 'docs', 'iam');
const policy = JSON.parse(readFileSync(join(DOCS, 'cloudformation-execution-policy.json'), 'utf8')) as {
  Statement: Statement[];
};
const deployer = JSON.parse(readFileSync(join(DOCS, 'deployer-policy.json'), 'utf8')) as { Statement: Statement[] };

/** What CloudFormation calls to create (and delete) each resource type the stack uses. */
const ACTIONS_BY_TYPE: Record<string, string[]> = {
  'AWS::ApiGateway::Account': ['apigateway:PATCH', 'iam:PassRole'],
  'AWS::ApiGateway::ApiKey': ['apigateway:POST', 'apigateway:DELETE'],
  'AWS::ApiGateway::Authorizer': ['apigateway:POST', 'apigateway:DELETE'],
  'AWS::ApiGateway::BasePathMapping': ['apigateway:POST', 'apigateway:DELETE'],
  'AWS::ApiGateway::Deployment': ['apigateway:POST', 'apigateway:DELETE'],
  'AWS::ApiGateway::DomainName': ['apigateway:POST', 'apigateway:DELETE'],
  'AWS::ApiGateway::GatewayResponse': ['apigateway:PUT', 'apigateway:DELETE'],
  'AWS::ApiGateway::Method': ['apigateway:PUT', 'apigateway:DELETE'],
  'AWS::ApiGateway::Resource': ['apigateway:POST', 'apigateway:DELETE'],
  'AWS::ApiGateway::RestApi': ['apigateway:POST', 'apigateway:GET', 'apigateway:DELETE'],
  'AWS::ApiGateway::Stage': ['apigateway:POST', 'apigateway:PATCH', 'apigateway:DELETE'],
  'AWS::ApiGateway::UsagePlan': ['apigateway:POST', 'apigateway:DELETE'],
  'AWS::ApiGateway::UsagePlanKey': ['apigateway:POST', 'apigateway:DELETE'],
  // The usage-plan buckets' nested stack: its template comes from the assets bucket.
  'AWS::CloudFormation::Stack': [
    'cloudformation:CreateStack',
    'cloudformation:DescribeStacks',
    'cloudformation:DeleteStack',
    's3:GetObject',
  ],
  'AWS::CloudWatch::Alarm': ['cloudwatch:PutMetricAlarm', 'cloudwatch:DeleteAlarms', 'cloudwatch:DescribeAlarms'],
  'AWS::CloudWatch::Dashboard': ['cloudwatch:PutDashboard', 'cloudwatch:DeleteDashboards'],
  'AWS::DynamoDB::Table': [
    'dynamodb:CreateTable',
    'dynamodb:DescribeTable',
    'dynamodb:UpdateContinuousBackups',
    'dynamodb:UpdateTimeToLive',
    'dynamodb:DeleteTable',
    'kms:CreateGrant',
  ],
  'AWS::Events::Rule': ['events:PutRule', 'events:PutTargets', 'events:DeleteRule', 'events:RemoveTargets'],
  'AWS::IAM::Policy': ['iam:PutRolePolicy', 'iam:DeleteRolePolicy'],
  'AWS::IAM::Role': ['iam:CreateRole', 'iam:GetRole', 'iam:DeleteRole', 'iam:AttachRolePolicy', 'iam:PassRole'],
  'AWS::Lambda::EventSourceMapping': [
    'lambda:CreateEventSourceMapping',
    'lambda:GetEventSourceMapping',
    'lambda:DeleteEventSourceMapping',
  ],
  // Reserved concurrency (the authorizer, the carrier callbacks) is set and removed with its own calls.
  'AWS::Lambda::Function': [
    'lambda:CreateFunction',
    'lambda:GetFunction',
    'lambda:DeleteFunction',
    's3:GetObject',
    'lambda:PutFunctionConcurrency',
    'lambda:DeleteFunctionConcurrency',
  ],
  'AWS::Lambda::Permission': ['lambda:AddPermission', 'lambda:RemovePermission'],
  'AWS::Logs::LogGroup': ['logs:CreateLogGroup', 'logs:PutRetentionPolicy', 'logs:DeleteLogGroup'],
  'AWS::Logs::MetricFilter': ['logs:PutMetricFilter', 'logs:DeleteMetricFilter'],
  'AWS::SNS::Subscription': ['sns:Subscribe', 'sns:Unsubscribe'],
  'AWS::SNS::Topic': ['sns:CreateTopic', 'sns:DeleteTopic', 'sns:GetTopicAttributes'],
  'AWS::SNS::TopicPolicy': ['sns:SetTopicAttributes'],
  'AWS::SQS::Queue': ['sqs:CreateQueue', 'sqs:GetQueueAttributes', 'sqs:DeleteQueue'],
  'AWS::SQS::QueuePolicy': ['sqs:SetQueueAttributes'],
  'AWS::SecretsManager::Secret': [
    'secretsmanager:CreateSecret',
    'secretsmanager:DescribeSecret',
    'secretsmanager:DeleteSecret',
  ],
  'AWS::WAFv2::WebACL': ['wafv2:CreateWebACL', 'wafv2:GetWebACL', 'wafv2:DeleteWebACL'],
  'AWS::XRay::SamplingRule': ['xray:CreateSamplingRule', 'xray:GetSamplingRules', 'xray:DeleteSamplingRule'],
  'AWS::WAFv2::WebACLAssociation': ['wafv2:AssociateWebACL', 'wafv2:DisassociateWebACL', 'apigateway:SetWebACL'],
};
/**
 * Services a deployment needs beyond the resources themselves: the assets' bucket, the bootstrap version, the table's
 * AWS-managed key.
 */
const DEPLOYMENT_SERVICES = ['kms', 's3', 'ssm'];

/**
 * The default stage, and one with a custom domain, an alarm e-mail and an existing Twilio secret: every resource type
 * the stack can have.
 */
const CONFIGURATIONS = [
  {},
  {
    customDomain: {
      domainName: 'api.example.com',
      certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/0f1e2d3c',
    },
    alarmEmail: 'ops@example.com',
    twilioSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:twilio-AbCdEf',
  },
];

const resourcesOf = (overrides: object) =>
  Object.values(
    synth(overrides).template.toJSON().Resources as Record<
      string,
      { Type: string; Properties?: Record<string, unknown> }
    >,
  );
const granted = new Set(policy.Statement.flatMap(actionsOf));
const serviceOf = (action: string) => action.split(':')[0];

describe('the CloudFormation execution policy a deployer bootstraps with', () => {
  const types = [
    ...new Set(CONFIGURATIONS.flatMap((overrides) => resourcesOf(overrides).map((resource) => resource.Type))),
  ].sort();

  it('grants what creating and deleting every resource type of the stack takes', () => {
    // Act
    const unknownTypes = types.filter((type) => !ACTIONS_BY_TYPE[type]);
    const missing = types.flatMap((type) =>
      (ACTIONS_BY_TYPE[type] ?? []).filter((action) => !granted.has(action)).map((action) => `${type}: ${action}`),
    );

    // Assess
    expect(unknownTypes).toEqual([]);
    expect(missing).toEqual([]);
  });

  it('grants no service the stack does not use, and never a wildcard action', () => {
    // Prepare
    const used = new Set([
      ...types.flatMap((type) => ACTIONS_BY_TYPE[type] ?? []).map(serviceOf),
      ...DEPLOYMENT_SERVICES,
    ]);

    // Act
    const services = [...new Set([...granted].map(serviceOf))].sort();

    // Assess
    expect(services).toEqual([...used].sort());
    expect([...granted].filter((action) => action.includes('*'))).toEqual([]);
  });

  it('limits role changes to roles CloudFormation names after the stack, and passes them to Lambda and API Gateway only', () => {
    // Prepare
    const iamStatements = policy.Statement.filter((statement) =>
      actionsOf(statement).some((action) => serviceOf(action) === 'iam'),
    );
    const roles = CONFIGURATIONS.flatMap(resourcesOf).filter((resource) => resource.Type === 'AWS::IAM::Role');

    // Act
    const namedRoles = roles.filter((role) => role.Properties?.RoleName !== undefined);

    // Assess
    expect(roles.length).toBeGreaterThan(10);
    expect(namedRoles).toEqual([]);
    for (const statement of iamStatements) expect(statement.Resource).toBe('arn:aws:iam::*:role/CctService-*');
    expect(iamStatements.find((statement) => actionsOf(statement).includes('iam:PassRole'))?.Condition).toEqual({
      StringEquals: { 'iam:PassedToService': ['lambda.amazonaws.com', 'apigateway.amazonaws.com'] },
    });
  });

  it('leaves the deployer itself only the bootstrap roles and the stack outputs', () => {
    // Act
    const actions = deployer.Statement.flatMap(actionsOf).sort();

    // Assess
    expect(actions).toEqual(['cloudformation:DescribeStacks', 'sts:AssumeRole']);
  });
});
