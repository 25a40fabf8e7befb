/**
 * `npm run bench`: the performance benchmark of issue 8 (see bench/README.md). One run measures,
 * side by side so the ratios hold on a noisy machine:
 *   1. bundle size and cold init of every Lambda vs a reference bundle;
 *   2. table round trips and consumed capacity per request (an SDK middleware in the runtime);
 *   3. latency of each endpoint through the local runtime vs its bare DynamoDB operations;
 *   4. the webhook pipeline with 1, 10 and 100 endpoints;
 *   5. memory: the runtime's peak RSS under load and each function's footprint after init;
 *   6. texts under faults: the fault-injection run of the test suite, its figures reported;
 *   7. scale: one organization grown to 1,000 / 10,000 / 100,000 contacts and threads, the cost of
 *      each list and search request at every size (./support/scale-bench.ts);
 *   8. contention: texts and call events of one busy organization (and of eight at once) on the
 *      limits-faithful engine (./support/contention-bench.ts);
 *   9. units as AWS charges them for every request of section 2, and what a million of each costs
 *      (./support/cost.ts), with its bytes out and log bytes; one organization's month
 *      (./support/cost-report.ts; `npx tsx bench/cost-tables.ts` recomputes both from a results file);
 *  10. events: one webhook endpoint receiving 500 events a second through the runtime's pipeline on
 *      the limits-faithful engine (./support/events-bench.ts);
 *  11. the soak: 20 organizations of mixed traffic for 20 minutes, checked at the end
 *      (./support/soak-bench.ts; run alone with --only soak, not part of a full run).
 * Section 3b measures the contact page with and without compression (./support/compression-bench.ts).
 *  12. the directory: 10,000 contacts imported through POST /contacts/batch by the typed client,
 *      on the limits engine with the key's rate limit on, and a sync loop over the feed of changes at
 *      1,000 and 100,000 contacts (./support/directory-bench.ts).
 * Prints a table and writes bench/results.json (a --quick run: bench/out/results-quick.json, so a
 * smoke run never replaces the recorded one). Traffic goes to 127.0.0.1 only.
 *
 * Options: --quick (a short smoke run, not for the record), --bundles-only, --skip-bundles, --skip-webhooks,
 * --webhooks-only (section 4 alone, written to bench/out/webhooks-only.json: for iterating on the pipeline),
 * --faults-only (section 6 alone, written to bench/out/faults-only.json), --scale-only (section 7 alone,
 * written to bench/out/scale-only.json), --scale-sizes 1000,10000 (the sizes of section 7, default
 * 1000,10000,100000), --skip-scale, --contention-only (section 8 alone, written to
 * bench/out/contention-only.json), --skip-contention, --events-only (section 10 alone, written to
 * bench/out/events-only.json; --events-rate <n> offered, default 500, --events-seconds <n>, default 20),
 * --skip-events, --only soak (section 11, written to bench/out/soak.json; --minutes <n>, default 20), --only outage
 * (section 15, an outage's backlog settled, written to bench/out/outage.json; --outage-texts <n>, default 2,000), --only models
 * (section 14: the model and race tests at the bench's sizes, bench/out/models.json),
 * --directory-only (section 12 alone: its result replaces the `directory` entry of bench/results.json and
 * leaves every other section's as recorded; always also bench/out/directory-only.json; a full run runs it
 * last, in a child with a DynamoDB Local of its own), --skip-directory,
 * --directory-import 10000, --directory-sizes 1000,100000, --directory-batches 16 (the batches sent at once), --scheduled-only (section 13 alone, written to
 * bench/out/scheduled-only.json; --scheduled-texts <n>, default 10,000), --skip-scheduled.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, totalmem, type as osType, release } from 'node:os';
import { join, relative, resolve } from 'node:path';
import type { SenderScenario } from './support/sender-bench';
import type { WebhookScenario } from './support/webhook-bench';

// Before anything loads the SDK or the domain modules (they read these at import).
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
process.env.AWS_REGION ??= 'local';

const BENCH_DIR = resolve(__dirname);
const OUT_DIR = join(BENCH_DIR, 'out');
const args = new Set(process.argv.slice(2));
const optionValue = (name: string) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
};
const QUICK = args.has('--quick');
const RESULTS_FILE = QUICK ? join(OUT_DIR, 'results-quick.json') : join(BENCH_DIR, 'results.json');
const SCALE_ONLY_FILE = join(OUT_DIR, 'scale-only.json');
const DIRECTORY_ONLY_FILE = join(OUT_DIR, 'directory-only.json');
const SCHEDULED_ONLY_FILE = join(OUT_DIR, 'scheduled-only.json');

const SETTINGS = {
  initRounds: QUICK ? 3 : 15,
  invocations: QUICK ? 30 : 120,
  latency: QUICK
    ? { concurrency: 8, readRequests: 200, writeRequests: 100, warmup: 20, chunks: 2 }
    : { concurrency: 8, readRequests: 800, writeRequests: 400, warmup: 50, chunks: 4 },
  webhooks: { timeoutMs: QUICK ? 20_000 : 45_000, scale: QUICK ? 0.25 : 1 },
  scale: {
    sizes: (optionValue('--scale-sizes') ?? (QUICK ? '1000' : '1000,10000,100000')).split(',').map(Number),
    requests: QUICK ? 10 : 40,
    warmup: 3,
  },
  contention: { texts: QUICK ? 50 : 200, callsPerStream: QUICK ? 2 : 5 },
  directory: {
    importContacts: Number(optionValue('--directory-import') ?? (QUICK ? 1000 : 10_000)),
    syncSizes: (optionValue('--directory-sizes') ?? (QUICK ? '1000' : '1000,100000')).split(',').map(Number),
    concurrentBatches: Number(optionValue('--directory-batches') ?? (QUICK ? 4 : 16)),
  },
  events: {
    rate: optionValue('--events-rate') === undefined ? undefined : Number(optionValue('--events-rate')),
    seconds: Number(optionValue('--events-seconds') ?? (QUICK ? 5 : 20)),
    standsFor: 500,
    drainMs: 120_000,
    parts: QUICK ? 300 : 1000,
  },
  scheduled: {
    texts: Number(optionValue('--scheduled-texts') ?? (QUICK ? 1000 : 10_000)),
    organizations: 10,
    concurrency: 16,
    carrierMs: 200,
  },
  compression: QUICK
    ? { requests: 200, concurrency: 8, warmup: 20, chunks: 2 }
    : { requests: 800, concurrency: 8, warmup: 50, chunks: 4 },
};

const log = (line = '') => console.log(line);
const load = () => loadavg().map((v) => Math.round(v * 100) / 100);

async function main(): Promise<void> {
  const startedAt = new Date();
  const t0 = performance.now();
  const phase = (name: string) =>
    log(`\n[${((performance.now() - t0) / 1000).toFixed(0)} s] ${name} (load average ${load().join(' ')})`);
  const loads: Record<string, number[]> = { start: load() };
  await mkdir(OUT_DIR, { recursive: true });

  const { table, kib, mib, round } = await import('./support/stats');
  const results: Record<string, unknown> = {
    date: startedAt.toISOString(),
    machine: {
      cpu: cpus()[0]?.model ?? 'unknown',
      cores: cpus().length,
      memoryGiB: round(totalmem() / 2 ** 30, 1),
      os: `${osType()} ${release()}`,
      node: process.version,
    },
    settings: SETTINGS,
    quick: QUICK,
    loadAverage: loads,
  };

  // ---------- 1. bundles ----------
  let bundles: Awaited<ReturnType<typeof import('./support/bundles').measureInit>> = [];
  let built: Awaited<ReturnType<typeof import('./support/bundles').buildBundles>> = [];
  const alone =
    [
      '--webhooks-only',
      '--faults-only',
      '--scale-only',
      '--contention-only',
      '--events-only',
      '--directory-only',
      '--scheduled-only',
    ].some((option) => args.has(option)) || optionValue('--only') !== undefined;
  if (!args.has('--skip-bundles') && !alone) {
    phase("1. Bundles: building every Lambda with the stack's esbuild options");
    const { buildBundles, measureInit } = await import('./support/bundles');
    built = await buildBundles(join(OUT_DIR, 'bundles'));
    log(`  ${built.length} bundles; cold init: ${SETTINGS.initRounds} fresh processes each, interleaved`);
    bundles = await measureInit(built, SETTINGS.initRounds);
    loads.afterBundles = load();
    results.bundles = bundles;
  }

  if (args.has('--bundles-only')) {
    await writeFile(join(OUT_DIR, 'bundles-only.json'), `${JSON.stringify(results, null, 2)}\n`);
    log(
      table([
        ['function', 'KiB', 'x ref', 'init ms', 'x ref', 'cpu ms', 'x ref'],
        ...bundles.map((b) => [
          b.name,
          kib(b.bytes),
          b.sizeRatio,
          b.initMsMedian,
          b.initRatio,
          b.initCpuMsMedian,
          b.initCpuRatio,
        ]),
      ]),
    );
    return;
  }

  // ---------- 14. models and races at the bench's sizes (Jest starts its own engines) ----------
  if (optionValue('--only') === 'models') {
    phase('14. Model and race tests at the bench sizes');
    const { measureModels } = await import('./support/model-bench');
    const models = await measureModels();
    await writeFile(
      join(OUT_DIR, 'models.json'),
      `${JSON.stringify({ ...results, models, loadAverage: { ...loads, end: load() } }, null, 2)}\n`,
    );
    if (models.files.some((file) => !file.passed)) process.exitCode = 1;
    return;
  }

  // ---------- DynamoDB Local, data, runtime ----------
  phase('Starting DynamoDB Local and seeding');
  const { startEngineWithLocalTable } = await import('./support/local-engine');
  const ddb = await startEngineWithLocalTable();
  const stopAll: (() => Promise<void>)[] = [ddb.stop];
  try {
    // Before anything imports lambdas/shared/aws: section 7 points the shared client at the limits engine.
    if (args.has('--scale-only')) {
      const scale = await measureScalePhase(ddb.endpoint);
      await writeFile(
        SCALE_ONLY_FILE,
        `${JSON.stringify({ ...results, scale, loadAverage: { ...loads, end: load() } }, null, 2)}\n`,
      );
      return;
    }

    // Section 13 too: its scheduling and firing run in this process, on the engine.
    if (args.has('--scheduled-only')) {
      const scheduled = await measureScheduledPhase(ddb.endpoint);
      await writeFile(
        SCHEDULED_ONLY_FILE,
        `${JSON.stringify({ ...results, scheduled, loadAverage: { ...loads, end: load() } }, null, 2)}\n`,
      );
      return;
    }

    // Before anything imports lambdas/shared/aws: the soak seeds through the limits engine.
    if (optionValue('--only') === 'soak') {
      const soak = await measureSoak(ddb.endpoint, ddb.pid);
      await writeFile(
        join(OUT_DIR, 'soak.json'),
        `${JSON.stringify({ ...results, soak, loadAverage: { ...loads, end: load() } }, null, 2)}\n`,
      );
      return;
    }
    const api = await import('./support/api-bench');
    const bare = api.bareClient(ddb.endpoint);
    if (args.has('--webhooks-only')) {
      phase('4. Webhook pipeline only');
      const { measureWebhooks } = await import('./support/webhook-bench');
      // The full run reaches this phase on a JVM the API phases warmed up; alone, a small
      // unreported pass does that, or the first scenario measures DynamoDB Local's JIT.
      await measureWebhooks(ddb.endpoint, ddb.pid, bare.client, { ...SETTINGS.webhooks, scale: 0.25 }, () => undefined);
      const { webhooks, webhookSender } = await measureWebhookPhase(ddb.endpoint, ddb.pid, bare.client);
      bare.client.destroy();
      await writeFile(
        join(OUT_DIR, 'webhooks-only.json'),
        `${JSON.stringify({ ...results, webhooks, webhookSender, loadAverage: { ...loads, end: load() } }, null, 2)}\n`,
      );
      log(webhookTable(webhooks, webhookSender, table));
      return;
    }
    if (args.has('--faults-only')) {
      const faults = await measureFaults();
      await writeFile(
        join(OUT_DIR, 'faults-only.json'),
        `${JSON.stringify({ ...results, textFaults: faults }, null, 2)}\n`,
      );
      return;
    }
    if (args.has('--contention-only')) {
      const contention = await measureContentionPhase(ddb.endpoint);
      await writeFile(
        join(OUT_DIR, 'contention-only.json'),
        `${JSON.stringify({ ...results, contention, loadAverage: { ...loads, end: load() } }, null, 2)}\n`,
      );
      return;
    }
    if (optionValue('--only') === 'outage') {
      phase("15. An outage's backlog settled by the local runtime's sweep");
      const outage = await measureOutage(ddb.endpoint, ddb.pid);
      await writeFile(
        join(OUT_DIR, 'outage.json'),
        `${JSON.stringify({ ...results, outage, loadAverage: { ...loads, end: load() } }, null, 2)}\n`,
      );
      if (outage.notRefunded > 0 || !outage.spend.equal) process.exitCode = 1;
      return;
    }
    if (optionValue('--only') !== undefined)
      throw new Error(`--only: unknown section ${optionValue('--only')} (soak, models, outage)`);
    if (args.has('--events-only')) {
      const events = await measureEventsPhase(ddb.endpoint, ddb.pid, bare.client);
      await writeFile(
        join(OUT_DIR, 'events-only.json'),
        `${JSON.stringify({ ...results, events, loadAverage: { ...loads, end: load() } }, null, 2)}\n`,
      );
      return;
    }
    if (args.has('--directory-only')) {
      const directory = await measureDirectoryPhase(ddb.endpoint);
      const run = {
        date: results.date,
        machine: results.machine,
        settings: SETTINGS.directory,
        loadAverage: { ...loads, end: load() },
      };
      await writeFile(DIRECTORY_ONLY_FILE, `${JSON.stringify({ ...run, directory }, null, 2)}\n`);
      // Run alone (not as a full run's section, nor --quick): the recorded results take it.
      if (!QUICK && !args.has('--as-section')) {
        // The recorded results keep every other section as it was; this section's run says when and where it ran.
        const { readFile } = await import('node:fs/promises');
        const recorded = JSON.parse(await readFile(RESULTS_FILE, 'utf8')) as Record<string, unknown>;
        await writeFile(
          RESULTS_FILE,
          `${JSON.stringify({ ...recorded, directory: { ...directory, run } }, null, 2)}\n`,
        );
      }
      return;
    }
    const fixture = await api.seed();

    phase('Starting the local runtime (bin/local.ts) with the table-call counter');
    const { startRuntimeProcess } = await import('./support/runtime-process');
    const runtime = await startRuntimeProcess(ddb.endpoint);
    stopAll.unshift(runtime.stop);
    const idle = await runtime.stats();

    // ---------- 2. round trips ----------
    phase('2. Table round trips per request');
    const roundTrips = await api.measureRoundTrips(runtime, fixture);
    results.roundTrips = roundTrips;

    // ---------- 3. latency ----------
    phase(
      `3. Latency: ${SETTINGS.latency.concurrency} connections, ${SETTINGS.latency.readRequests} requests per read ` +
        `endpoint, ${SETTINGS.latency.writeRequests} per write`,
    );
    const latency = await api.measureLatency(runtime, fixture, bare, SETTINGS.latency, log);
    results.latency = latency;
    loads.afterLatency = load();

    // ---------- 3b. compression ----------
    phase(
      `3b. The contact page with and without compression: ${SETTINGS.compression.requests} requests each, ` +
        `${SETTINGS.compression.concurrency} connections`,
    );
    const { measureCompression } = await import('./support/compression-bench');
    const compression = await measureCompression(runtime, fixture, SETTINGS.compression);
    results.compression = compression;

    // ---------- 5. memory ----------
    const loaded = await runtime.stats();
    results.memory = {
      runtimeRssIdleMiB: mib(idle.rssBytes),
      runtimePeakRssMiB: mib(loaded.maxRssBytes),
      runtimeRssAfterLoadMiB: mib(loaded.rssBytes),
      runtimeHeapAfterLoadMiB: mib(loaded.heapUsedBytes),
      note: 'one process holding every handler, the authorizer cache, the HTTP server, tsx and the webhook poller',
    };
    await runtime.stop();
    stopAll.shift();

    // ---------- 5. the functions as deployed ----------
    let invocations: Awaited<ReturnType<typeof import('./support/invoke-bench').measureInvocations>> = [];
    if (built.length > 0) {
      phase(
        `5. The bundles invoked directly, ${SETTINGS.invocations} events each, one at a time (memory and CPU per ` +
          `function)`,
      );
      const { measureInvocations } = await import('./support/invoke-bench');
      invocations = await measureInvocations(built, fixture, ddb.endpoint, OUT_DIR, SETTINGS.invocations, log);
      results.invocations = invocations;
    }

    // ---------- 4. webhooks ----------
    let webhooks: WebhookScenario[] = [];
    let webhookSender: SenderScenario | undefined;
    if (!args.has('--skip-webhooks')) {
      phase('4. Webhook pipeline (in-process local pipeline, receivers on 127.0.0.1 verifying signatures)');
      ({ webhooks, webhookSender } = await measureWebhookPhase(ddb.endpoint, ddb.pid, bare.client));
      results.webhooks = webhooks;
      results.webhookSender = webhookSender;
    }
    // ---------- 10. events ----------
    if (!args.has('--skip-events')) results.events = await measureEventsPhase(ddb.endpoint, ddb.pid, bare.client);
    bare.client.destroy();

    // ---------- 9. units as AWS charges them, and what a million requests cost ----------
    phase('9. Units as AWS charges them (the limits engine in front of DynamoDB Local), per request of section 2');
    const { startRuntimeOnEngine } = await import('./support/limits-meters');
    // At the stack's log level (INFO) with the embedded metrics on, so each request's log lines are counted as
    // CloudWatch would ingest them.
    const onEngine = await startRuntimeOnEngine(ddb.endpoint, {}, ['--log-level', 'info'], {
      POWERTOOLS_METRICS_DISABLED: 'false',
    });
    stopAll.unshift(onEngine.stop);
    const charged = await api.measureChargedUnits(onEngine, fixture);
    await onEngine.stop();
    stopAll.shift();
    // Each request must meet the case section 2 measured (a create that answers 409 here prices a refusal).
    for (const c of charged.filter((c, i) => c.status !== roundTrips[i]?.status))
      log(
        `  WARNING: ${c.name} answered ${c.status} here, ${roundTrips.find((r) => r.name === c.name)?.status} in ` +
          `section 2`,
      );
    results.chargedUnits = charged;

    // ---------- 8. contention ----------
    if (!args.has('--skip-contention')) results.contention = await measureContentionPhase(ddb.endpoint);

    // The costs of section 9 and the monthly bill (which takes a text's whole life and a call event from section 8).
    const { costReport } = await import('./support/cost-report');
    const costReportOfRun = costReport(results as unknown as import('./support/cost-report').CostInputs);
    const costs = costReportOfRun.requests;
    results.costPerMillion = costReportOfRun;

    // ---------- 6. texts under faults ----------
    results.textFaults = await measureFaults();

    // ---------- 7. scale ----------
    if (!args.has('--skip-scale')) results.scale = await measureScaleInChild();

    // ---------- 12. the directory ----------
    if (!args.has('--skip-directory')) results.directory = await measureDirectoryInChild();

    // ---------- 13. scheduled texts ----------
    if (!args.has('--skip-scheduled')) results.scheduled = await measureScheduledInChild();
    loads.end = load();
    results.durationS = Math.round((performance.now() - t0) / 1000);

    await writeFile(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);

    // ---------- the report ----------
    log(
      `\n==== Results (${startedAt.toISOString()}, ${(results.machine as { cpu: string }).cpu}, ${cpus().length} ` +
        `cores, Node ${process.version}) ====`,
    );
    log(
      `Load average (1/5/15 min): ${Object.entries(loads)
        .map(([k, v]) => `${k} ${v.join('/')}`)
        .join('; ')}`,
    );
    if (bundles.length > 0) {
      log('\n1. Bundles (minified ESM, same options as the stack) and cold init (median of fresh processes)');
      log(
        table([
          ['function', 'KiB', 'x ref', 'init ms', 'x ref', 'init cpu ms', 'x ref', 'RSS MiB', 'target'],
          ...bundles.map((b) => [
            b.name,
            kib(b.bytes),
            b.sizeRatio,
            b.error ? 'error' : b.initMsMedian,
            b.error ? '-' : b.initRatio,
            b.error ? '-' : b.initCpuMsMedian,
            b.error ? '-' : b.initCpuRatio,
            b.rssAfterInitMiB,
            b.kind === 'reference'
              ? 'reference'
              : b.kind !== 'api'
                ? '(reported)'
                : b.sizeRatio <= 1.25 && b.initRatio <= 1.25
                  ? 'holds'
                  : 'MISSES',
          ]),
        ]),
      );
      for (const b of bundles.filter((x) => x.error)) log(`  ${b.name}: init failed: ${b.error}`);
    }
    log('\n2. Table calls per request (rate-limit update included; capacity units as DynamoDB Local reports them)');
    log(
      table([
        ['request', 'status', 'table calls', 'trips', 'CU', 'target', ''],
        ...roundTrips.map((r) => [
          r.name,
          r.status,
          Object.entries(r.commands)
            .map(([k, v]) => `${k} x${v}`)
            .join(', ') || 'none',
          r.roundTrips,
          r.capacityUnits,
          r.target
            ? Object.entries(r.target)
                .map(([k, v]) => `${k} x${v}`)
                .join(', ') || 'none'
            : '-',
          r.target ? (r.holds ? 'holds' : 'ABOVE') : '',
        ]),
      ]),
    );
    log('\n3. Latency through the local runtime vs the bare DynamoDB operations (ms)');
    log(
      table([
        ['endpoint', 'n', 'p50', 'bare p50', 'x', 'p99', 'bare p99', 'x', 'req/s', 'cpu ms/req', 'bare cpu', 'target'],
        ...latency.map((l) => [
          l.endpoint,
          l.requests,
          l.endpointMs.p50,
          l.bareMs.p50,
          l.p50Ratio,
          l.endpointMs.p99,
          l.bareMs.p99,
          l.p99Ratio,
          l.endpointRps,
          l.runtimeCpuMsPerRequest,
          l.bareCpuMsPerRequest,
          l.holds ? 'holds' : 'MISSES',
        ]),
      ]),
    );
    for (const l of latency.filter((x) => x.failures > 0 || x.bareFailures > 0))
      log(`  ${l.endpoint}: ${l.failures} failed, bare ${l.bareFailures}: ${l.firstFailures.join(' | ')}`);
    log(
      `\n3b. ${compression.request}, plain and gzip (the runtime compresses as API Gateway does): ` +
        `${compression.plain.wireBytes} -> ${compression.gzip.wireBytes} bytes on the wire ` +
        `(x${compression.bytesRatio}), ` +
        `p50 ${compression.plain.ms.p50} -> ${compression.gzip.ms.p50} ms (x${compression.p50Ratio}), p99 ` +
        `${compression.plain.ms.p99} -> ${compression.gzip.ms.p99} ms`,
    );
    log(
      '\n9. Units as AWS charges them per request (limits engine), and dollars per million requests (us-east-1, 2025 ' +
        'list prices)',
    );
    log(
      table([
        [
          'request',
          'status',
          'read units',
          'write units',
          'of which index',
          'DynamoDB $',
          'CPU ms',
          'Lambda $',
          'authorizer $',
          'bytes out gzip/plain',
          'data out $',
          'log bytes',
          'logs $',
          'X-Ray $',
          'total $ per million',
        ],
        ...charged.map((c, i) => [
          c.name,
          c.status,
          c.readUnits,
          c.writeUnits,
          c.indexWriteUnits,
          costs[i].dynamodb,
          costs[i].cpuMs ?? '-',
          costs[i].lambda,
          costs[i].authorizer,
          `${c.responseBytes}/${c.plainResponseBytes}`,
          costs[i].dataTransfer,
          costs[i].logBytes,
          costs[i].logs,
          costs[i].xray,
          costs[i].total,
        ]),
      ]),
    );
    const mix = costReportOfRun.crmSyncMix;
    log(
      `  CRM sync mix (60 % contact reads and searches, 20 % calls, 15 % text reads, 5 % sends): $${mix.perMillion} ` +
        `per million, of which DynamoDB $${mix.dynamodb}, data out $${mix.dataTransfer}, logs $${mix.logs}, X-Ray ` +
        `$${mix.xray}`,
    );
    if (costReportOfRun.organizationMonth) {
      log("  One organization's month (docs/deploy.md):");
      log(
        table([
          ['part', 'count', '$ a month'],
          ...[...costReportOfRun.organizationMonth.rows, costReportOfRun.organizationMonth.total].map((r) => [
            r.part,
            r.count,
            r.cost,
          ]),
        ]),
      );
    }
    if (webhooks.length > 0) log(webhookTable(webhooks, webhookSender, table));
    if (invocations.length > 0) {
      log('\n5. Each function invoked directly (bundle in a fresh process, events one at a time, on DynamoDB Local)');
      log(
        table([
          ['function', 'init ms', 'first ms', 'warm p50', 'warm p99', 'cpu ms/inv', 'RSS MiB', 'peak RSS', 'failed'],
          ...invocations.map((r) => [
            r.name,
            r.initMs,
            r.firstInvokeMs,
            r.warmMs.p50,
            r.warmMs.p99,
            r.cpuMsPerInvoke,
            r.rssMiB,
            r.peakRssMiB,
            r.failures,
          ]),
        ]),
      );
      for (const r of invocations.filter((x) => x.failures > 0))
        log(`  ${r.name}: ${r.failures} failed: ${r.firstFailure}`);
    }
    const memory = results.memory as Record<string, number>;
    log(
      `\n5. Memory: runtime RSS idle ${memory.runtimeRssIdleMiB} MiB, peak under load ${memory.runtimePeakRssMiB} ` +
        `MiB ` +
        `(all handlers in one process); per function after init: see the RSS column above`,
    );
    log(`\nWrote ${relative(process.cwd(), RESULTS_FILE)} in ${results.durationS} s`);
  } finally {
    for (const stop of stopAll) await stop().catch(() => undefined);
  }
}

/** Section 4: the pipeline end to end, then the sender alone (bench/support/sender-bench.ts). */
async function measureWebhookPhase(
  endpoint: string,
  pid: number | undefined,
  client: Parameters<typeof import('./support/webhook-bench').measureWebhooks>[2],
) {
  const { measureWebhooks } = await import('./support/webhook-bench');
  const { measureSender } = await import('./support/sender-bench');
  const webhooks = await measureWebhooks(endpoint, pid, client, SETTINGS.webhooks, log);
  const webhookSender = await measureSender(pid, {
    endpoints: 10,
    events: Math.max(10, Math.round(100 * SETTINGS.webhooks.scale)),
  });
  log(
    `  ${webhookSender.name}: ${webhookSender.verified}/${webhookSender.deliveries} verified, ` +
      `${webhookSender.deliveriesPerSecond} deliveries/s`,
  );
  return { webhooks, webhookSender };
}

