import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import { settleUnknownOutcomes, type SweepResult } from '../../contexts/texting/settlement';
import { logger, metrics } from '../../shared/aws';

/**
 * The settlement sweep on a schedule (EventBridge, every few minutes): texts whose carrier
 * outcome stayed unknown past the grace period are failed and refunded. The event carries
 * nothing the sweep needs; a run that fails is simply the next run's work.
 */
export const handler = middy(async (): Promise<SweepResult> => settleUnknownOutcomes())
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(logMetrics(metrics));
