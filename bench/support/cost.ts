import { DEFAULT_TRACE_SAMPLE_RATE } from '../../lib/config';
import type { ChargedUnitsCase } from './api-bench';
import type { ContentionScenario } from './contention-bench';
import { platformLogBytes } from './log-bytes';
import { round } from './stats';

/**
 * What requests cost on AWS, from the units the limits engine charges as AWS does (section 9), the
 * CPU the runtime spent per request (section 3), the bytes each response and its log lines take, and
 * the stack's trace sampling. Prices: us-east-1 list prices as published in 2025 (docs/deploy.md says
 * which and how to check them); each figure is per million requests.
 */
export const PRICES = {
  apiGatewayPerMillion: 3.5,
  wafPerMillion: 0.6,
  lambdaRequestsPerMillion: 0.2,
  lambdaGbSecond: 0.0000133334,
  writeUnitPerMillion: 0.625,
  readUnitPerMillion: 0.125,
  /** Data transfer out to the internet, the first 10 TB a month (after the free 100 GB). */
  dataTransferOutPerGb: 0.09,
  /** CloudWatch Logs ingestion, standard class. */
  logsIngestionPerGb: 0.5,
  /** X-Ray traces recorded (the first 100,000 a month are free, account-wide: not counted here). */
  xrayPerMillionTraces: 5,
  sqsPerMillionRequests: 0.4,
  /** Lambda at 256 MB: about 1/7 of a vCPU (a full one at 1,769 MB), so wall time is ~6.9x the CPU time. */
  cpuToDuration: 6.9,
  /** A DynamoDB round trip inside the region. */
  msPerRoundTrip: 5,
  memoryGb: 0.25,
} as const;

/** AWS bills data transfer and log ingestion per GB of 2^30 bytes. */
const GB = 2 ** 30;
/** Dollars per million of something that happens `bytes` bytes at a time. */
const perMillionOfBytes = (bytes: number, pricePerGb: number) => (bytes * 1_000_000 * pricePerGb) / GB;

export type RequestCost = {
  request: string;
  readUnits: number;
  writeUnits: number;
  dynamodb: number;
  cpuMs: number | null;
  lambda: number;
  /** The authorizer's own invocation on a cache miss: its request and its duration. 0 when the cache answered. */
  authorizer: number;
  /** Data transfer out of the response as sent to a client that accepts gzip (the total counts this one) ... */
  dataTransfer: number;
  /** ... and to one that accepts no coding. */
  dataTransferPlain: number;
  /** CloudWatch Logs bytes ingested: the access line, the functions' lines, Lambda's lines per invocation. */
  logBytes: number;
  logs: number;
  xray: number;
  total: number;
};

/** The bytes of one request that are billed per GB (section 9 measures them). */
export type Traffic = {
  responseBytes: number;
  plainResponseBytes: number;
  accessLogBytes: number;
  functionLogBytes: number;
};

const NO_TRAFFIC: Traffic = { responseBytes: 0, plainResponseBytes: 0, accessLogBytes: 0, functionLogBytes: 0 };

/** One run of the authorizer (a key not in API Gateway's cache). */
export type AuthorizerRun = { cpuMs: number; roundTrips: number };

const FIXED = PRICES.apiGatewayPerMillion + PRICES.wafPerMillion + PRICES.lambdaRequestsPerMillion;

/** Lambda's billed milliseconds of a warm invocation: 6.9 x its CPU and 5 ms per DynamoDB round trip, rounded up. */
export const billedMs = (cpuMs: number | null, roundTrips: number): number =>
  cpuMs === null ? 0 : Math.ceil(PRICES.cpuToDuration * cpuMs + PRICES.msPerRoundTrip * roundTrips);

const durationPerMillion = (ms: number) => (ms / 1000) * PRICES.memoryGb * 1_000_000 * PRICES.lambdaGbSecond;

/** A Lambda request id, for the length of Lambda's own log lines. */
const LAMBDA_REQUEST_ID = '8f5a2c1e-6b3d-4e7f-9a01-2b3c4d5e6f70';

