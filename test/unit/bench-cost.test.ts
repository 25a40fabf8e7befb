import { costPerMillion, mixCost, requestCosts } from '../../bench/support/cost';

/**
 * The arithmetic behind docs/deploy.md "What a million requests cost" and bench section 9: the
 * worked example the page spells out, and which measured CPU each charged request is priced with.
 */
describe('bench cost per million requests', () => {
  it('prices GET /me as the worked example of docs/deploy.md: $4.30 fixed, $0.63 DynamoDB, $0.09 Lambda', () => {
    // Prepare: 1 write unit (the rate-limit counter), 2.97 ms of CPU, 1 round trip.
    // Act
    const cost = costPerMillion({ readUnits: 0, writeUnits: 1 }, 2.97, 1);

    // Assess: 6.9 x 2.97 + 5 = 25.5 -> 26 ms billed at 0.25 GB.
    expect(cost).toEqual({ readUnits: 0, writeUnits: 1, dynamodb: 0.63, cpuMs: 2.97, lambda: 0.09, total: 5.01 });
  });

  it('prices a variant of a route (query, page 2, a named case) with its route CPU, and no other route with it', () => {
    // Prepare
    const charged = ['GET /calls?direction=inbound', 'GET /calls, page 2 (cursor)', 'POST /contacts (adopt)', 'GET /calls/{id}', 'GET /openapi.json'].map((name) => ({
      name,
      status: 200,
      readUnits: 1,
      writeUnits: 1,
      indexWriteUnits: 0,
      operations: {},
    }));
    const cpu = new Map([
      ['GET /calls', 5],
      ['POST /contacts', 6],
      ['GET /calls/{id}', 3],
    ]);

    // Act
    const costs = requestCosts(charged, cpu, new Map());

    // Assess
    expect(costs.map((c) => [c.request, c.cpuMs])).toEqual([
      ['GET /calls?direction=inbound', 5],
      ['GET /calls, page 2 (cursor)', 5],
      ['POST /contacts (adopt)', 6],
      ['GET /calls/{id}', 3],
      ['GET /openapi.json', null],
    ]);
  });

  it('weights the CRM-sync mix by its shares and refuses a mix naming a request the bench did not price', () => {
    // Prepare
    const at = (request: string, total: number, dynamodb: number) => ({ request, readUnits: 0, writeUnits: 0, dynamodb, cpuMs: 1, lambda: 0, total });
    const costs = [at('GET /contacts', 5, 1), at('POST /messages', 15, 10)];

    // Act
    const mixed = mixCost(costs, [
      ['GET /contacts', 0.9],
      ['POST /messages', 0.1],
    ]);

    // Assess
    expect(mixed).toEqual({ perMillion: 6, dynamodb: 1.9 });
    expect(() => mixCost(costs, [['GET /calls', 1]])).toThrow('no cost for GET /calls');
  });
});
