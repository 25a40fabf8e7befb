/**
 * What the local runtime costs with nothing asked (bench/README section 11, "CPU per request, 2026-11-29 round 4"):
 * CPU ms per second of the runtime, of this process (the limits engine) and of DynamoDB Local's JVM, set up as the
 * soak runs them, after `--settle` seconds (the JVM's compilers done with start-up), over `--seconds`. What the
 * runtime does meanwhile is its timers: the stream poller, the firing of scheduled texts, the settlement sweep.
 *
 *   npx tsx bench/probes/idle-cost.ts [--settle 20] [--seconds 60] [-- <runtime options>]
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
process.env.AWS_REGION ??= 'local';

const args = process.argv.slice(2);
const optionValue = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const SETTLE_S = Number(optionValue('--settle') ?? 20);
const SECONDS = Number(optionValue('--seconds') ?? 60);
const EXTRA_RUNTIME_ARGS = args.includes('--') ? args.slice(args.indexOf('--') + 1) : [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const { startEngineWithLocalTable } = await import('../support/local-engine');
  const ddb = await startEngineWithLocalTable();
  const { startRuntimeOnEngine } = await import('../support/limits-meters');
  const { processCpuMs } = await import('../support/webhook-bench');
  const runtime = await startRuntimeOnEngine(ddb.endpoint, {}, ['--allow-http-webhooks', ...EXTRA_RUNTIME_ARGS]);
  try {
    const snapshot = async () => {
      const { cpuMicros } = await runtime.stats();
      const own = process.cpuUsage();
      return {
        runtime: (cpuMicros.user + cpuMicros.system) / 1000,
        bench: (own.user + own.system) / 1000,
        jvm: processCpuMs(ddb.pid) ?? 0,
        at: Date.now(),
      };
    };
    await sleep(SETTLE_S * 1000);
    const before = await snapshot();
    await sleep(SECONDS * 1000);
    const after = await snapshot();
    const seconds = (after.at - before.at) / 1000;
    const rate = (key: 'runtime' | 'bench' | 'jvm') => Math.round(((after[key] - before[key]) / seconds) * 10) / 10;
    const options = EXTRA_RUNTIME_ARGS.join(' ') || 'none';
    console.log(
      `idle CPU ms per second over ${Math.round(seconds)} s (runtime options: ${options}): ` +
        `runtime ${rate('runtime')}, bench process ${rate('bench')}, DynamoDB Local ${rate('jvm')}`,
    );
  } finally {
    await runtime.stop();
    await ddb.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});

// A module, not a script: its names stay its own (another probe has a main too).
export {};
