import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { writeReferencePage } from '../lambdas/handlers/api/openapi/reference-page';
import { ROUTES } from '../lambdas/handlers/api/routes';
import { API_PREFIX } from '../lambdas/handlers/http/route-spec';
import { CARRIER_PREFIX, CARRIER_ROUTES } from '../lambdas/handlers/carrier/routes';
import { ROUTE_SCOPES_ENV, encodeRoutePermissions } from '../lambdas/handlers/authorizer/policy';
import { AUTHORIZATION_HEADER_REGEX } from '../lambdas/contexts/tenants/api-key-format';
import {
  DEFAULT_USAGE_PLAN_BUCKETS,
  usagePlanKeyPrefixOf,
  USAGE_PLAN_BUCKETS_ENV,
  USAGE_PLAN_KEY_PREFIX_ENV,
} from '../lambdas/handlers/authorizer/usage-plan-keys';
import { invokeAuthorizer } from './authorizer';
import { createAuthorizerCache } from './authorizer-cache';
import { authorizerCacheActions, startRuntimeControl } from './runtime-control';
import { CarrierCallbackGate } from './carrier-callback-gate';
import {
  applyCarrierCallbackEnv,
  applyCarrierSenderEnv,
  carrierCallbackSettings,
  type CarrierCallbackSettings,
} from './carrier-config';
import type { RuntimeOptions } from './cli-args';
import { ensureTable } from './create-table';
import { demoBanner, ensureDemoOrganization } from './demo';
import { localDynamoClient, startDynamoDbLocal } from './dynamodb-local';
import { startLimitsProxy, STATS_PATH } from './dynamodb-limits/limits-proxy';
import { loadHandlers, type ProxyHandler } from './handlers';
import { queueFile } from './queue-file';
import { createRouter } from './router';
import { isProcessAlive, LOCAL_TABLE_NAME, readRuntimeInfo, writeRuntimeInfo, type RuntimeInfo } from './runtime-file';
import { createApiServer } from './server';

const STAGE = 'local';

export type RuntimeOutput = {
  /** A line for the console (stdout). */
  print: (line: string) => void;
  /** A problem, with its error, for stderr. */
  error: (message: string, error?: unknown) => void;
};

export type LocalRuntime = {
  apiBaseUrl: string;
  /** Stops whatever has been started so far, newest first; safe to call during start and twice. */
  stop: () => Promise<void>;
};

/** Stops of what has been started, run newest first, each once. */
function cleanupStack() {
  const stops: (() => Promise<void>)[] = [];
  return {
    push: (stop: () => Promise<void>) => stops.push(stop),
    async runAll() {
      while (stops.length > 0) await stops.pop()!();
    },
  };
}

function refuseSharedStateDir(previous: RuntimeInfo | undefined, stateDir: string): void {
  if (previous && previous.pid !== process.pid && isProcessAlive(previous.pid)) {
    throw new Error(
      `Another local runtime (pid ${previous.pid}, ${previous.apiBaseUrl}) uses ${stateDir}; stop it first or pass ` +
        `another --state-dir`,
    );
  }
}

/** Listens on 127.0.0.1:port, with a message an operator can act on when the port is taken. */
async function listen(server: Server, port: number): Promise<void> {
  await new Promise<void>((done, fail) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      fail(err.code === 'EADDRINUSE' ? new Error(`Port ${port} is in use: stop what uses it or pass --port <n>`) : err),
    );
    server.listen(port, '127.0.0.1', () => done());
  });
}

/** Fails at once on a taken port, before DynamoDB Local spends seconds starting. */
async function checkPortIsFree(port: number): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await listen(probe, port);
  await new Promise((closed) => probe.close(closed));
}