/**
 * Dollars per million of one request: API Gateway, WAF and Lambda requests; its units; its function's
 * duration from its CPU and round trips; the authorizer's invocation when it ran; the response's bytes
 * out; its log bytes; its share of recorded traces (`traceSampleRate`, the stage's sampling rule).
 */
export function costPerMillion(
  units: { readUnits: number; writeUnits: number },
  cpuMs: number | null,
  roundTrips: number,
  traffic: Traffic = NO_TRAFFIC,
  authorizer?: AuthorizerRun,
  traceSampleRate: number = DEFAULT_TRACE_SAMPLE_RATE,
): Omit<RequestCost, 'request'> {
  const dynamodb = units.readUnits * PRICES.readUnitPerMillion + units.writeUnits * PRICES.writeUnitPerMillion;
  const functionMs = billedMs(cpuMs, roundTrips);
  const lambda = durationPerMillion(functionMs);
  const authorizerMs = authorizer ? billedMs(authorizer.cpuMs, authorizer.roundTrips) : 0;
  const authorizerCost = authorizer ? PRICES.lambdaRequestsPerMillion + durationPerMillion(authorizerMs) : 0;
  const logBytes =
    traffic.accessLogBytes +
    traffic.functionLogBytes +
    platformLogBytes(LAMBDA_REQUEST_ID, Math.max(1, functionMs)) +
    (authorizer ? platformLogBytes(LAMBDA_REQUEST_ID, Math.max(1, authorizerMs)) : 0);
  const logs = perMillionOfBytes(logBytes, PRICES.logsIngestionPerGb);
  const dataTransfer = perMillionOfBytes(traffic.responseBytes, PRICES.dataTransferOutPerGb);
  const xray = traceSampleRate * PRICES.xrayPerMillionTraces;
  return {
    readUnits: units.readUnits,
    writeUnits: units.writeUnits,
    dynamodb: round(dynamodb),
    cpuMs,
    lambda: round(lambda),
    authorizer: round(authorizerCost),
    dataTransfer: round(dataTransfer),
    dataTransferPlain: round(perMillionOfBytes(traffic.plainResponseBytes, PRICES.dataTransferOutPerGb)),
    logBytes: Math.round(logBytes),
    logs: round(logs),
    xray: round(xray),
    total: round(FIXED + dynamodb + lambda + authorizerCost + dataTransfer + logs + xray),
  };
}

/**
 * Every request of section 9, costed with the CPU and round trips sections 2 and 3 measured for it.
 * A request that ran the authorizer is priced with its second invocation: the authorizer's CPU
 * (section 5, `authorizerCpuMs`; the route's own when section 5 did not run) and the round trips its
 * row has beyond its route's warm row (the authorizer's reads, which section 2 counts with the route's).
 */
export function requestCosts(
  charged: ChargedUnitsCase[],
  cpuByEndpoint: Map<string, number>,
  roundTripsByRequest: Map<string, number>,
  authorizerCpuMs: number | null = null,
): RequestCost[] {
  return charged.map((c) => {
    // A variant ("GET /calls?direction=inbound", "GET /calls, page 2", "POST /contacts (adopt ...)") takes its route's
    // CPU.
    const endpoint = [...cpuByEndpoint.keys()].find(
      (name) => c.name === name || (c.name.startsWith(name) && ' ,?('.includes(c.name[name.length])),
    );
    const cpuMs = endpoint ? cpuByEndpoint.get(endpoint)! : null;
    const roundTrips = roundTripsByRequest.get(c.name) ?? 0;
    const warmRoundTrips = c.authorizerRan && endpoint ? (roundTripsByRequest.get(endpoint) ?? roundTrips) : roundTrips;
    const authorizer = c.authorizerRan
      ? { cpuMs: authorizerCpuMs ?? cpuMs ?? 0, roundTrips: roundTrips - warmRoundTrips }
      : undefined;
    return { request: c.name, ...costPerMillion(c, cpuMs, warmRoundTrips, trafficOf(c), authorizer) };
  });
}

