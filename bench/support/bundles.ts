import { spawn } from 'node:child_process';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import { ROUTES } from '../../lambdas/handlers/api/routes';
import { CARRIER_ROUTES } from '../../lambdas/handlers/carrier/routes';
import { CARRIER_SENDER_FUNCTION_OPTIONS, TWILIO_SECRET_PRELOAD } from '../../lib/constructs/carrier';
import { BUNDLE_FILE, LAMBDA_ESBUILD_OPTIONS } from '../../lib/constructs/lambda-bundles';
import { median, ratio, round, shuffled } from './stats';
import { LOCAL_ENGINE_CREDENTIALS_ENV } from '../../lambdas/shared/config';
import { writeReferencePage } from '../../lambdas/handlers/api/openapi/reference-page';

/**
 * 1. Bundle size and cold init of every Lambda of the stack, next to a reference bundle built
 * with the very same esbuild options (LAMBDA_ESBUILD_OPTIONS, the options the stack's bundles are built with).
 */
export const REPO_ROOT = resolve(__dirname, '..', '..');

export type LambdaEntry = {
  name: string;
  entry: string;
  kind: 'reference' | 'api' | 'authorizer' | 'webhooks' | 'carrier';
  /** Modules the stack evaluates before the handler (FunctionSpec.preload): the Twilio secret. */
  preload?: readonly string[];
};

export function lambdaEntries(): LambdaEntry[] {
  return [
    { name: 'reference', entry: 'bench/reference-handler.ts', kind: 'reference' },
    ...ROUTES.map((route) => ({
      name: route.operationId,
      entry: route.handler,
      kind: 'api' as const,
      ...(route.operationId === 'sendMessage' && { preload: CARRIER_SENDER_FUNCTION_OPTIONS.preload }),
    })),
    { name: 'authorizer', entry: 'lambdas/handlers/authorizer/handler.ts', kind: 'authorizer' },
    { name: 'webhookRouter', entry: 'lambdas/handlers/webhooks/router.ts', kind: 'webhooks' },
    { name: 'webhookSender', entry: 'lambdas/handlers/webhooks/sender.ts', kind: 'webhooks' },
    ...CARRIER_ROUTES.map((route) => ({
      name: route.operationId,
      entry: route.handler,
      kind: 'carrier' as const,
      preload: [TWILIO_SECRET_PRELOAD],
    })),
  ];
}

/** What the stack's bundling (lib/constructs/lambda-bundles.ts) runs for one entry, from the same options object. */
export function esbuildOptionsOf(entry: string, outfile: string): BuildOptions {
  return {
    ...LAMBDA_ESBUILD_OPTIONS,
    entryPoints: [resolve(REPO_ROOT, entry)],
    absWorkingDir: REPO_ROOT,
    outfile,
    metafile: true,
  };
}

export type BuiltBundle = LambdaEntry & {
  file: string;
  bytes: number;
  mapBytes: number;
  topInputs: { input: string; bytes: number }[];
};

/** The packages (or our own directories) that take the most room in a bundle. */
function topInputs(inputs: Record<string, { bytesInOutput: number }>): { input: string; bytes: number }[] {
  const byPackage = new Map<string, number>();
  for (const [file, { bytesInOutput }] of Object.entries(inputs)) {
    const inModules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
    const key = inModules ? inModules[1] : file.split('/').slice(0, 2).join('/');
    byPackage.set(key, (byPackage.get(key) ?? 0) + bytesInOutput);
  }
  return [...byPackage.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([input, bytes]) => ({ input, bytes }));
}

/**
 * The module esbuild starts from: the handler itself, or, for a function with preloads, the entry
 * FunctionFactory generates (`import '<preload>'; export { handler } from '<entry>';`).
 */
async function entryOf(lambda: LambdaEntry, dir: string): Promise<string> {
  if (!lambda.preload?.length) return lambda.entry;
  const file = join(dir, `${lambda.name}.mjs`);
  const specifier = (module: string) =>
    JSON.stringify(relative(dirname(file), join(REPO_ROOT, module)).split(sep).join('/'));
  await mkdir(dir, { recursive: true });
  await writeFile(
    file,
    [
      ...lambda.preload.map((m) => `import ${specifier(m)};`),
      `export { handler } from ${specifier(lambda.entry)};`,
      '',
    ].join('\n'),
  );
  return file;
}

export async function buildBundles(outDir: string): Promise<BuiltBundle[]> {
  await rm(outDir, { recursive: true, force: true });
  return Promise.all(
    lambdaEntries().map(async (lambda) => {
      const dir = join(outDir, lambda.name);
      await mkdir(dir, { recursive: true });
      const file = join(dir, BUNDLE_FILE);
      const result = await build(esbuildOptionsOf(await entryOf(lambda, join(outDir, '.entries')), file));
      // The file the stack copies beside this bundle (lib/service-stack.ts); Lambda's LAMBDA_TASK_ROOT is this
      // directory.
      if (lambda.name === 'getApiReference') writeReferencePage(dir);
      const output = Object.values(result.metafile!.outputs).find((o) => o.entryPoint !== undefined)!;
      const mapBytes = await stat(`${file}.map`).then(
        (s) => s.size,
        () => 0,
      );
      return { ...lambda, file, bytes: (await stat(file)).size, mapBytes, topInputs: topInputs(output.inputs) };
    }),
  );
}

