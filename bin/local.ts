/**
 * `npm start`: the local runtime. See `npm start -- --help` and local/runtime.ts.
 * Exit codes: 0 after Ctrl-C or SIGTERM, 1 when it cannot start, 2 on a usage error.
 */
// Types only (erased): the modules themselves load inside main, after the SDK setting below.
import type { RuntimeOptions } from '../local/cli-args';
import type { runOutsideInvocations as runOutsideInvocationsOf } from '../local/invocations';
import type { isProcessAlive as isProcessAliveOf } from '../local/runtime-file';

// Lambda runs Node 24; on this machine's Node 20 the SDK's support warning is noise for every user.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

async function main(): Promise<void> {
  // Imported only now: the AWS SDK must load after the line above, and lambdas/ modules after the runtime sets
  // TABLE_NAME.
  const [
    { parseRuntimeArgs, RUNTIME_USAGE },
    { UsageError, USAGE_EXIT_CODE },
    { JAVA_HELP, javaMajorVersion },
    { startRuntime },
    { isProcessAlive },
    { runOutsideInvocations },
  ] = await Promise.all([
    import('../local/cli-args'),
    import('../local/usage-error'),
    import('../local/dynamodb-local'),
    import('../local/runtime'),
    import('../local/runtime-file'),
    import('../local/invocations'),
  ]);

  let parsed: ReturnType<typeof parseRuntimeArgs>;
  try {
    parsed = parseRuntimeArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`${err.message}\n\n${RUNTIME_USAGE}`);
    process.exit(USAGE_EXIT_CODE);
  }
  if (parsed.help) {
    console.log(RUNTIME_USAGE);
    return;
  }
  const { options } = parsed;
  if (!options.dynamodbEndpoint && (javaMajorVersion() ?? 0) < 17) {
    console.error(JAVA_HELP);
    process.exit(1);
  }

  const stop = stopOnSignals(options, runOutsideInvocations, isProcessAlive);

  try {
    const runtime = await startRuntime(
      options,
      {
        print: (line) => console.log(line),
        error: (message, error) => (error === undefined ? console.error(message) : console.error(message, error)),
      },
      (started) => (stop.runtime = started.stop),
    );
    console.log(`Ready: ${runtime.apiBaseUrl}`);
  } catch (err) {
    if (stop.stopping) return;
    console.error(`The local runtime could not start: ${(err as Error).message}`);
    await stop.runtime?.();
    process.exit(1);
  }
}

/** How the process stops: the runtime's stop once it has one, and whether a stop has begun. */
type Stop = { runtime?: () => Promise<void>; stopping: boolean };

/**
 * Stops on SIGINT, SIGTERM or the end of `--stop-with-pid`'s process: once, within a grace period, then exits.
 */
function stopOnSignals(
  options: RuntimeOptions,
  runOutsideInvocations: typeof runOutsideInvocationsOf,
  isProcessAlive: typeof isProcessAliveOf,
): Stop {
  const stop: Stop = { stopping: false };
  const stopOnce = (reason: string) => {
    // Ctrl-C under `npm start` arrives more than once (the terminal signals the whole group and
    // npm and tsx forward it too), so a repeat is not a request to hurry.
    if (stop.stopping) return;
    stop.stopping = true;
    console.log(`${reason}: stopping`);
    // A webhook attempt under way is allowed to finish (and be recorded), so the wait covers one.
    const graceMs = Math.max(10_000, options.webhookTimeoutMs + 5_000);
    setTimeout(() => {
      console.error(`Stopping took longer than ${graceMs / 1000} s; exiting anyway`);
      process.exit(1);
    }, graceMs).unref();
    // Whatever has not registered its stop yet (a JVM still starting) is killed by its exit handler.
    void (stop.runtime ?? (async () => {}))().finally(() => process.exit(0));
  };
  // In the process scope: a signal listener runs in the scope its signal's handle was made in,
  // and tsx may have made it before main (for its own listeners), outside every scope.
  const shutdown = (reason: string) => runOutsideInvocations(() => stopOnce(reason));
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  const { stopWithPid } = options;
  if (stopWithPid !== undefined) {
    setInterval(() => {
      if (!isProcessAlive(stopWithPid)) shutdown(`Process ${stopWithPid} ended`);
    }, 1000).unref();
  }
  return stop;
}

/**
 * Main in the process scope of per-invocation logging (local/invocations.ts), turned on first:
 * before any SDK client or Powertools logger runs, and here rather than in local/runtime.ts,
 * which tests import as a library.
 */
async function start(): Promise<void> {
  const { scopeInvocations, runOutsideInvocations } = await import('../local/invocations');
  await scopeInvocations();
  await runOutsideInvocations(main);
}

void start();

export {}; // a module, not a script: its names stay its own
