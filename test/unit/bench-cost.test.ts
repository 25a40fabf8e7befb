import type { ChargedUnitsCase } from '../../bench/support/api-bench';
import {
  costPerMillion,
  mixCost,
  organizationMonth,
  PRICES,
  requestCosts,
  type RequestCost,
} from '../../bench/support/cost';
import {
  accessLogLine,
  LOG_EVENT_OVERHEAD_BYTES,
  logEventBytes,
  platformLogBytes,
} from '../../bench/support/log-bytes';
import { ACCESS_LOG_FIELDS } from '../../lib/constructs/public-api';

/**
 * The arithmetic behind docs/deploy.md "What a million requests cost", its monthly bill and bench
 * section 9: the worked example the page spells out, which measured CPU each charged request is
 * priced with, and each line that grows with traffic (bytes out, log bytes, traces, the authorizer).
 */
const GB = 2 ** 30;
const LAMBDA_REQUEST_ID = '8f5a2c1e-6b3d-4e7f-9a01-2b3c4d5e6f70';

const charged = (name: string, fields: Partial<ChargedUnitsCase> = {}): ChargedUnitsCase => ({
  name,
  status: 200,
  readUnits: 1,
  writeUnits: 1,
  indexWriteUnits: 0,
  operations: {},
  authorizerRan: false,
  responseBytes: 0,
  plainResponseBytes: 0,
  accessLogBytes: 0,
  functionLogBytes: 0,
  ...fields,
});

