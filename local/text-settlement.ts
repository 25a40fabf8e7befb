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
  const timer = setInterval(() => {
    if (running) return; // one run at a time, as one scheduled Lambda at a time in AWS
    // One invocation of the scheduled function: what it logs stays out of the runtime's own scope.
    running = runInvocation(() => settleUnknownOutcomes({ graceMs }))
      .catch((err: Error) => logError(`Text settlement sweep failed: ${err.message}`))
      .finally(() => (running = undefined));
  }, everyMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
