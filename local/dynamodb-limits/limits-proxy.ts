import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32 } from 'node:zlib';
import { readBodyWithin } from '../request-body';
import { batchWrite } from './batch-write';
import type { BudgetRates } from './budgets';
import { consumedCapacity } from './charges';
import { Engine, type CallerRequest, type EngineAnswer, type EngineSettings } from './engine';
import { batchGetItem, getItem, transactGet } from './key-reads';
import type { LimitsStats } from './meters';
import { pageRead } from './page-reads';
import { refusedConditions, siteOf } from './refusals';
import { laggingRead, recordingWrites } from './lagging-reads';
import { standardWrite } from './standard-writes';
import { transactWrite } from './transact-write';
import { parseJson } from './upstream';

export type LimitsProxyOptions = {
  /** DynamoDB Local's endpoint. */
  upstream: string;
  /** Port on 127.0.0.1 (default 0: a free one). */
  port?: number;
  /** Whether that DynamoDB Local keeps one database for all callers (-sharedDb). Default true. */
  sharedDb?: boolean;
  /** Default DEFAULT_TRANSACTION_HOLD_MS. */
  transactionHoldMs?: number;
  /** Default DEFAULT_BUDGETS; 0 turns a budget off. */
  budgets?: Partial<BudgetRates>;
  /** Default 10,000. */
  maxTrackedKeys?: number;
  /** Default 1,000. */
  recentRequests?: number;
  /** How long an eventually consistent read may miss a write (docs/local-engine.md); default 0, none. */
  replicaLagMs?: number;
  /**
   * Every write of the tables comes through this engine (nothing writes to DynamoDB Local past it), so it may size a
   * write from the image its last write left instead of reading it first (images-before.ts). Default false.
   */
  soleWriter?: boolean;
  /**
   * With `soleWriter`: the tables are empty as the engine starts (a DynamoDB Local just started in memory, its table
   * just created), so an item the engine never wrote does not exist and is not read before a write. Default false.
   */
  startedEmpty?: boolean;
  /** Read back the images computed for a transaction's updates and fail on a difference (tests); default false. */
  checkComputedImages?: boolean;
  /** Images kept for `soleWriter`; default 50,000. */
  maxKnownImages?: number;
};

export type LimitsProxy = {
  /** Point DynamoDB clients here (`http://127.0.0.1:<port>`). */
  endpoint: string;
  settings: EngineSettings;
  /** The meters; with `database` (engine.ts, `databaseName`), only that database's requests (without -sharedDb). */
  stats: (database?: string) => LimitsStats;
  /** Clears the meters and empties every budget's window. */
  reset: () => void;
  /**
   * How many items ongoing transactions, writes and transactional reads hold now (tests wait on it to act inside a
   * hold).
   */
  heldItems: () => number;
  /** Closes the server and its connections; requests under way are answered with an error. */
  stop: () => Promise<void>;
};

/** A realistic time for DynamoDB to prepare and commit a transaction. */
export const DEFAULT_TRANSACTION_HOLD_MS = 25;

/**
 * DynamoDB's per-partition limits: 3,000 read units or 1,000 write units per second, or a linear combination (DynamoDB
 * Developer Guide, "Best practices for designing and using partition keys effectively"): each pair shares one budget
 * (budgets.ts).
 */
export const DEFAULT_BUDGETS: BudgetRates = {
  partitionWriteUnits: 1000,
  itemWriteUnits: 1000,
  indexPartitionWriteUnits: 1000,
  partitionReadUnits: 3000,
  itemReadUnits: 3000,
};

/**
 * Where the meters are served, on the proxy's own port (`?database=<name>`: one database's, engine.ts `databaseName`).
 */
export const STATS_PATH = '/__limits/stats';
export const RESET_PATH = '/__limits/reset';

/** DynamoDB's largest request is 16 MB; anything larger is refused without being buffered. */
const MAX_REQUEST_BYTES = 16 * 1024 * 1024;

type Handler = (engine: Engine, request: CallerRequest) => Promise<EngineAnswer>;

const HANDLERS: Record<string, Handler> = {
  GetItem: getItem,
  BatchGetItem: batchGetItem,
  TransactGetItems: transactGet,
  Query: pageRead,
  Scan: pageRead,
  PutItem: standardWrite,
  UpdateItem: standardWrite,
  DeleteItem: standardWrite,
  BatchWriteItem: batchWrite,
  TransactWriteItems: transactWrite,
};

/** Operations after which a table's schema must be read again. */
const SCHEMA_CHANGES = new Set(['CreateTable', 'UpdateTable', 'DeleteTable', 'UpdateTimeToLive']);

const TARGET = /^DynamoDB_20120810\.(\w+)$/;

function send(
  response: ServerResponse,
  status: number,
  headers: Record<string, string | number | string[]>,
  body: Buffer,
): void {
  response.writeHead(status, { ...headers, 'content-length': body.length });
  response.end(body);
}

/** DynamoDB Local's answer headers without the hop-by-hop ones (the length is set again). */
function passedHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const passed: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !['connection', 'keep-alive', 'transfer-encoding', 'content-length'].includes(name))
      passed[name] = value;
  }
  return passed;
}