describe('bench cost per million requests', () => {
  it('prices GET /me as the worked example of docs/deploy.md: $4.30 fixed, DynamoDB, Lambda, bytes out, logs and traces', () => {
    // Prepare: 1 write unit (the rate-limit counter), 2.97 ms of CPU, 1 round trip; 600 bytes out, a 900-byte access
    // line.
    const traffic = { responseBytes: 600, plainResponseBytes: 600, accessLogBytes: 900, functionLogBytes: 0 };

    // Act
    const cost = costPerMillion({ readUnits: 0, writeUnits: 1 }, 2.97, 1, traffic);

    // Assess: 6.9 x 2.97 + 5 = 25.5 -> 26 ms billed at 0.25 GB: $0.09. 600 bytes x 1 million at $0.09
    // per 2^30 bytes: $0.05. 900 + Lambda's three lines of a 26 ms invocation (342 bytes with 26 each)
    // = 1,242 bytes at $0.50 per GB: $0.58. 1 % traced at $5 per million: $0.05.
    expect(platformLogBytes(LAMBDA_REQUEST_ID, 26)).toBe(342);
    expect(cost).toEqual({
      readUnits: 0,
      writeUnits: 1,
      dynamodb: 0.63,
      cpuMs: 2.97,
      lambda: 0.09,
      authorizer: 0,
      dataTransfer: 0.05,
      dataTransferPlain: 0.05,
      logBytes: 1242,
      logs: 0.58,
      xray: 0.05,
      // 4.30 + 0.625 + 0.0867 + 0.0503 + 0.5784 + 0.05
      total: 5.69,
    });
  });

  it('prices bytes out at $0.09 per GB: a 23 KB contact page, plain and gzipped', () => {
    // Prepare
    const page = { responseBytes: 4_500, plainResponseBytes: 23_500, accessLogBytes: 0, functionLogBytes: 0 };

    // Act
    const cost = costPerMillion({ readUnits: 4, writeUnits: 1 }, 3, 2, page);

    // Assess
    expect(cost.dataTransferPlain).toBe(Math.round(((23_500 * 1e6 * 0.09) / GB) * 100) / 100);
    expect(cost.dataTransferPlain).toBe(1.97);
    expect(cost.dataTransfer).toBe(0.38);
    // The total counts the bytes as sent to a client that accepts gzip.
    expect(
      cost.total - costPerMillion({ readUnits: 4, writeUnits: 1 }, 3, 2, { ...page, responseBytes: 0 }).total,
    ).toBeCloseTo(0.38, 1);
  });

  it('prices traces at the sampling rate of the stage: none, the default 1 %, every request', () => {
    const at = (rate: number) => costPerMillion({ readUnits: 0, writeUnits: 0 }, 1, 0, undefined, undefined, rate).xray;

    expect([at(0), at(0.01), at(1)]).toEqual([0, 0.05, PRICES.xrayPerMillionTraces]);
  });

  it('counts a log line as CloudWatch meters it, its bytes and 26 more, and renders the access line from the stack format', () => {
    // Prepare
    const line = accessLogLine({
      requestId: '0e1bcf9f-781c-4fc2-a81d-5dffdccf8eaa',
      httpMethod: 'GET',
      resourcePath: '/api/v1/contacts/{id}',
      path: '/prod/api/v1/contacts/01a21d0f-91c5-779f-877b-d76ac57a4818',
      status: 200,
      responseLength: 512,
      latencyMs: 23.4,
      authorizerRan: false,
      tenantId: '01a21d0f-91c5-779f-877b-d76ac57a4818',
      keyId: '01a21d0f-91c5-779f-877b-d76ac57a4819',
    });

    // Act
    const parsed = JSON.parse(line) as Record<string, string>;

    // Assess
    expect(Object.keys(parsed)).toEqual(Object.keys(ACCESS_LOG_FIELDS));
    expect(parsed).toMatchObject({
      status: '200',
      responseLength: '512',
      responseLatency: '23',
      authorizerStatus: '-',
      resourcePath: '/api/v1/contacts/{id}',
    });
    expect(logEventBytes(line)).toBe(Buffer.byteLength(line) + LOG_EVENT_OVERHEAD_BYTES);
    expect(logEventBytes('é')).toBe(2 + 26);
  });

  it('prices a variant of a route (query, page 2, a named case) with its route CPU, and no other route with it', () => {
    // Prepare
    const cases = [
      'GET /calls?direction=inbound',
      'GET /calls, page 2 (cursor)',
      'POST /contacts (adopt)',
      'GET /calls/{id}',
      'GET /openapi.json',
    ].map((name) => charged(name));
    const cpu = new Map([
      ['GET /calls', 5],
      ['POST /contacts', 6],
      ['GET /calls/{id}', 3],
    ]);

    // Act
    const costs = requestCosts(cases, cpu, new Map());

    // Assess
    expect(costs.map((c) => [c.request, c.cpuMs])).toEqual([
      ['GET /calls?direction=inbound', 5],
      ['GET /calls, page 2 (cursor)', 5],
      ['POST /contacts (adopt)', 6],
      ['GET /calls/{id}', 3],
      ['GET /openapi.json', null],
    ]);
  });

  it("prices GET /me's cache miss with the authorizer's own request and duration, and its reads as the authorizer's round trips", () => {
    // Prepare: section 2 counts 3 round trips on the miss (2 GetItems of the authorizer), 1 warm.
    const cases = [
      charged('GET /me, first request of a key (authorizer cache miss)', { readUnits: 2, authorizerRan: true }),
      charged('GET /me', { readUnits: 0 }),
    ];
    const roundTrips = new Map([
      ['GET /me, first request of a key (authorizer cache miss)', 3],
      ['GET /me', 1],
    ]);

    // Act
    const [miss, warm] = requestCosts(cases, new Map([['GET /me', 2.55]]), roundTrips, 3.58);

    // Assess: the function as warm (6.9 x 2.55 + 5 = 22.6 -> 23 ms); the authorizer 6.9 x 3.58 + 2 x 5 =
    // 34.7 -> 35 ms at 0.25 GB ($0.12) and its $0.20 request; its three Lambda lines as well.
    expect(miss.lambda).toBe(warm.lambda);
    expect(miss.authorizer).toBe(0.32);
    expect(warm.authorizer).toBe(0);
    expect(miss.logBytes - warm.logBytes).toBe(platformLogBytes(LAMBDA_REQUEST_ID, 35));
    expect(miss.total).toBeCloseTo(warm.total + 2 * PRICES.readUnitPerMillion + 0.32 + (342 * 1e6 * 0.5) / GB, 1);
  });

  it('weights the CRM-sync mix by its shares and refuses a mix naming a request the bench did not price', () => {
    // Prepare
    const at = (request: string, total: number, dynamodb: number, bytes: number): RequestCost => ({
      request,
      readUnits: 0,
      writeUnits: 0,
      dynamodb,
      cpuMs: 1,
      lambda: 0,
      authorizer: 0,
      dataTransfer: bytes,
      dataTransferPlain: 2 * bytes,
      logBytes: 1000,
      logs: 0.5,
      xray: 0.05,
      total,
    });
    const costs = [at('GET /contacts', 5, 1, 1), at('POST /messages', 15, 10, 0)];

    // Act
    const mixed = mixCost(costs, [
      ['GET /contacts', 0.9],
      ['POST /messages', 0.1],
    ]);

    // Assess
    expect(mixed).toEqual({
      perMillion: 6,
      dynamodb: 1.9,
      dataTransfer: 0.9,
      dataTransferPlain: 1.8,
      logs: 0.5,
      xray: 0.05,
    });
    expect(() => mixCost(costs, [['GET /calls', 1]])).toThrow('no cost for GET /calls');
  });
});

