import * as fs from 'node:fs';
import * as path from 'node:path';
import { Aspects, Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Architecture, Function as LambdaFunction, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { BUNDLE_FILE, LambdaBundles } from './lambda-bundles';

/** The repository root: handler paths in the route manifest are relative to it. */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** Node.js major the functions run on (LAMBDA_ESBUILD_OPTIONS targets the same). */
export const NODE_RUNTIME = Runtime.NODEJS_24_X;

export type FunctionFactoryProps = {
  /** Environment every function gets (table name, service name, limits). */
  environment: Record<string, string>;
  logRetention: logs.RetentionDays;
  /**
   * Applied to the log groups: retained unless the stage says `removalPolicy=destroy`, so an incident's logs outlive a
   * stack deletion.
   */
  removalPolicy: RemovalPolicy;
  logLevel: string;
  /** Defaults to the repository root. */
  projectRoot?: string;
};

export type FunctionSpec = {
  /** Handler module relative to the project root; it exports `handler`. */
  entry: string;
  description: string;
  /** 256 MB: see `create`. */
  memorySize?: number;
  /** 10 s: see `create`. */
  timeout?: Duration;
  environment?: Record<string, string>;
  /**
   * Modules (relative to the project root) evaluated before the handler module, in the Lambda
   * bundle only: see `FunctionFactory.entryWithPreload`. The bundle is an ES module, so they may
   * await at top level: the function's init waits for them, and a rejection fails the init. For
   * reading a secret at init (lambdas/contexts/carrier/twilio-secret-preload.ts) while the handler modules stay
   * synchronous for the local runtime and the tests, which load them as CommonJS.
   */
  preload?: readonly string[];
  /**
   * Files built at synth, copied beside the bundle: name in the function's directory -> path on
   * this machine. The function reads them from `LAMBDA_TASK_ROOT` (the reference page of GET /docs).
   */
  files?: Readonly<Record<string, string>>;
  /**
   * Concurrency reserved for this function alone (a guarantee and a cap); none when absent or 0,
   * the function then shares the account's unreserved pool.
   */
  reservedConcurrency?: number;
};

/**
 * The one place a Lambda function is made, so every function of the service is built, logged,
 * traced and permissioned the same way. Each function gets its own role holding nothing but the
 * right to write its own log group and X-Ray segments; table access is granted afterwards by
 * intent (see `ServiceTable.grant`), never through a managed policy.
 */
export class FunctionFactory extends Construct {
  private readonly props: FunctionFactoryProps;
  private readonly projectRoot: string;
  private readonly created: LambdaFunction[] = [];
  private readonly bundles: LambdaBundles;

  constructor(scope: Construct, id: string, props: FunctionFactoryProps) {
    super(scope, id);
    this.props = props;
    this.projectRoot = props.projectRoot ?? REPO_ROOT;
    this.bundles = new LambdaBundles(this.projectRoot);
    // Once the whole app is built, before synthesis: every function is known then, so one esbuild run bundles all.
    Aspects.of(this).add({ visit: (node) => node === this && this.bundles.stage() });
  }

  /** Every function made so far, in creation order (observability iterates it). */
  get functions(): readonly LambdaFunction[] {
    return this.created;
  }

  /**
   * Sizing: 256 MB on arm64, as measured by `npm run bench` (bench/README.md): a function holds
   * 55-60 MiB once initialised and at most ~105 MiB after 120 invocations (POST /messages; the
   * other API functions ~85 MiB, the authorizer ~71 MiB), so 256 MB leaves at least 2.4x headroom
   * and 128 MB would not. Lambda allocates CPU in proportion to memory, and both init (a ~0.5 MB
   * bundle, 0.10-0.14 s of CPU on a full core) and a warm request (3-9 ms of CPU, 17 ms for
   * POST /messages) are CPU-bound, so less memory only makes them slower. Tune with Lambda Power
   * Tuning once real traffic exists.
   * Timeout: 10 s. API Gateway gives up after 29 s; a handler makes at most a few DynamoDB calls
   * (single-digit ms each, SDK retries included), so 10 s means something is stuck and failing
   * fast frees the concurrency. Callers see API Gateway's 5xx gateway response.
   */
  create(id: string, spec: FunctionSpec): LambdaFunction {
    const logGroup = new logs.LogGroup(this, `${id}Logs`, {
      retention: this.props.logRetention,
      removalPolicy: this.props.removalPolicy,
    });

    // An explicit role instead of the default one, which would attach the AWS-managed
    // AWSLambdaBasicExecutionRole (logs on every log group of the account).
    const role = new iam.Role(this, `${id}Role`, {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${spec.description}`,
    });
    logGroup.grantWrite(role);

    const entry = spec.preload?.length
      ? this.entryWithPreload(id, spec.entry, spec.preload)
      : path.join(this.projectRoot, spec.entry);
    const fn = new LambdaFunction(this, id, {
      code: this.bundles.code(id, entry, spec.files),
      handler: `${path.parse(BUNDLE_FILE).name}.handler`,
      description: spec.description,
      runtime: NODE_RUNTIME,
      // Graviton: about 20 % cheaper per GB-second than x86 and the bundles are pure JavaScript.
      architecture: Architecture.ARM_64,
      memorySize: spec.memorySize ?? 256,
      timeout: spec.timeout ?? Duration.seconds(10),
      tracing: Tracing.ACTIVE,
      role,
      logGroup,
      environment: {
        ...this.props.environment,
        POWERTOOLS_LOG_LEVEL: this.props.logLevel,
        // Stack traces in the logs point at the TypeScript sources, not the minified bundle.
        NODE_OPTIONS: '--enable-source-maps',
        ...spec.environment,
      },
      ...(spec.reservedConcurrency ? { reservedConcurrentExecutions: spec.reservedConcurrency } : {}),
    });
    // Tracing.ACTIVE adds xray:PutTraceSegments and xray:PutTelemetryRecords on "*": X-Ray has no
    // resource-level permissions for them, so "*" is the only possible resource.
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'X-Ray trace upload (xray:PutTraceSegments, xray:PutTelemetryRecords) supports no resource-level ' +
        'permissions; its only resource is "*".',
    });
    this.created.push(fn);
    return fn;
  }

  /**
   * A generated entry module that imports the preload modules, then re-exports the handler:
   *   import '<preload>'; export { handler } from '<entry>';
   * esbuild flattens the ES module graph in evaluation order, so the bundle runs the preloads'
   * top-level code, awaits included, before any line of the handler's modules. (esbuild's own
   * `inject` cannot do this: it adds the import to every file, CommonJS dependencies included,
   * which may not require a module with a top-level await.) The file is a build artifact, written
   * under node_modules/.cache (esbuild resolves it from the project's node_modules; git ignores
   * it); its content depends only on its arguments, so concurrent synths write the same bytes.
   */
  private entryWithPreload(id: string, entry: string, preload: readonly string[]): string {
    const dir = path.join(this.projectRoot, 'node_modules', '.cache', 'cct-service', 'lambda-entries');
    const file = path.join(dir, `${id}.mjs`);
    const specifier = (module: string) =>
      JSON.stringify(path.relative(dir, path.join(this.projectRoot, module)).split(path.sep).join('/'));
    const source = [
      '// Generated by lib/constructs/function-factory.ts (FunctionSpec.preload): do not edit.',
      ...preload.map((module) => `import ${specifier(module)};`),
      `export { handler } from ${specifier(entry)};`,
      '',
    ].join('\n');
    fs.mkdirSync(dir, { recursive: true });
    if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== source) {
      const temporary = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(temporary, source);
      fs.renameSync(temporary, file);
    }
    return file;
  }
}