function sendJson(response: ServerResponse, status: number, json: unknown, requestId: string): void {
  const body = Buffer.from(JSON.stringify(json));
  send(
    response,
    status,
    { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': requestId, 'x-amz-crc32': String(crc32(body)) },
    body,
  );
}

/** The caller's answer: ConsumedCapacity as AWS charges it when asked for, absent otherwise. */
function finalJson(answer: EngineAnswer, asked: unknown): Record<string, unknown> {
  const json = { ...answer.json };
  if (answer.status !== 200) return json;
  delete json.ConsumedCapacity;
  if (asked === 'TOTAL' || asked === 'INDEXES') {
    const entries = consumedCapacity(answer.lines, asked);
    if (answer.capacityList) json.ConsumedCapacity = entries;
    else if (entries[0]) json.ConsumedCapacity = entries[0];
  }
  return json;
}

/**
 * Starts the limits-faithful engine: an HTTP server on 127.0.0.1 speaking DynamoDB's JSON
 * protocol in front of DynamoDB Local. Data-plane operations go through the rules of
 * docs/local-engine.md; everything else (control plane, streams, unknown requests) is passed on
 * untouched. The meters are served at GET /__limits/stats and cleared by POST /__limits/reset.
 */
export async function startLimitsProxy(options: LimitsProxyOptions): Promise<LimitsProxy> {
  const settings = settingsOf(options);
  const engine = new Engine(options.upstream, settings);
  const reset = () => {
    engine.meters.reset();
    engine.budgets.refill();
  };
  const server = createServer((request, response) => {
    serve(engine, reset, request, response).catch((err: Error) => answerInternalError(response, err));
  });
  await new Promise<void>((listening, failed) => {
    server.once('error', failed);
    server.listen(options.port ?? 0, '127.0.0.1', () => listening());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    settings,
    stats: (database) => engine.meters.snapshot(database),
    reset,
    heldItems: () => engine.holds.size,
    stop: async () => {
      const closed = new Promise<void>((done) => server.close(() => done()));
      server.closeAllConnections();
      engine.close();
      await closed;
    },
  };
}

function settingsOf(options: LimitsProxyOptions): EngineSettings {
  return {
    transactionHoldMs: options.transactionHoldMs ?? DEFAULT_TRANSACTION_HOLD_MS,
    sharedDb: options.sharedDb ?? true,
    budgets: { ...DEFAULT_BUDGETS, ...options.budgets },
    maxTrackedKeys: options.maxTrackedKeys ?? 10_000,
    recentRequests: options.recentRequests ?? 1_000,
    replicaLagMs: options.replicaLagMs ?? 0,
    soleWriter: options.soleWriter ?? false,
    startedEmpty: options.startedEmpty ?? false,
    checkComputedImages: options.checkComputedImages ?? false,
    maxKnownImages: options.maxKnownImages ?? 50_000,
  };
}

/** One request: the meters' own paths, else a body read within DynamoDB's limit and handled or passed on. */
async function serve(
  engine: Engine,
  reset: () => void,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const requestId = randomUUID();
  const url = new URL(request.url ?? '/', 'http://engine');
  if (url.pathname === STATS_PATH && request.method === 'GET')
    return sendJson(response, 200, engine.meters.snapshot(url.searchParams.get('database') ?? undefined), requestId);
  if (request.url === RESET_PATH && request.method === 'POST') {
    reset();
    return sendJson(response, 200, { reset: true }, requestId);
  }
  const read = await readBodyWithin(request, MAX_REQUEST_BYTES);
  if (read === 'tooLarge')
    return sendJson(
      response,
      413,
      { __type: 'com.amazon.coral.service#SerializationException', Message: 'Request too large' },
      requestId,
    );
  return serveOperation(engine, request, response, read ?? Buffer.alloc(0), requestId);
}

/** A DynamoDB request: a data-plane operation the engine handles, or anything else forwarded untouched. */
async function serveOperation(
  engine: Engine,
  request: IncomingMessage,
  response: ServerResponse,
  body: Buffer,
  requestId: string,
): Promise<void> {
  const operation = TARGET.exec(String(request.headers['x-amz-target'] ?? ''))?.[1];
  const input = request.method === 'POST' && operation ? parseJson(body) : undefined;
  const handler = operation && HANDLERS[operation];
  if (!handler || !input) {
    const answer = await engine.upstream.forward(request.method ?? 'POST', request.url ?? '/', request.headers, body);
    if (operation && SCHEMA_CHANGES.has(operation) && typeof input?.TableName === 'string') {
      engine.forgetSchema(engine.databaseOf(request.headers), input.TableName);
      if (operation === 'DeleteTable' && answer.status === 200)
        engine.tableDeleted(engine.databaseOf(request.headers), input.TableName);
    }
    return send(response, answer.status, passedHeaders(answer.headers), answer.body);
  }
  const caller: CallerRequest = {
    operation,
    headers: request.headers,
    database: engine.databaseOf(request.headers),
    input,
    body,
  };
  const written = await recordingWrites(engine, caller, () => handler(engine, caller));
  const answer = await laggingRead(engine, caller, written);
  engine.meters.request(caller.database, operation, answer.status, answer.error, answer.lines);
  const refused = await refusedConditions(engine, caller, answer);
  if (refused.length > 0) engine.meters.refused(caller.database, siteOf(caller), operation, refused);
  if (answer.raw) return send(response, answer.raw.status, passedHeaders(answer.raw.headers), answer.raw.body);
  sendJson(response, answer.status, finalJson(answer, input.ReturnConsumedCapacity), requestId);
}

/** The engine's own failure, as DynamoDB's 500; a response already under way is cut instead. */
function answerInternalError(response: ServerResponse, err: Error): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  sendJson(
    response,
    500,
    {
      __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError',
      message: `DynamoDB limits engine: ${err.message}`,
    },
    randomUUID(),
  );
}