describe("one organization's month", () => {
  // Section 9's requests of the mix, GET /me warm and on a miss, and POST /messages's units.
  const names = [
    'GET /me, first request of a key (authorizer cache miss)',
    'GET /me',
    'GET /contacts',
    'GET /contacts/{id}',
    'GET /contacts?search=acme',
    'GET /calls',
    'GET /calls/{id}',
    'GET /messages',
    'GET /messages/{counterpart}',
    'POST /messages',
  ];
  const cases = names.map((name) =>
    charged(name, {
      authorizerRan: name.includes('cache miss'),
      readUnits: name === 'POST /messages' ? 3 : 1,
      writeUnits: name === 'POST /messages' ? 16 : 1,
      responseBytes: 1_000,
      plainResponseBytes: 3_000,
      accessLogBytes: 950,
    }),
  );
  const costs = requestCosts(
    cases,
    new Map(names.map((n) => [n.split(',')[0], 3])),
    new Map(names.map((n) => [n, n.includes('miss') ? 3 : 1])),
    3.5,
  );

  it('adds its API requests, authorizer runs, callbacks, the rest of its texts, its deliveries and storage, and nothing twice', () => {
    // Act
    const { rows, total } = organizationMonth(
      costs,
      cases,
      { readUnits: 6.5, writeUnits: 29 },
      { readUnits: 3, writeUnits: 13.3 },
    );

    // Assess
    expect(rows.map((r) => [r.part, r.count])).toEqual([
      ['API requests, CRM-sync mix', 400_000],
      ['its key authorized again every 300 s (authorizer cache misses)', 8_640],
      ['call callbacks from Twilio', 300_000],
      ["the rest of each text's life: its status callbacks", 40_000],
      ['webhook deliveries', 70_000],
      ['storage', 0],
    ]);
    expect(total.cost).toBeCloseTo(
      rows.reduce((sum, r) => sum + r.cost, 0),
      1,
    );
    // The mix's requests at its price per million.
    expect(rows[0].cost).toBeCloseTo((400_000 * mixCost(costs).perMillion) / 1e6, 2);
    // A status callback carries half of what a text's life writes beyond its send: (29 - 16) / 2 write units.
    const perCallback = (rows[3].dynamodb * 1e6) / 40_000;
    expect(perCallback).toBeCloseTo(
      ((29 - 16) / 2) * PRICES.writeUnitPerMillion + ((6.5 - 3) / 2) * PRICES.readUnitPerMillion,
      2,
    );
    // API Gateway bills the mix and the callbacks, not the authorizer's runs or the deliveries.
    expect(total.apiGateway).toBeCloseTo(((400_000 + 300_000 + 40_000) * PRICES.apiGatewayPerMillion) / 1e6, 2);
    // Every delivery is traced (Lambda's own rate at this pace): $5 per million.
    expect(rows[4].xray).toBeCloseTo((70_000 * 5) / 1e6, 3);
  });

  it('needs the requests it prices: a results file without GET /me is refused, naming it', () => {
    expect(() =>
      organizationMonth(
        costs.filter((c) => c.request !== 'GET /me'),
        cases,
        { readUnits: 6.5, writeUnits: 29 },
        { readUnits: 3, writeUnits: 13.3 },
      ),
    ).toThrow('GET /me');
  });
});