function webhookTable(
  webhooks: WebhookScenario[],
  sender: SenderScenario | undefined,
  table: (rows: (string | number)[][]) => string,
): string {
  const senderTable = sender
    ? `\n\n4b. The sender alone: routed deliveries handed to the sender's logic as AWS runs it\n${table([
        [
          'scenario',
          'verified',
          'deliveries/s',
          'attempt p50 ms',
          'attempt p99 ms',
          'connections',
          'cpu ms/delivery: node',
          'DynamoDB Local',
          'outcomes',
        ],
        [
          sender.name,
          `${sender.verified}/${sender.deliveries}${sender.badSignatures ? ` (${sender.badSignatures} bad)` : ''}`,
          sender.deliveriesPerSecond,
          sender.attemptMs.p50,
          sender.attemptMs.p99,
          sender.connections,
          sender.nodeCpuMsPerDelivery,
          sender.dynamodbCpuMsPerDelivery ?? '-',
          Object.entries(sender.outcomes)
            .map(([k, v]) => `${k} ${v}`)
            .join(', '),
        ],
      ])}`
    : '';
  return `\n4. Webhooks: row written -> signature verified at the receiver\n${table([
    [
      'scenario',
      'verified',
      'p50 ms',
      'p99 ms',
      'events/s',
      'deliveries/s',
      'sender/s',
      'connections',
      'cpu ms/delivery: node',
      'DynamoDB Local',
    ],
    ...webhooks.map((w) => [
      w.name,
      `${w.verified}/${w.expected}${w.badSignatures ? ` (${w.badSignatures} bad)` : ''}`,
      w.delayMs.p50,
      w.delayMs.p99,
      w.eventsPerSecond,
      w.deliveriesPerSecond,
      w.senderDeliveriesPerSecond,
      w.connections,
      w.nodeCpuMsPerDelivery,
      w.dynamodbCpuMsPerDelivery ?? '-',
    ]),
  ])}${senderTable}`;
}

