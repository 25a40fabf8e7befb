import { runInvocation } from './invocations';

/**
 * The settlement sweep in the local runtime: what EventBridge runs every five minutes in AWS runs
 * here on a timer (every minute, or every quarter of the grace period when that is shorter, so a
 * short `--text-grace-ms` is honoured). A failed run is logged and the next one tries again.
 */
export async function startTextSettlement(
  graceMs: number,
  logError: (line: string) => void,
): Promise<{ stop: () => Promise<void> }> {
  // Imported now: it opens the table, which needs the environment the runtime sets first.
  const { settleUnknownOutcomes } = await import('../lambdas/contexts/texting/settlement');
  const everyMs = Math.max(50, Math.min(60_000, Math.floor(graceMs / 4)));
  let running: Promise<unknown> | undefined;
  // A tick that comes while a run is going is not dropped: one run follows as soon as it ends, as EventBridge's
  // invocation of a busy single-concurrency function is retried rather than lost. Dropping it left a sweep that
  // outlasted its minute waiting a whole minute more (bench/README section 15).
  let tickedMeanwhile = false;
  let stopped = false;
  const run = (): void => {
    // One invocation of the scheduled function: what it logs stays out of the runtime's own scope.
    running = runInvocation(() => settleUnknownOutcomes({ graceMs }))
      .catch((err: Error) => logError(`Text settlement sweep failed: ${err.message}`))
      .finally(() => {
        running = undefined;
        if (tickedMeanwhile && !stopped) {
          tickedMeanwhile = false;
          run();
        }
      });
  };
  const timer = setInterval(() => {
    if (running)
      tickedMeanwhile = true; // one run at a time, as one scheduled Lambda at a time in AWS
    else run();
  }, everyMs);
  timer.unref();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