/** DynamoDB Local (started here unless an endpoint is given), reachable and with the table. */
async function openDatabase(options: RuntimeOptions, stateDir: string, cleanup: ReturnType<typeof cleanupStack>) {
  let endpoint = options.dynamodbEndpoint;
  let dynamodbPid: number | null = null;
  if (!endpoint) {
    const dataDir = options.inMemory ? undefined : resolve(stateDir, 'data');
    if (dataDir) await mkdir(dataDir, { recursive: true });
    const engine = await startDynamoDbLocal({ dataDir });
    cleanup.push(engine.stop);
    endpoint = engine.endpoint;
    dynamodbPid = engine.pid ?? null;
  }
  const client = localDynamoClient(endpoint);
  cleanup.push(async () => client.destroy());
  try {
    await client.send(new ListTablesCommand({ Limit: 1 }));
  } catch (err) {
    throw new Error(`Cannot reach DynamoDB at ${endpoint}: ${(err as Error).message}`, { cause: err });
  }
  await ensureTable(client, LOCAL_TABLE_NAME);
  return { endpoint, dynamodbPid, client };
}

/**
 * With --dynamodb-limits, the limits-faithful engine in front of DynamoDB Local: the handlers
 * reach the table through it; the table's creation and the stream reader go to DynamoDB Local
 * directly (streams are not the engine's concern). One database for every caller, as the
 * runtime's clients (handlers, operator CLI) all sign with the same local credentials.
 */
async function openLimitsEngine(options: RuntimeOptions, upstream: string, cleanup: ReturnType<typeof cleanupStack>) {
  if (!options.dynamodbLimits) return undefined;
  const proxy = await startLimitsProxy({ upstream, sharedDb: true, ...options.dynamodbLimits });
  cleanup.push(proxy.stop);
  return proxy;
}

/** One line for the console: where the limits engine listens and what it enforces. */
function limitsLine(endpoint: string, settings: NonNullable<RuntimeOptions['dynamodbLimits']>): string {
  const { budgets } = settings;
  return (
    `DynamoDB limits engine: ${endpoint} (transaction hold ${settings.transactionHoldMs} ms; per second ` +
    `${budgets.partitionWriteUnits} write units per partition key, ` +
    `${budgets.itemWriteUnits} per item, ${budgets.partitionReadUnits} read units; 0 is off); meters at ` +
    `${endpoint}${STATS_PATH}`
  );
}

const REPO_ROOT = resolve(__dirname, '..');

/**
 * The callback functions, configured for this runtime's address: their modules read the token
 * and public URL when they load, and with `--port 0` the address is known only after listen.
 */
async function loadCallbackHandlers(
  options: RuntimeOptions,
  port: number,
  into: Map<string, ProxyHandler>,
): Promise<CarrierCallbackSettings> {
  const settings = carrierCallbackSettings(options, port);
  applyCarrierCallbackEnv(settings);
  for (const [operationId, handler] of await loadHandlers(CARRIER_ROUTES, REPO_ROOT)) into.set(operationId, handler);
  return settings;
}

/** The stream -> router -> queue -> sender pipeline, with the delivery rules the operator chose. */
async function startWebhooks(options: RuntimeOptions, endpoint: string, stateDir: string) {
  // Imported now: it loads the domain modules, which read TABLE_NAME when first imported.
  const { startWebhookPipeline } = await import('./webhook-pipeline');
  return startWebhookPipeline({
    // Kept with the data: waiting deliveries resume after a restart; --in-memory keeps neither.
    queueStore: options.inMemory ? undefined : queueFile(stateDir),
    endpoint,
    tableName: LOCAL_TABLE_NAME,
    backoffBaseMs: options.webhookBackoffMs,
    attemptTimeoutMs: options.webhookTimeoutMs,
    allowInsecureTargets: options.allowHttpWebhooks,
  });
}

/** One line for the console: where callbacks go, never the token. */
function carrierLine(settings: CarrierCallbackSettings): string {
  const token = settings.tokenSource === 'default' ? 'the local default token' : 'your token';
  return `Carrier callbacks: ${settings.publicBaseUrl}${CARRIER_PREFIX}/... (signatures checked with ${token})`;
}

