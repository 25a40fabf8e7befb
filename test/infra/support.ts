import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App, CfnElement } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { Template } from 'aws-cdk-lib/assertions';
import { defaultConfig, type ServiceConfig } from '../../lib/config';
import { ServiceStack } from '../../lib/service-stack';

/** The feature flags of cdk.json, so the tests synthesize what `cdk synth` does. */
export const CDK_JSON_CONTEXT: Record<string, unknown> = JSON.parse(
  fs.readFileSync(path.join(__dirname, '..', '..', 'cdk.json'), 'utf8'),
).context;

/**
 * Every app's cloud assembly goes under one directory per test file, removed when the file ends: an App without an
 * outdir makes a `cdk.out*` directory in the system's temp directory as it is constructed, and nothing removes it.
 */
const assemblies = fs.mkdtempSync(path.join(os.tmpdir(), 'cct-infra-'));
afterAll(() => fs.rmSync(assemblies, { recursive: true, force: true }));
let apps = 0;

/**
 * An app that skips bundling (NodejsFunction then points at a placeholder asset instead of running esbuild for
 * every function) and CDK's built-in CloudFormation validation (a WebAssembly engine that takes ~4 s to start in
 * every test file and ~1 s per template): a synth then takes ~1.5 s. synth.test.ts runs the real `cdk synth`,
 * with both, once. Nor does it record a stack trace per construct and annotation, or the construct tree
 * (tree.json): neither is in a template, and they cost a quarter of a synth.
 */
export function testApp(context: Record<string, unknown> = {}, outdir = path.join(assemblies, `app-${++apps}`)): App {
  return new App({
    outdir,
    builtinCloudFormationValidation: false,
    stackTraces: false,
    treeMetadata: false,
    context: {
      ...CDK_JSON_CONTEXT,
      'aws:cdk:bundling-stacks': [],
      'aws:cdk:disable-creation-stack-traces': true,
      ...context,
    },
  });
}

export function buildStack(
  overrides: Partial<ServiceConfig> = {},
  app: App = testApp(),
): { app: App; stack: ServiceStack } {
  const config = { ...defaultConfig(overrides.stage), ...overrides };
  const stack = new ServiceStack(app, `CctService-${config.stage}`, { config });
  return { app, stack };
}

/**
 * Templates are pure functions of the configuration: synthesize each configuration once per file, and once per run
 * where the infra project's globalSetup made a directory to share them (INFRA_TEMPLATE_DIR). A file still builds its
 * own stack (tests find logical ids through its constructs); the template of a configuration another file
 * synthesized is read, not synthesized again.
 */
const cache = new Map<string, { stack: ServiceStack; template: Template }>();

export function synth(overrides: Partial<ServiceConfig> = {}): { stack: ServiceStack; template: Template } {
  const key = JSON.stringify(overrides);
  let entry = cache.get(key);
  if (!entry) {
    const { stack } = buildStack(overrides);
    entry = { stack, template: sharedTemplate(key, () => Template.fromStack(stack)) };
    cache.set(key, entry);
  }
  return entry;
}

/** The run's template of a configuration: read when another file wrote it, else made and written (atomically). */
function sharedTemplate(key: string, make: () => Template): Template {
  const dir = process.env.INFRA_TEMPLATE_DIR;
  if (!dir) return make();
  const file = path.join(dir, `${createHash('sha256').update(key).digest('hex').slice(0, 32)}.json`);
  if (fs.existsSync(file)) return Template.fromJSON(JSON.parse(fs.readFileSync(file, 'utf8')));
  const template = make();
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, JSON.stringify(template.toJSON()));
  fs.renameSync(temporary, file);
  return template;
}

export type Statement = {
  Action: string | string[];
  Resource: unknown;
  Effect: string;
  Condition?: Record<string, unknown>;
};

export const actionsOf = (statement: Statement): string[] =>
  Array.isArray(statement.Action) ? statement.Action : [statement.Action];

/** The logical id of a CloudFormation resource, or of the one an L2 construct made (its default child). */
export function logicalIdOf(stack: ServiceStack, construct: IConstruct): string {
  const resource = CfnElement.isCfnElement(construct) ? construct : construct.node.defaultChild;
  if (!resource || !CfnElement.isCfnElement(resource))
    throw new Error(`${construct.node.path} has no CloudFormation resource`);
  return stack.getLogicalId(resource);
}

/**
 * Every policy statement attached to a function's execution role, wherever CDK put it (the
 * role's default policy or inline policies).
 */
export function statementsOfFunction(template: Template, functionLogicalId: string): Statement[] {
  const fn = template.toJSON().Resources[functionLogicalId];
  const roleRef = fn.Properties.Role['Fn::GetAtt'][0] as string;
  const policies = Object.values(template.findResources('AWS::IAM::Policy')).filter((policy) =>
    (policy.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === roleRef),
  );
  const role = template.toJSON().Resources[roleRef];
  const inline = ((role.Properties.Policies ?? []) as { PolicyDocument: { Statement: Statement[] } }[]).flatMap(
    (p) => p.PolicyDocument.Statement,
  );
  return [...policies.flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]), ...inline];
}

/** Statements that mention a DynamoDB action. */
export const dynamoStatements = (statements: Statement[]): Statement[] =>
  statements.filter((s) => actionsOf(s).some((a) => a.startsWith('dynamodb:')));

/**
 * The path of every API Gateway resource (`/api/v1/contacts/{id}`, `/carrier/twilio/sms/inbound`), rebuilt from
 * PathPart and ParentId.
 */
export function resourcePaths(template: Template): Map<string, string> {
  const resources = template.toJSON().Resources as Record<
    string,
    { Type: string; Properties: Record<string, unknown> }
  >;
  const paths = new Map<string, string>();
  const pathOf = (id: string): string => {
    const known = paths.get(id);
    if (known !== undefined) return known;
    const { PathPart, ParentId } = resources[id].Properties as { PathPart: string; ParentId: { Ref?: string } };
    const path = `${ParentId.Ref ? pathOf(ParentId.Ref) : ''}/${PathPart}`;
    paths.set(id, path);
    return path;
  };
  for (const [id, resource] of Object.entries(resources)) if (resource.Type === 'AWS::ApiGateway::Resource') pathOf(id);
  return paths;
}
