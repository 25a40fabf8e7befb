import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { settleUnknownOutcomes, SWEEP_DEFAULTS, type SweepResult } from '../../contexts/texting/settlement';
import { logger, metrics } from '../../shared/aws';

/** Left between the last text started and the function's timeout, for the texts under way to finish. */
export const SWEEP_TAIL_MS = 15_000;

/**
 * The settlement sweep on a schedule (EventBridge, every minute): texts whose carrier outcome
 * stayed unknown past the grace period are failed and refunded. The event carries nothing the
 * sweep needs; the run starts texts until its budget (at most the function's time less a tail)
 * is spent, and the next run continues.
 */
export const handler = middy(
  async (_event: unknown, context: Context): Promise<SweepResult> =>
    settleUnknownOutcomes({
      budgetMs: Math.max(0, Math.min(SWEEP_DEFAULTS.budgetMs, context.getRemainingTimeInMillis() - SWEEP_TAIL_MS)),
    }),
)
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(logMetrics(metrics));