/** What the handlers read from the environment when they load, set before the first lambdas/ import. */
function setHandlerEnvironment(options: RuntimeOptions, stateDir: string, dynamodbEndpoint: string): void {
  // The shared module reads these at import, so they are set before the first lambdas/ import.
  process.env.TABLE_NAME = LOCAL_TABLE_NAME;
  process.env.DYNAMODB_ENDPOINT = dynamodbEndpoint;
  process.env.POWERTOOLS_SERVICE_NAME ??= 'cct-local';
  // The console shows the access lines; the handlers' own logs only at --log-level or above.
  process.env.POWERTOOLS_LOG_LEVEL = options.logLevel.toUpperCase();
  // CloudWatch's embedded metric format means nothing locally; it would only fill the terminal.
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  // Read by the handler chain (and reported by GET /me) when it loads.
  process.env.RATE_LIMIT_PER_KEY = String(options.rateLimitPerKey);
  // GET /docs serves the page built from the committed document, as the CDK bundles it beside the function.
  process.env.REFERENCE_PAGE_PATH = writeReferencePage(stateDir);
  // The authorizer reads which routes each scope opens when it loads, as its function does in AWS,
  // and names a usage-plan bucket for each key as there (nothing meters it: no usage plans here).
  process.env[ROUTE_SCOPES_ENV] = encodeRoutePermissions(ROUTES, API_PREFIX);
  process.env[USAGE_PLAN_KEY_PREFIX_ENV] = usagePlanKeyPrefixOf(LOCAL_TABLE_NAME);
  process.env[USAGE_PLAN_BUCKETS_ENV] = String(DEFAULT_USAGE_PLAN_BUCKETS);
}

/** The handlers of the route manifest, the authorizer and the network limiter, loaded once the environment is set. */
async function loadApiHandlers(cleanup: ReturnType<typeof cleanupStack>) {
  const [handlers, authorizer, { NetworkRateLimiter }] = await Promise.all([
    loadHandlers(ROUTES, REPO_ROOT),
    import('../lambdas/handlers/authorizer/handler'),
    import('./network-rate-limit'), // imports lambdas/contexts/tenants/rate-limit, which opens the table
  ]);
  // The loopback carrier (CARRIER=loopback) plays message statuses back on timers: they stop with us.
  const { stopLoopbackCarriers } = await import('../lambdas/contexts/carrier/loopback');
  cleanup.push(stopLoopbackCarriers);
  return { handlers, authorizer, NetworkRateLimiter };
}

/**
 * The API Gateway emulation in front of the handlers (its authorizer cache, with the control port that clears it),
 * and the carrier's callback routes at the root, listening.
 */
async function startApiServer(
  options: RuntimeOptions,
  out: RuntimeOutput,
  cleanup: ReturnType<typeof cleanupStack>,
  { handlers, authorizer, NetworkRateLimiter }: Awaited<ReturnType<typeof loadApiHandlers>>,
) {
  const cache = createAuthorizerCache({
    ttlSeconds: options.authorizerCacheTtlSeconds,
    authorize: (header, methodArn) => invokeAuthorizer(authorizer.handler, header, methodArn),
  });
  const control = await startRuntimeControl(authorizerCacheActions(cache, out.print));
  cleanup.push(control.stop);
  const networkLimiter = new NetworkRateLimiter(options.rateLimitPerNetwork);
  const callbackHandlers = new Map<string, ProxyHandler>();
  const server = createApiServer({
    prefix: API_PREFIX,
    stage: STAGE,
    match: createRouter(ROUTES, API_PREFIX),
    handlers,
    admitNetwork: (sourceIp) => networkLimiter.consume(sourceIp).allowed,
    authorize: cache.decide,
    // The CDK authorizer's validationRegex: API Gateway compiles the same expression.
    tokenValidation: new RegExp(AUTHORIZATION_HEADER_REGEX),
    // At the root, as API Gateway serves them next to /api/v1 (no prefix of their own to strip).
    callbacks: {
      prefix: `${CARRIER_PREFIX}/`,
      match: createRouter(CARRIER_ROUTES, ''),
      handlers: callbackHandlers,
      gate: new CarrierCallbackGate(options.carrierCallbacks),
    },
    logRequest: out.print,
    logError: out.error,
  });
  await listen(server, options.port);
  cleanup.push(
    () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  );
  return { server, control, callbackHandlers };
}