const trafficOf = (c: Partial<Traffic>): Traffic => ({
  responseBytes: c.responseBytes ?? 0,
  plainResponseBytes: c.plainResponseBytes ?? 0,
  accessLogBytes: c.accessLogBytes ?? 0,
  functionLogBytes: c.functionLogBytes ?? 0,
});

/**
 * The worked example of docs/deploy.md: a CRM sync, 60 % contact reads and searches, 20 % call
 * history, 15 % text reads, 5 % sends, priced per million requests from the costs above.
 */
export const CRM_SYNC_MIX: [string, number][] = [
  ['GET /contacts', 0.3],
  ['GET /contacts/{id}', 0.2],
  ['GET /contacts?search=acme', 0.1],
  ['GET /calls', 0.15],
  ['GET /calls/{id}', 0.05],
  ['GET /messages', 0.05],
  ['GET /messages/{counterpart}', 0.1],
  ['POST /messages', 0.05],
];

export type MixCost = {
  perMillion: number;
  dynamodb: number;
  dataTransfer: number;
  dataTransferPlain: number;
  logs: number;
  xray: number;
};

export function mixCost(costs: RequestCost[], mix: [string, number][] = CRM_SYNC_MIX): MixCost {
  const sums = { perMillion: 0, dynamodb: 0, dataTransfer: 0, dataTransferPlain: 0, logs: 0, xray: 0 };
  for (const [request, share] of mix) {
    const cost = costs.find((c) => c.request === request);
    if (!cost) throw new Error(`mixCost: no cost for ${request}`);
    sums.perMillion += share * cost.total;
    sums.dynamodb += share * cost.dynamodb;
    sums.dataTransfer += share * cost.dataTransfer;
    sums.dataTransferPlain += share * cost.dataTransferPlain;
    sums.logs += share * cost.logs;
    sums.xray += share * cost.xray;
  }
  return Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, round(v)])) as MixCost;
}

/**
 * The DynamoDB units of a text's whole life (its send, sid, sent and delivered, and the spend
 * shards it charges) and of one call event (a Twilio callback), from section 8's scenarios on
 * the engine, per text and per event.
 */
export function unitsPerEvent(scenario: ContentionScenario): { readUnits: number; writeUnits: number } {
  const n = Math.max(1, scenario.kind === 'texts' ? (scenario.answers['201'] ?? 0) : scenario.requests);
  return { readUnits: round(scenario.units.readUnits / n, 1), writeUnits: round(scenario.units.writeUnits / n, 1) };
}

/**
 * The organization of docs/deploy.md's monthly bill: 10,000 contacts, 50,000 calls and 20,000 sent
 * texts a month, one key in use, an integration that syncs as `CRM_SYNC_MIX` (its sends being 5 %
 * of its requests), and one webhook endpoint hearing `call.completed` and `message.delivered`.
 */
export const ORGANIZATION_MONTH = {
  apiRequests: 400_000,
  calls: 50_000,
  callbacksPerCall: 6,
  texts: 20_000,
  statusCallbacksPerText: 2,
  webhookDeliveries: 70_000,
  /** A key in use all month is authorized again every 300 s (the cache TTL): 8,640 times. */
  authorizerMisses: 8_640,
  storage: 0.1,
} as const;

/**
 * What the bench does not measure, estimated (each says from what), for the parts of the bill
 * beyond section 9's requests.
 */