/**
 * Section 6: the fault-injection run of test/integration/texting-faults.test.ts (same seed and
 * size), reported rather than asserted: sends, faults injected, and the four figures that must be 0.
 */
async function measureFaults() {
  log('\n6. Texts under faults: 520 sends with retries, fake Twilio over HTTP, DynamoDB faults at the client');
  // The callback handlers import middy (ESM only), which tsx's CommonJS cannot require unaided.
  const { resolveMiddyForRequire } = await import('../local/handlers');
  resolveMiddyForRequire(join(BENCH_DIR, '..'));
  const { runTextingFaults } = await import('../test/support/texting-fault-run');
  // Every injected fault is logged by the code under test, as it should be, with its metrics (JSON
  // lines); the report is the table.
  const writes = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
  const quiet = (write: typeof writes.out) =>
    ((chunk: string | Uint8Array, ...rest: never[]) =>
      String(chunk).startsWith('{"level"') || String(chunk).startsWith('{"_aws"')
        ? true
        : write(chunk, ...rest)) as typeof process.stdout.write;
  process.stdout.write = quiet(writes.out);
  process.stderr.write = quiet(writes.err);
  let figures;
  try {
    figures = await runTextingFaults({ sends: QUICK ? 200 : 520, seed: 14 });
  } finally {
    process.stdout.write = writes.out;
    process.stderr.write = writes.err;
  }
  const { table } = await import('./support/stats');
  log(
    table([
      [
        'sends (calls)',
        'carrier requests',
        'carrier faults',
        'DynamoDB faults',
        'callbacks (dup/reordered/early)',
        'swept',
        'duplicates',
        'opted-out texts',
        'status mismatches',
        'ledger delta',
        's',
      ],
      [
        `${figures.sends} (${figures.sendCalls})`,
        figures.carrierRequests,
        Object.entries(figures.carrierFaults)
          .filter(([k]) => k !== 'ok')
          .reduce((sum, [, n]) => sum + n, 0),
        Object.values(figures.dynamoFaults).reduce((sum, n) => sum + n, 0),
        `${figures.callbacks.sent} ` +
          `(${figures.callbacks.duplicates}/${figures.callbacks.reordered}/${figures.callbacks.early})`,
        figures.settledBySweep,
        figures.duplicateTexts,
        figures.optedOutTexts,
        figures.statusMismatches,
        `${figures.ledgerDeltaCents} cents`,
        Math.round(figures.elapsedMs / 100) / 10,
      ],
    ]),
  );
  return figures;
}