/**
 * Starts everything `npm start` serves: DynamoDB Local (or the given endpoint), the table, the
 * handlers of the route manifest behind the API Gateway emulation, the carrier's callback routes,
 * the webhook pipeline, the demo organization on an empty store, and runtime.json for the
 * operator CLI. `onStarted` receives the handle at once, so a signal during the start can stop
 * what already runs.
 */
export async function startRuntime(
  options: RuntimeOptions,
  out: RuntimeOutput,
  onStarted: (runtime: LocalRuntime) => void,
): Promise<LocalRuntime> {
  const cleanup = cleanupStack();
  const runtime: LocalRuntime = { apiBaseUrl: '', stop: () => cleanup.runAll() };
  onStarted(runtime);

  // Texts go to the in-process loopback carrier unless the operator configures a real one, whose
  // status callbacks need the public URL: refused now, before anything starts, when it is missing.
  process.env.CARRIER ??= 'loopback';
  applyCarrierSenderEnv(options);

  const stateDir = resolve(options.stateDir);
  await mkdir(stateDir, { recursive: true });
  const previous = await readRuntimeInfo(stateDir);
  refuseSharedStateDir(previous, stateDir);
  await checkPortIsFree(options.port);

  const { endpoint, dynamodbPid } = await openDatabase(options, stateDir, cleanup);
  const limits = await openLimitsEngine(options, endpoint, cleanup);

  setHandlerEnvironment(options, stateDir, limits?.endpoint ?? endpoint);
  const loaded = await loadApiHandlers(cleanup);
  const demo = await ensureDemoOrganization();
  const { server, control, callbackHandlers } = await startApiServer(options, out, cleanup, loaded);

  const { port } = server.address() as AddressInfo;
  runtime.apiBaseUrl = `http://127.0.0.1:${port}${API_PREFIX}`;
  const carrier = await loadCallbackHandlers(options, port, callbackHandlers);
  cleanup.push((await startWebhooks(options, endpoint, stateDir)).stop);
  const { startTextSettlement } = await import('./text-settlement');
  cleanup.push((await startTextSettlement(options.textGraceMs, out.error)).stop);
  const { startScheduledTexts } = await import('./scheduled-texts');
  const firing = { everyMs: options.scheduledTextsEveryMs, leadMs: options.scheduledTextsLeadMs };
  cleanup.push((await startScheduledTexts(firing, out.error)).stop);

  await writeRuntimeInfo(stateDir, {
    pid: process.pid,
    apiBaseUrl: runtime.apiBaseUrl,
    dynamodbEndpoint: endpoint,
    dynamodbLimitsEndpoint: limits?.endpoint ?? null,
    tableName: LOCAL_TABLE_NAME,
    inMemory: options.inMemory,
    dynamodbPid,
    demoTenantId: demo.tenantId,
    startedAt: new Date().toISOString(),
    publicBaseUrl: carrier.publicBaseUrl,
    twilioAuthToken: carrier.tokenSource,
    allowHttpWebhooks: options.allowHttpWebhooks,
    webhookBackoffMs: options.webhookBackoffMs,
    control: { url: control.url, token: control.token },
  });
  out.print(demoBanner(demo, runtime.apiBaseUrl, options.inMemory));
  out.print(carrierLine(carrier));
  if (limits && options.dynamodbLimits) out.print(limitsLine(limits.endpoint, options.dynamodbLimits));
  return runtime;
}
