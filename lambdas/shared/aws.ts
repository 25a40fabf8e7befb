import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { localEngineClientConfig, tableConfig } from './config';
import { ContentionRetryStrategy } from './table/contention';
import { currentSite, SITE_HEADER } from './table/round-site';

/**
 * The process-wide SDK clients and logger, created once at module scope so every invocation of a
 * warm Lambda (and every request of the local runtime) reuses the same connections.
 */
const { tableName, endpoint } = tableConfig();

export const TABLE_NAME = tableName;

/**
 * Contention (throttles, transaction conflicts) is retried a few times, quickly, by the client
 * itself (./table/contention.ts), so no caller writes its own retry loop for it.
 */
export const dynamo = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    ...(endpoint ? localEngineClientConfig(endpoint) : {}),
    retryStrategy: new ContentionRetryStrategy(),
  }),
  { marshallOptions: { removeUndefinedValues: true } },
);

// The client has no logger (the SDK's no-op one), yet its logging middleware builds a redacted copy of every input
// and output for it, on every call: 1.5 % of the local runtime's CPU in the soak (bench/README section 11).
dynamo.middlewareStack.remove('loggerMiddleware');

// Locally, each request names the site of the round or conditional write it belongs to, so the limits engine's
// meters say whose condition failed (./table/round-site.ts). Never sent to AWS.
if (endpoint) {
  dynamo.middlewareStack.add(
    (next) => (args) => {
      const site = currentSite();
      const request = args.request as { headers?: Record<string, string> };
      if (site && request.headers) request.headers[SITE_HEADER] = site;
      return next(args);
    },
    { step: 'build', name: 'roundSiteHeader' },
  );
}

export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'cct-service' });

/**
 * Business metrics as CloudWatch embedded metric format (log lines, no API call). API Gateway and
 * Lambda already count requests, errors and latency; these count what only the code knows.
 * Off in the local runtime and the tests (POWERTOOLS_METRICS_DISABLED).
 */
export const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'CctService',
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'cct-service',
  logger: {
    debug: (...args: unknown[]) => logger.debug(String(args[0])),
    info: (...args: unknown[]) => logger.info(String(args[0])),
    // Most invocations record no business metric, and Powertools warns "No application metrics to
    // publish" after each of them (even when metrics are disabled): expected, so debug, not warn.
    warn: (...args: unknown[]) =>
      String(args[0]).startsWith('No application metrics')
        ? logger.debug(String(args[0]))
        : logger.warn(String(args[0])),
    error: (...args: unknown[]) => logger.error(String(args[0])),
  },
});

export { MetricUnit };