/**
 * Section 8: a runtime on DynamoDB Local alone for the baseline burst, then one on the limits engine
 * for every scenario, each with the loopback carrier's status callbacks a second apart, as Twilio's come (so a text's
 * whole life is in its scenario) and the per-key limiter off (its window row takes every request of
 * a key, at most 2 a second in production: its limit, not a design's hot spot).
 */
async function measureContentionPhase(endpoint: string) {
  const { contention } = SETTINGS;
  log(
    `\n8. Contention: ${contention.texts} texts of one organization 16 at a time (and on DynamoDB Local alone), ` +
      `${contention.texts * 2} with 64 senders, ${contention.texts * 2} of 8 organizations at once, 8 inbound-call ` +
      `streams`,
  );
  const [
    { DynamoDBDocumentClient },
    { localDynamoClient },
    { startRuntimeProcess },
    { startRuntimeOnEngine },
    bench,
    { table },
    { unitsPerEvent },
  ] = await Promise.all([
    import('@aws-sdk/lib-dynamodb'),
    import('../local/dynamodb-local'),
    import('./support/runtime-process'),
    import('./support/limits-meters'),
    import('./support/contention-bench'),
    import('./support/stats'),
    import('./support/cost'),
  ]);
  const db = DynamoDBDocumentClient.from(localDynamoClient(endpoint));
  const env = { LOOPBACK_STATUS_DELAY_MS: '1000' };
  const noKeyLimiter = ['--rate-limit-per-key', '0'];
  const scenarios = [];
  const plain = await startRuntimeProcess(endpoint, [], noKeyLimiter, env);
  try {
    const [org] = await bench.contentionOrganizations(1);
    scenarios.push(await bench.textBurst(plain, db, '1 organization, 16 senders', [org], contention.texts, 16));
  } finally {
    await plain.stop();
  }
  const limited = await startRuntimeOnEngine(endpoint, {}, noKeyLimiter, env);
  try {
    const orgs = await bench.contentionOrganizations(11);
    scenarios.push(await bench.textBurst(limited, db, '1 organization, 16 senders', [orgs[0]], contention.texts, 16));
    scenarios.push(
      await bench.textBurst(limited, db, '1 organization, 64 senders', [orgs[1]], contention.texts * 2, 64),
    );
    scenarios.push(
      await bench.textBurst(
        limited,
        db,
        '8 organizations at once, 64 senders',
        orgs.slice(2, 10),
        contention.texts * 2,
        64,
      ),
    );
    scenarios.push(
      await bench.callStreams(
        limited,
        '8 inbound-call streams, 1 organization',
        orgs[10],
        8,
        contention.callsPerStream,
      ),
    );
  } finally {
    await limited.stop();
    db.destroy();
  }
  log(
    table([
      [
        'scenario',
        'engine',
        'n',
        'answers',
        'conflicts/100',
        'throttles',
        'p50 ms',
        'p99 ms',
        'WU/req hottest pk',
        'WU/req hottest index pk',
        'writes/req hottest item',
        'spend = cost',
        'duplicates',
        'WU/req',
      ],
      ...scenarios.map((c) => [
        c.name,
        c.engine,
        `${c.requests} ${c.kind}`,
        Object.entries(c.answers)
          .map(([k, v]) => `${k} x${v}`)
          .join(', '),
        c.conflictsPer100,
        c.throttles,
        c.latencyMs.p50,
        c.latencyMs.p99,
        c.hottestTablePartition.writeUnitsPerRequest,
        c.hottestIndexPartition.writeUnitsPerRequest,
        c.hottestItem.writesPerRequest,
        c.spendEqualsCost === undefined ? '-' : c.spendEqualsCost ? 'yes' : 'NO',
        c.duplicates ?? '-',
        unitsPerEvent(c).writeUnits,
      ]),
    ]),
  );
  for (const c of scenarios) {
    log(
      `  ${c.name} (${c.engine}): hottest pk ${c.hottestTablePartition.key}; hottest index pk ` +
        `${c.hottestIndexPartition.key}; hottest item ${c.hottestItem.key}`,
    );
    if (c.conflicts > 0)
      log(
        `    conflicts by operation: ${Object.entries(c.conflictsByOperation)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
      );
  }
  return scenarios;
}

/**
 * Section 10: one endpoint, `rate` events a second, the pipeline's table calls on the limits engine
 * (budgets scaled when the rate offered is below what it stands for: ./support/events-bench.ts).
 */
async function measureEventsPhase(
  endpoint: string,
  pid: number | undefined,
  db: Parameters<typeof import('./support/events-bench').measureEvents>[2],
) {
  const { events } = SETTINGS;
  log(
    `\n10. Events: 1 endpoint, ${events.rate ?? `${events.standsFor} (or 90 % of what this machine sustains)`} ` +
      `events a second for ${events.seconds} s through the runtime's pipeline on the limits engine`,
  );
  const [{ measureEvents }, { table }] = await Promise.all([
    import('./support/events-bench'),
    import('./support/stats'),
  ]);
  const result = await measureEvents(endpoint, pid, db, events, log);
  log(
    table([
      [
        'scenario',
        'offered/s (budgets x)',
        'delivered',
        'dup',
        'pipeline/s',
        'first attempt p50 ms',
        'p99 ms',
        'WU/delivery hottest pk',
        'WU/delivery hottest index pk',
        'RU/delivery hottest',
        'throttles',
        'WU/RU per delivery',
        'cpu ms/delivery: runtime',
        'DynamoDB Local',
      ],
      [
        result.name,
        `${result.offeredPerSecond} (${result.budgetScale})`,
        `${result.delivered}/${result.events}${result.badSignatures ? ` (${result.badSignatures} bad)` : ''}`,
        result.duplicates,
        result.pipelinePerSecond,
        result.firstAttemptMs.p50,
        result.firstAttemptMs.p99,
        result.hottestTableWrite.unitsPerDelivery,
        result.hottestIndexWrite.unitsPerDelivery,
        result.hottestRead.unitsPerDelivery,
        result.throttles,
        `${result.unitsPerDelivery.writeUnits}/${result.unitsPerDelivery.readUnits}`,
        result.runtimeCpuMsPerDelivery ?? '-',
        result.dynamodbCpuMsPerDelivery ?? '-',
      ],
    ]),
  );
  log(
    `  hottest table pk ${result.hottestTableWrite.key}; hottest index pk ${result.hottestIndexWrite.key}; hottest ` +
      `read pk ${result.hottestRead.key}`,
  );
  if (result.throttles > 0)
    log(
      `  throttles by reason: ${Object.entries(result.throttlesByReason)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}`,
    );
  const { measurePipelineParts } = await import('./support/events-bench');
  const parts = await measurePipelineParts(events.parts);
  log(`\n10b. The router and the sender alone, in this process on DynamoDB Local (${parts.events} events)`);
  log(
    table([
      ['part', 'cpu ms per event', 'ms per batch', 'table calls per event', 'outcomes'],
      [
        'router (batches of 100, 16 at once)',
        parts.router.cpuMsPerEvent,
        parts.router.msPerBatchOf100,
        parts.router.tableCallsPerEvent,
        '-',
      ],
      [
        'sender (batches of 10, 20 at once)',
        parts.sender.cpuMsPerDelivery,
        parts.sender.msPerBatchOf10,
        parts.sender.tableCallsPerDelivery,
        Object.entries(parts.sender.outcomes)
          .map(([k, v]) => `${k} ${v}`)
          .join(', '),
      ],
    ]),
  );
  return { ...result, parts };
}

/**
 * Section 15: an outage's backlog (./support/outage-bench.ts), `--outage-texts` texts (default 2,000) whose carrier
 * answered 500, settled by the local runtime's sweep after a 4-minute grace while sends go on.
 */
async function measureOutage(endpoint: string, enginePid: number | undefined) {
  const texts = Number(optionValue('--outage-texts') ?? 2_000);
  if (!(Number.isInteger(texts) && texts > 0)) throw new Error('--outage-texts: must be a positive whole number');
  const options = {
    texts,
    graceMs: 240_000,
    organizations: 10,
    concurrency: 16,
    sendsPerSecond: 4,
    settleTimeoutMs: 300_000,
  };
  log(`\n15. Outage: ${texts} texts answered 500 by the carrier, grace 4 min, then 4 sends a second`);
  const [{ runOutage }, { table }] = await Promise.all([import('./support/outage-bench'), import('./support/stats')]);
  const outage = await runOutage({ endpoint, pid: enginePid }, options, log);
  const { refundAfterGraceS: r, sendsDuringSweep: s } = outage;
  log(
    table([
      ['texts', 'refunded', 'after grace p50 s', 'max s', 'last after last grace s', 'spend = not refunded', 'sends'],
      [
        outage.texts,
        outage.refunded,
        r.p50,
        r.max,
        outage.lastRefundAfterLastGraceS,
        `${outage.spend.cents} = ${outage.spend.centsOfTextsNotRefunded}: ${outage.spend.equal ? 'yes' : 'NO'}`,
        `${JSON.stringify(s.answers)}, ${s.withSid} with a sid, p50 ${s.latencyMs.p50} ms, max ${s.latencyMs.max} ms`,
      ],
    ]),
  );
  log(`  sweep runs (s after the first grace end: refunds over s): ${JSON.stringify(outage.sweepRuns)}`);
  log(`  CPU (runtime and DynamoDB Local) in ms: ${JSON.stringify(outage.cpuMs)}`);
  return outage;
}

/** Section 11: the soak (./support/soak-bench.ts), `--minutes` long (default 20). */
async function measureSoak(endpoint: string, dynamodbPid: number | undefined) {
  const minutes = Number(optionValue('--minutes') ?? 20);
  if (!(minutes > 0)) throw new Error('--minutes: must be a positive number');
  log(
    `\n11. Soak: 20 organizations, 16 clients for ${minutes} min on the limits engine, rate limits off, receivers ` +
      `failing 5 % of attempts`,
  );
  // Every write of the soak goes through the engine, from the seeding (this process's domain calls, pointed at it
  // before lambdas/shared/aws loads) to the load, on a table just created: the engine knows every item there is and
  // reads none to size a write (local/dynamodb-limits/images-before.ts).
  const { startLimitsProxy } = await import('../local/dynamodb-limits/limits-proxy');
  const engine = await startLimitsProxy({ upstream: endpoint, sharedDb: true, soleWriter: true, startedEmpty: true });
  process.env.DYNAMODB_ENDPOINT = engine.endpoint;
  const [{ runSoak }, { table }, { bareClient }] = await Promise.all([
    import('./support/soak-bench'),
    import('./support/stats'),
    import('./support/api-bench'),
  ]);
  const bare = bareClient(endpoint);
  const soak = await runSoak(
    engine,
    bare.client,
    { minutes, organizations: 20, clients: 16, failShare: 0.05, seed: 33, drainMs: 180_000, dynamodbPid },
    log,
  ).finally(async () => {
    bare.client.destroy();
    await engine.stop();
  });
  const { events, texts, memory } = soak;
  log(
    table([
      [
        'requests',
        'req/s',
        'sends (replays)',
        '503 (retried)',
        'STOPs',
        'events',
        'events/s',
        'attempts (failed)',
        'first attempt p50/p99/max ms',
        'delivered p99/max ms',
        'heap MiB/10 min',
        'RSS MiB/10 min',
        'throttles',
        'conflicts',
      ],
      [
        soak.requests,
        soak.requestsPerSecond,
        `${texts.sends} (${texts.replays})`,
        soak.unavailable,
        soak.stops,
        `${events.delivered}/${events.expected}`,
        events.perSecond,
        `${events.attempts} (${events.failedAttempts})`,
        `${events.firstAttemptMs.p50}/${events.firstAttemptMs.p99}/${events.firstAttemptMs.max}`,
        `${events.deliveredMs.p99}/${events.deliveredMs.max}`,
        memory.heapMiBPer10Min,
        memory.rssMiBPer10Min,
        soak.engine.throttles,
        soak.engine.conflicts,
      ],
    ]),
  );
  const cpu = soak.cpuMsPerRequest;
  log(
    `  CPU ms per request: runtime ${cpu.runtime}, bench process (engine, clients, receivers) ${cpu.bench}, ` +
      `DynamoDB Local ${cpu.dynamodbLocal ?? 'n/a'}`,
  );
  const warm = soak.cpuMsPerRequestAfterWarmUp;
  if (warm)
    log(
      `  CPU ms per request from ${warm.fromS} s on (after warm-up): runtime ${warm.runtime}, bench process ` +
        `${warm.bench}, DynamoDB Local ${warm.dynamodbLocal ?? 'n/a'}`,
    );
  log('  rounds lost per site (the runtime counted; the engine refused, with the conditions refused most):');
  log(
    table([
      ['site', 'rounds lost', 'per 1,000 requests', 'engine refusals', 'conditions refused most'],
      ...soak.roundsLost.map((r) => [
        r.site,
        r.lost,
        r.perThousand,
        r.refused,
        r.conditions.slice(0, 3).join('; ') || '-',
      ]),
    ]),
  );
  log(
    `  answers: ${Object.entries(soak.answers)
      .map(
        ([kind, byStatus]) =>
          `${kind} ${Object.entries(byStatus)
            .map(([s, n]) => `${s} x${n}`)
            .join('/')}`,
      )
      .join('; ')}`,
  );
  log(
    `  memory after ${memory.warmupS} s of warm-up: heap ${memory.heapMiB.first} -> ${memory.heapMiB.last} MiB, RSS ` +
      `${memory.rssMiB.first} -> ${memory.rssMiB.last} MiB`,
  );
  for (const [check, ok] of Object.entries(soak.checks)) log(`  ${ok ? 'holds' : 'FAILS'}: ${check}`);
  if (!('memory flat after warm-up (heap under 5 MiB per 10 min)' in soak.checks))
    log('  not judged: memory (under 5 minutes after warm-up; the trend above is indicative)');
  const findings = [
    ...soak.serverErrors.map((e) => `${e.kind} ${e.status}: ${e.body}`),
    ...soak.clientErrors.map((e) => `no answer: ${e}`),
    ...events.missing,
    ...events.duplicates.map((d) => `duplicate ${d}`),
    ...events.unexpected.map((u) => `unexpected ${u}`),
    ...texts.textsAfterStop,
    ...texts.spendMismatches,
  ];
  for (const finding of findings.slice(0, 20)) log(`    ${finding}`);
  return soak;
}

/**
 * Section 7, in this process on the bench's DynamoDB Local: seeds straight into it, and measures
 * the requests with the shared client pointed at a limits engine in front of it, so the read
 * units are the ones AWS charges (a GetItem or batch read per requested key, found or not).
 * Must run before lambdas/shared/aws is imported, which reads the endpoint once.
 */
async function measureDirectoryPhase(endpoint: string) {
  const { importContacts, syncSizes } = SETTINGS.directory;
  log(
    `\n12. The directory: ${importContacts} contacts imported through POST /contacts/batch (typed client, limits ` +
      `engine, 120 requests a minute per key); a sync loop over updatedSince at ${syncSizes.join(' and ')} contacts`,
  );
  const [{ startRuntimeOnEngine }, bench, { table }] = await Promise.all([
    import('./support/limits-meters'),
    import('./support/directory-bench'),
    import('./support/stats'),
  ]);
  const runtime = await startRuntimeOnEngine(endpoint);
  let imported: Awaited<ReturnType<typeof bench.measureImport>>;
  let concurrent: Awaited<ReturnType<typeof bench.measureConcurrentBatches>>;
  let updates: Awaited<ReturnType<typeof bench.measureConcurrentUpdates>>;
  try {
    imported = await bench.measureImport(runtime, importContacts, (line) => log(line));
    log(`  ${SETTINGS.directory.concurrentBatches} batches of 100 new contacts from one organization at once`);
    concurrent = await bench.measureConcurrentBatches(runtime, SETTINGS.directory.concurrentBatches, 100);
    log(`  ${SETTINGS.directory.concurrentBatches} batches of 100 updates from one organization at once`);
    updates = await bench.measureConcurrentUpdates(runtime, SETTINGS.directory.concurrentBatches, 100);
    log(`  ${JSON.stringify(updates)}`);
  } finally {
    await runtime.stop();
  }
  const sync = await bench.measureSync(syncSizes, (line) => log(line));
  log(
    table([
      [
        'contacts',
        'requests',
        '5xx',
        'stored (numbers, ids)',
        'wall s',
        'floor at 120/min s',
        'batch p50 ms',
        'batch p99 ms',
        'WU/contact (table + index)',
        'hottest pk WU/contact',
        'hottest index pk WU/contact',
        'throttles',
      ],
      [
        imported.contacts,
        imported.requests,
        imported.serverErrors,
        `${imported.stored.contacts} (${imported.stored.numbers}, ${imported.stored.externalIds})`,
        imported.wallSeconds,
        imported.rateLimitedFloorSeconds,
        imported.batchMs.p50,
        imported.batchMs.p99,
        `${imported.writeUnitsPerContact.total} (${imported.writeUnitsPerContact.table} + ` +
          `${imported.writeUnitsPerContact.indexes})`,
        imported.hottestTablePartition.writeUnitsPerContact,
        imported.hottestIndexPartition.writeUnitsPerContact,
        imported.throttles,
      ],
    ]),
  );
  log(
    table([
      [
        'batches at once',
        'contacts',
        '5xx',
        'item results',
        'stored (numbers, ids)',
        'batch p50 ms',
        'batch p99 ms',
        'hottest pk WU/contact',
        'hottest index pk WU/contact',
        'throttles',
        'conflicts',
      ],
      [
        concurrent.batches,
        concurrent.batches * concurrent.size,
        concurrent.serverErrors,
        Object.entries(concurrent.results)
          .map(([status, n]) => `${status} ${n}`)
          .join(', '),
        `${concurrent.stored.contacts} (${concurrent.stored.numbers}, ${concurrent.stored.externalIds})`,
        concurrent.batchMs.p50,
        concurrent.batchMs.p99,
        concurrent.hottestTablePartition.writeUnitsPerContact,
        concurrent.hottestIndexPartition.writeUnitsPerContact,
        concurrent.throttles,
        concurrent.conflicts,
      ],
    ]),
  );
  log(
    table([
      [
        'directory',
        'pages',
        'items read per page (p50, max)',
        'read units per page (p50, max)',
        'calls per page',
        'walk s',
      ],
      ...sync.map((s) => [
        s.size,
        s.pages,
        `${s.itemsPerPage.p50}, ${s.itemsPerPage.max}`,
        `${s.readUnitsPerPage.p50}, ${s.readUnitsPerPage.max}`,
        s.callsPerPage,
        s.walkSeconds,
      ]),
    ]),
  );
  return { import: imported, concurrent, updates, sync };
}

async function measureScalePhase(dynamodbEndpoint: string) {
  log(
    `\n7. Scale: one organization grown to ${SETTINGS.scale.sizes.join(' / ')} contacts and threads; ` +
      `${SETTINGS.scale.requests} requests of each kind per size, one at a time, units as AWS charges them`,
  );
  const [{ startLimitsProxy }, { localDynamoClient }, { DynamoDBDocumentClient }] = await Promise.all([
    import('../local/dynamodb-limits/limits-proxy'),
    import('../local/dynamodb-local'),
    import('@aws-sdk/lib-dynamodb'),
  ]);
  const engine = await startLimitsProxy({ upstream: dynamodbEndpoint, sharedDb: true });
  const seedClient = DynamoDBDocumentClient.from(localDynamoClient(dynamodbEndpoint), {
    marshallOptions: { removeUndefinedValues: true },
  });
  process.env.DYNAMODB_ENDPOINT = engine.endpoint;
  try {
    const { resolveMiddyForRequire } = await import('../local/handlers');
    resolveMiddyForRequire(join(BENCH_DIR, '..'));
    const { measureScale, scaleReport } = await import('./support/scale-bench');
    const partialFile = join(OUT_DIR, 'scale-partial.json');
    const scale = await measureScale(
      SETTINGS.scale,
      (line) => log(line),
      (partial) => writeFile(partialFile, `${JSON.stringify(partial, null, 2)}\n`),
      seedClient,
    );
    log(`\n${await scaleReport(scale)}`);
    return scale;
  } finally {
    seedClient.destroy();
    await engine.stop();
  }
}

/**
 * A section in a child process of its own, which writes `file` and exits 0. Section 7's child
 * measures the DynamoDB Local this process started (its shared client already points there);
 * section 12's starts its own: its import leaves half a million rows (a contact is about 50), and
 * DynamoDB Local's TTL job scans the whole table under its write lock, so on the shared instance
 * every later section would wait on those scans.
 */
async function sectionInChild<K extends string>(
  section: string,
  key: K,
  file: string,
  options: string[],
): Promise<unknown> {
  const { spawn } = await import('node:child_process');
  const { readFile } = await import('node:fs/promises');
  const childArgs = [...process.execArgv, __filename, ...options, ...(QUICK ? ['--quick'] : [])];
  const code = await new Promise<number | null>((done, fail) =>
    spawn(process.execPath, childArgs, { stdio: 'inherit' }).on('exit', done).on('error', fail),
  );
  if (code !== 0) throw new Error(`the ${section} section's process exited with ${code}`);
  return (JSON.parse(await readFile(file, 'utf8')) as Record<K, unknown>)[key];
}

const measureScaleInChild = () =>
  sectionInChild('scale', 'scale', SCALE_ONLY_FILE, ['--scale-only', '--scale-sizes', SETTINGS.scale.sizes.join(',')]);

const measureDirectoryInChild = () =>
  sectionInChild('directory', 'directory', DIRECTORY_ONLY_FILE, [
    '--directory-only',
    '--as-section',
    '--directory-import',
    String(SETTINGS.directory.importContacts),
    '--directory-sizes',
    SETTINGS.directory.syncSizes.join(','),
  ]);

/**
 * Section 13: the firing's rounds and the scheduling, in this process, with the shared client on a limits engine in
 * front of DynamoDB Local (./support/scheduled-bench.ts).
 */
async function measureScheduledPhase(dynamodbEndpoint: string) {
  const { texts, organizations, carrierMs } = SETTINGS.scheduled;
  log(
    `\n13. Scheduled texts: ${texts} for one instant, ${organizations} organizations, fired in runs a minute apart ` +
      `(the carrier answers in ${carrierMs} ms), on the limits engine`,
  );
  const { startLimitsProxy } = await import('../local/dynamodb-limits/limits-proxy');
  const engine = await startLimitsProxy({ upstream: dynamodbEndpoint, sharedDb: true });
  process.env.DYNAMODB_ENDPOINT = engine.endpoint;
  try {
    const [{ measureScheduled, scheduledReport }, { limitsMetersAt }] = await Promise.all([
      import('./support/scheduled-bench'),
      import('./support/limits-meters'),
    ]);
    const scheduled = await measureScheduled(limitsMetersAt(engine.endpoint), SETTINGS.scheduled, (line) => log(line));
    log(scheduledReport(scheduled));
    return scheduled;
  } finally {
    await engine.stop();
  }
}

const measureScheduledInChild = () =>
  sectionInChild('scheduled texts', 'scheduled', SCHEDULED_ONLY_FILE, [
    '--scheduled-only',
    '--scheduled-texts',
    String(SETTINGS.scheduled.texts),
  ]);

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
