import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { createCarrier } from '../../contexts/carrier/create-carrier';
import { nextDueAt } from '../../contexts/texting/next-due';
import { fireDueTexts } from '../../contexts/texting/scheduled-texts';
import { logger, metrics, MetricUnit } from '../../shared/aws';
import { LATE_AFTER_SECONDS, SCHEDULED_TEXT_LATENESS_METRIC } from './firing-metrics';
import { roundOf, RUN_DEADLINE_MS, RUN_WINDOW_MS, runFiring, type FiringRunResult } from './firing-run';

/** Built at init: a missing or unknown CARRIER fails the function's first invocation loudly. */
const carrier = createCarrier();

/** Room kept after the deadline for the last texts' carrier call (5 s at most) and their writes. */
const TIMEOUT_MARGIN_MS = 8_000;

/**
 * The firing of scheduled texts, every minute (EventBridge; lib/constructs/scheduled-texts.ts): rounds of
 * `fireDueTexts` while texts fall due within the run's window (./firing-run.ts), then the run's metrics, which the
 * `ScheduledTextsLate` alarm watches. The event carries nothing the run needs.
 */
export const handler = middy(async (_event: unknown, context: Context): Promise<FiringRunResult> => {
  const start = Date.now();
  const deadline = start + Math.min(RUN_DEADLINE_MS, context.getRemainingTimeInMillis() - TIMEOUT_MARGIN_MS);
  const result = await runFiring(new Date(Math.min(start + RUN_WINDOW_MS, deadline)), new Date(deadline), {
    fire: async (now, until) => roundOf(await fireDueTexts({ now, deadline: until, carrier })),
    nextDueAt,
    now: Date.now,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  });
  recordRun(result);
  return result;
})
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(logMetrics(metrics));

/** The run's lateness (fireDueTexts counts the texts themselves); a late run is logged for the alarm's reader. */
function recordRun(result: FiringRunResult): void {
  if (result.handled === 0) return;
  const latestS = result.maxLateMs / 1000;
  metrics.addMetric(SCHEDULED_TEXT_LATENESS_METRIC, MetricUnit.Seconds, latestS);
  if (latestS > LATE_AFTER_SECONDS) logger.warn('Scheduled texts went out more than a minute late', { ...result });
}