export const ESTIMATES = {
  /** A Twilio callback's function: like a small write route (section 3: 3-6 ms of CPU), its reads and writes. */
  callbackCpuMs: 5,
  callbackRoundTrips: 4,
  /** A callback's answer: 200 with an empty TwiML document or none, and the headers. */
  callbackResponseBytes: 350,
  /**
   * A delivery's table writes and reads, when the results hold no events section (section 10 measures them: 9 and 1.85
   * on 2026-11-27).
   */
  deliveryUnits: { readUnits: 1.85, writeUnits: 9 },
  /** The router's invocation, and the sender's, which waits for the receiver (about 200 ms across the internet). */
  routerBilledMs: 15,
  senderBilledMs: 220,
  /** SQS: the router's send, the sender's receive and delete. */
  sqsRequestsPerDelivery: 3,
  /** The POST to the receiver: the event's JSON, the signature headers. */
  deliveryRequestBytes: 1_300,
  /** The router's and the sender's INFO line ("Webhook event routed", "Webhook delivered"). */
  deliveryLogLineBytes: 700,
} as const;

/** What a request costs beyond another (a cache miss beyond the same request answered from the cache). */
function beyond(cost: RequestCost, base: RequestCost): RequestCost {
  const less = (
    key: 'dynamodb' | 'lambda' | 'authorizer' | 'dataTransfer' | 'dataTransferPlain' | 'logs' | 'xray' | 'total',
  ) => round(cost[key] - base[key], 4);
  return {
    ...cost,
    dynamodb: less('dynamodb'),
    lambda: less('lambda'),
    authorizer: less('authorizer'),
    dataTransfer: less('dataTransfer'),
    dataTransferPlain: less('dataTransferPlain'),
    logs: less('logs'),
    xray: less('xray'),
    total: less('total'),
  };
}

export type BillRow = {
  part: string;
  count: number;
  cost: number;
  dynamodb: number;
  apiGateway: number;
  dataTransfer: number;
  logs: number;
  xray: number;
};

/** Requests of one kind a month, priced per million: its parts scaled by the count. */
function rowOf(part: string, count: number, cost: Omit<RequestCost, 'request'>, apiGatewayPerMillion: number): BillRow {
  const scale = (perMillion: number) => round((perMillion * count) / 1_000_000, 4);
  return {
    part,
    count,
    cost: scale(cost.total),
    dynamodb: scale(cost.dynamodb),
    apiGateway: scale(apiGatewayPerMillion),
    dataTransfer: scale(cost.dataTransfer),
    logs: scale(cost.logs),
    xray: scale(cost.xray),
  };
}

/**
 * One organization's month (`ORGANIZATION_MONTH`), from section 9's costs and access lines and
 * section 8's units of a text's whole life and of a call event: its API requests, its key's
 * authorizer runs, Twilio's callbacks, the rest of each text's life, its webhook deliveries and
 * its storage. The stage's fixed monthly costs (web ACL, dashboard, alarms, secret, KMS) are shared
 * by every organization and listed apart (docs/deploy.md).
 */
