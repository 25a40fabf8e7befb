import type { ChargedUnitsCase } from './api-bench';
import type { ContentionScenario } from './contention-bench';
import { round } from './stats';

/**
 * What requests cost on AWS, from the units the limits engine charges as AWS does (section 9) and
 * the CPU the runtime spent per request (section 3). Prices: us-east-1 list prices as published in
 * 2025 (docs/deploy.md says which and how to check them); each figure is per million requests.
 */
export const PRICES = {
  apiGatewayPerMillion: 3.5,
  wafPerMillion: 0.6,
  lambdaRequestsPerMillion: 0.2,
  lambdaGbSecond: 0.0000133334,
  writeUnitPerMillion: 0.625,
  readUnitPerMillion: 0.125,
  /** Lambda at 256 MB: about 1/7 of a vCPU (a full one at 1,769 MB), so wall time is ~6.9x the CPU time. */
  cpuToDuration: 6.9,
  /** A DynamoDB round trip inside the region. */
  msPerRoundTrip: 5,
  memoryGb: 0.25,
} as const;

export type RequestCost = {
  request: string;
  readUnits: number;
  writeUnits: number;
  dynamodb: number;
  cpuMs: number | null;
  lambda: number;
  total: number;
};

const FIXED = PRICES.apiGatewayPerMillion + PRICES.wafPerMillion + PRICES.lambdaRequestsPerMillion;

/** Dollars per million of one request, from its units, its CPU and its round trips. */
export function costPerMillion(units: { readUnits: number; writeUnits: number }, cpuMs: number | null, roundTrips: number): Omit<RequestCost, 'request'> {
  const dynamodb = units.readUnits * PRICES.readUnitPerMillion + units.writeUnits * PRICES.writeUnitPerMillion;
  const billedMs = cpuMs === null ? 0 : Math.ceil(PRICES.cpuToDuration * cpuMs + PRICES.msPerRoundTrip * roundTrips);
  const lambda = (billedMs / 1000) * PRICES.memoryGb * 1_000_000 * PRICES.lambdaGbSecond;
  return { readUnits: units.readUnits, writeUnits: units.writeUnits, dynamodb: round(dynamodb), cpuMs, lambda: round(lambda), total: round(FIXED + dynamodb + lambda) };
}

/** Every request of section 9, costed with the CPU and round trips sections 2 and 3 measured for it. */
export function requestCosts(
  charged: ChargedUnitsCase[],
  cpuByEndpoint: Map<string, number>,
  roundTripsByRequest: Map<string, number>,
): RequestCost[] {
  return charged.map((c) => {
    // A variant ("GET /calls?direction=inbound", "GET /calls, page 2", "POST /contacts (adopt ...)") takes its route's CPU.
    const endpoint = [...cpuByEndpoint.keys()].find((name) => c.name === name || (c.name.startsWith(name) && ' ,?('.includes(c.name[name.length])));
    return { request: c.name, ...costPerMillion(c, endpoint ? cpuByEndpoint.get(endpoint)! : null, roundTripsByRequest.get(c.name) ?? 0) };
  });
}

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

export function mixCost(costs: RequestCost[], mix: [string, number][] = CRM_SYNC_MIX): { perMillion: number; dynamodb: number } {
  let perMillion = 0;
  let dynamodb = 0;
  for (const [request, share] of mix) {
    const cost = costs.find((c) => c.request === request);
    if (!cost) throw new Error(`mixCost: no cost for ${request}`);
    perMillion += share * cost.total;
    dynamodb += share * cost.dynamodb;
  }
  return { perMillion: round(perMillion), dynamodb: round(dynamodb) };
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
