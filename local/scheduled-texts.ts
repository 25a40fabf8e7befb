import { runInvocation } from './invocations';

/**
 * The firing of scheduled texts in the local runtime: what a scheduled Lambda runs every minute in
 * AWS runs here on a timer (`--scheduled-texts-every-ms`, every 10 s by default, so a text goes out
 * well within the minute after its time). The texts wait in the table, so a restart keeps them and
 * the first run after it sends what fell due meanwhile. `leadMs` (`--scheduled-texts-lead-ms`, for
 * tests only) runs the firing's clock that far ahead, so an end-to-end test sees a text scheduled 75
 * seconds ahead fire without waiting 75 seconds. A failed run is logged and the next one tries again.
 */
export async function startScheduledTexts(
  options: { everyMs: number; leadMs: number },
  logError: (line: string) => void,
): Promise<{ stop: () => Promise<void> }> {
  // Imported now: they open the table and read the carrier's settings, which the runtime sets first.
  const { fireDueTexts } = await import('../lambdas/contexts/texting/scheduled-texts');
  const { createCarrier } = await import('../lambdas/contexts/carrier/create-carrier');
  const carrier = createCarrier();
  let running: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    if (running) return; // one run at a time, as one scheduled Lambda at a time in AWS
    const now = new Date(Date.now() + options.leadMs);
    running = runInvocation(() => fireDueTexts({ now, carrier, deadline: Date.now() + options.everyMs * 5 }))
      .catch((err: Error) => logError(`Firing scheduled texts failed: ${err.message}`))
      .finally(() => (running = undefined));
  }, options.everyMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