export function organizationMonth(
  costs: RequestCost[],
  charged: ChargedUnitsCase[],
  textLife: { readUnits: number; writeUnits: number },
  callEvent: { readUnits: number; writeUnits: number },
  traceSampleRate: number = DEFAULT_TRACE_SAMPLE_RATE,
  /** A delivery's units as section 10 measured them on the engine. */
  deliveryUnits: { readUnits: number; writeUnits: number } = ESTIMATES.deliveryUnits,
): { rows: BillRow[]; total: BillRow } {
  const org = ORGANIZATION_MONTH;
  const find = <T extends { request?: string; name?: string }>(list: T[], name: string) => {
    const found = list.find((c) => (c.request ?? c.name) === name);
    if (!found) throw new Error(`organizationMonth: no ${name} in section 9`);
    return found;
  };
  const mix = mixCost(costs);
  const getMe = find(costs, 'GET /me');
  const miss = costs.find((c) => c.request.startsWith('GET /me,') && c.authorizer > 0);
  const sendRequest = find(charged, 'POST /messages');
  // A callback's access line is like GET /me's, less the organization and key ids (API Gateway writes "-").
  const callbackAccessBytes = find(charged, 'GET /me').accessLogBytes - 2 * 35;
  const callbackTraffic: Traffic = {
    responseBytes: ESTIMATES.callbackResponseBytes,
    plainResponseBytes: ESTIMATES.callbackResponseBytes,
    accessLogBytes: callbackAccessBytes,
    functionLogBytes: 0,
  };
  const callback = (units: { readUnits: number; writeUnits: number }) =>
    costPerMillion(
      units,
      ESTIMATES.callbackCpuMs,
      ESTIMATES.callbackRoundTrips,
      callbackTraffic,
      undefined,
      traceSampleRate,
    );
  const statusCallbacks = org.texts * org.statusCallbacksPerText;
  const restOfText = {
    readUnits: Math.max(0, textLife.readUnits - sendRequest.readUnits) / org.statusCallbacksPerText,
    writeUnits: Math.max(0, textLife.writeUnits - sendRequest.writeUnits) / org.statusCallbacksPerText,
  };

  // A delivery: two invocations, SQS, its units, the POST out, its lines; traced at Lambda's own rate
  // (1 a second, then 5 %): at this organization's pace, every router invocation.
  const d = ESTIMATES;
  const deliveryDynamodb =
    deliveryUnits.readUnits * PRICES.readUnitPerMillion + deliveryUnits.writeUnits * PRICES.writeUnitPerMillion;
  const deliveryLogs = perMillionOfBytes(
    d.deliveryLogLineBytes +
      platformLogBytes(LAMBDA_REQUEST_ID, d.routerBilledMs) +
      platformLogBytes(LAMBDA_REQUEST_ID, d.senderBilledMs),
    PRICES.logsIngestionPerGb,
  );
  const deliveryTransfer = perMillionOfBytes(d.deliveryRequestBytes, PRICES.dataTransferOutPerGb);
  const deliveryTotal =
    2 * PRICES.lambdaRequestsPerMillion +
    durationPerMillion(d.routerBilledMs + d.senderBilledMs) +
    d.sqsRequestsPerDelivery * PRICES.sqsPerMillionRequests +
    deliveryDynamodb +
    deliveryLogs +
    deliveryTransfer +
    PRICES.xrayPerMillionTraces;
  const delivery = {
    ...costPerMillion({ readUnits: 0, writeUnits: 0 }, null, 0),
    dynamodb: deliveryDynamodb,
    dataTransfer: deliveryTransfer,
    logs: deliveryLogs,
    xray: PRICES.xrayPerMillionTraces,
    total: deliveryTotal,
  };

  const rows: BillRow[] = [
    rowOf(
      'API requests, CRM-sync mix',
      org.apiRequests,
      { ...getMe, ...mix, total: mix.perMillion },
      PRICES.apiGatewayPerMillion,
    ),
    ...(miss
      ? [
          rowOf(
            'its key authorized again every 300 s (authorizer cache misses)',
            org.authorizerMisses,
            beyond(miss, getMe),
            0,
          ),
        ]
      : []),
    rowOf(
      'call callbacks from Twilio',
      org.calls * org.callbacksPerCall,
      callback(callEvent),
      PRICES.apiGatewayPerMillion,
    ),
    rowOf(
      "the rest of each text's life: its status callbacks",
      statusCallbacks,
      callback(restOfText),
      PRICES.apiGatewayPerMillion,
    ),
    rowOf('webhook deliveries', org.webhookDeliveries, delivery, 0),
    {
      part: 'storage',
      count: 0,
      cost: org.storage,
      dynamodb: org.storage,
      apiGateway: 0,
      dataTransfer: 0,
      logs: 0,
      xray: 0,
    },
  ];
  const sum = (key: keyof Omit<BillRow, 'part'>) =>
    round(
      rows.reduce((s, r) => s + r[key], 0),
      2,
    );
  return {
    rows: rows.map((r) => ({ ...r, cost: round(r.cost, 2) })),
    total: {
      part: 'total',
      count: 0,
      cost: sum('cost'),
      dynamodb: sum('dynamodb'),
      apiGateway: sum('apiGateway'),
      dataTransfer: sum('dataTransfer'),
      logs: sum('logs'),
      xray: sum('xray'),
    },
  };
}