/**
 * The environment of a function in AWS, as far as init is concerned: region and credentials from
 * the environment (no network at init), the stack's variables, source maps on (NODE_OPTIONS as
 * FunctionFactory sets it). AWS_LAMBDA_FUNCTION_NAME is left out on purpose: with it, the
 * functions that use the Twilio secret insist on reading Secrets Manager at init, a network call
 * this measurement cannot make; without it they take the credentials from the environment, so
 * their init here is everything but that one read.
 */
function lambdaEnvironment(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_OPTIONS: '--enable-source-maps',
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    ...LOCAL_ENGINE_CREDENTIALS_ENV,
    AWS_SESSION_TOKEN: 'bench',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '256',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    TABLE_NAME: 'bench-table',
    POWERTOOLS_SERVICE_NAME: 'cct-bench',
    POWERTOOLS_LOG_LEVEL: 'INFO',
    RATE_LIMIT_PER_KEY: '120',
    WEBHOOK_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/bench-deliveries',
    CARRIER: 'twilio',
    TWILIO_ACCOUNT_SID: 'AC00000000000000000000000000000000',
    TWILIO_AUTH_TOKEN: 'bench-token',
    PUBLIC_BASE_URL: 'https://api.example.com',
  };
}

/**
 * Runs in a fresh Node process per sample: the time to load the bundle (module evaluation, which
 * constructs the clients at module scope), then the memory the loaded function holds.
 */
const PROBE = `
const cpu = process.cpuUsage();
const started = performance.now();
const module = await import(process.argv[1]);
const initMs = performance.now() - started;
const used = process.cpuUsage(cpu);
const memory = process.memoryUsage();
process.stdout.write(JSON.stringify({ initMs, cpuMs: (used.user + used.system) / 1000, rss: memory.rss, heapUsed: memory.heapUsed, handler: typeof module.handler }));
`;

type ProbeSample = { initMs: number; cpuMs: number; rss: number; heapUsed: number; handler: string };

function probe(bundle: BuiltBundle): Promise<ProbeSample> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', PROBE, bundle.file], {
      env: lambdaEnvironment(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', fail);
    child.once('exit', (code) => {
      if (code !== 0) return fail(new Error(stderr.trim().split('\n').slice(0, 3).join(' ') || `exit ${code}`));
      try {
        const sample = JSON.parse(stdout.slice(stdout.lastIndexOf('{"initMs"'))) as ProbeSample;
        if (sample.handler !== 'function') throw new Error('the bundle exports no handler function');
        done(sample);
      } catch (err) {
        fail(err as Error);
      }
    });
  });
}

export type BundleResult = {
  name: string;
  kind: LambdaEntry['kind'];
  entry: string;
  bytes: number;
  mapBytes: number;
  sizeRatio: number;
  initMsMedian: number;
  initMsSamples: number[];
  initRatio: number;
  /** CPU time (all threads) of the same loads: steadier than wall time on a shared machine. */
  initCpuMsMedian: number;
  initCpuRatio: number;
  rssAfterInitMiB: number;
  heapAfterInitMiB: number;
  topInputs: { input: string; bytes: number }[];
  error?: string;
};

/**
 * `rounds` fresh processes per bundle, one at a time (two at once would share the two cores),
 * in a new random order each round so drift on a busy machine spreads over all bundles alike.
 */
export async function measureInit(bundles: BuiltBundle[], rounds: number): Promise<BundleResult[]> {
  const samples = new Map<string, ProbeSample[]>(bundles.map((b) => [b.name, []]));
  const errors = new Map<string, string>();
  for (let round_ = 0; round_ < rounds; round_ += 1) {
    for (const bundle of shuffled(bundles)) {
      if (errors.has(bundle.name)) continue;
      try {
        samples.get(bundle.name)!.push(await probe(bundle));
      } catch (err) {
        errors.set(bundle.name, (err as Error).message);
      }
    }
  }
  const reference = bundles.find((b) => b.kind === 'reference')!;
  const referenceInit = median(samples.get(reference.name)!.map((s) => s.initMs));
  const referenceCpu = median(samples.get(reference.name)!.map((s) => s.cpuMs));
  return bundles.map((bundle) => {
    const taken = samples.get(bundle.name)!;
    const initMsMedian = median(taken.map((s) => s.initMs));
    const initCpuMsMedian = median(taken.map((s) => s.cpuMs));
    return {
      name: bundle.name,
      kind: bundle.kind,
      entry: bundle.entry,
      bytes: bundle.bytes,
      mapBytes: bundle.mapBytes,
      sizeRatio: ratio(bundle.bytes, reference.bytes),
      initMsMedian: round(initMsMedian, 1),
      initMsSamples: taken.map((s) => round(s.initMs, 1)),
      initRatio: ratio(initMsMedian, referenceInit),
      initCpuMsMedian: round(initCpuMsMedian, 1),
      initCpuRatio: ratio(initCpuMsMedian, referenceCpu),
      rssAfterInitMiB: round(median(taken.map((s) => s.rss)) / 2 ** 20, 1),
      heapAfterInitMiB: round(median(taken.map((s) => s.heapUsed)) / 2 ** 20, 1),
      topInputs: bundle.topInputs,
      ...(errors.has(bundle.name) && { error: errors.get(bundle.name) }),
    };
  });
}
