import type { ChargedUnitsCase, LatencyResult, RoundTripCase } from './api-bench';
import type { ContentionScenario } from './contention-bench';
import {
  mixCost,
  organizationMonth,
  requestCosts,
  unitsPerEvent,
  type BillRow,
  type MixCost,
  type RequestCost,
} from './cost';

/** The parts of bench/results.json the costs are computed from (sections 2, 3, 5, 8 and 9). */
export type CostInputs = {
  chargedUnits: ChargedUnitsCase[];
  latency: LatencyResult[];
  roundTrips: RoundTripCase[];
  invocations?: { name: string; cpuMsPerInvoke: number }[];
  contention?: ContentionScenario[];
  /** Section 10: a webhook delivery's units on the engine. */
  events?: { unitsPerDelivery: { readUnits: number; writeUnits: number } };
};

export type CostReport = {
  requests: RequestCost[];
  crmSyncMix: MixCost;
  /** Needs section 8 (a text's whole life, a call event); absent without it. */
  organizationMonth?: { rows: BillRow[]; total: BillRow };
};

/** The section 8 scenarios the bill takes a text's whole life and a call event from. */
const TEXT_LIFE_SCENARIO = '1 organization, 16 senders';
const CALL_EVENTS_SCENARIO = '8 inbound-call streams, 1 organization';

/**
 * Every cost of docs/deploy.md "What a million requests cost", computed from a results file alone:
 * `npm run bench` stores it in results.json, `npx tsx bench/cost-tables.ts` recomputes it from any
 * results file and prints the page's tables.
 */
export function costReport(results: CostInputs): CostReport {
  const authorizerCpuMs = results.invocations?.find((i) => i.name === 'authorizer')?.cpuMsPerInvoke ?? null;
  const requests = requestCosts(
    results.chargedUnits,
    new Map(results.latency.map((l) => [l.endpoint, l.runtimeCpuMsPerRequest])),
    new Map(results.roundTrips.map((r) => [r.name, r.roundTrips])),
    authorizerCpuMs,
  );
  const onEngine = (name: string) => results.contention?.find((c) => c.name === name && c.engine === 'limits engine');
  const texts = onEngine(TEXT_LIFE_SCENARIO);
  const calls = onEngine(CALL_EVENTS_SCENARIO);
  return {
    requests,
    crmSyncMix: mixCost(requests),
    ...(texts &&
      calls && {
        organizationMonth: organizationMonth(
          requests,
          results.chargedUnits,
          unitsPerEvent(texts),
          unitsPerEvent(calls),
          undefined,
          results.events?.unitsPerDelivery,
        ),
      }),
  };
}

const money = (value: number, digits = 2) => value.toFixed(digits);

/** The tables of docs/deploy.md and bench/README.md section 9, in Markdown. */
export function costTables(results: CostInputs): string {
  const report = costReport(results);
  const byName = new Map(results.chargedUnits.map((c) => [c.name, c]));
  const lines = [
    '| request | read units | write units | DynamoDB | Lambda | authorizer | data out (gzip / plain) | logs (bytes) ' +
      '| X-Ray | total per million |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...report.requests.map((c) => {
      const charged = byName.get(c.request)!;
      return `| ${c.request} | ${c.readUnits} | ${c.writeUnits} | ${money(c.dynamodb)} | ${money(c.lambda)} | ${money(c.authorizer)} | ${money(c.dataTransfer)} / ${money(c.dataTransferPlain)} (${charged.responseBytes} / ${charged.plainResponseBytes} B) | ${money(c.logs)} (${c.logBytes}) | ${money(c.xray)} | **$${money(c.total)}** |`;
    }),
    '',
    `CRM-sync mix: $${money(report.crmSyncMix.perMillion)} per million (DynamoDB ` +
      `$${money(report.crmSyncMix.dynamodb)}, data out $${money(report.crmSyncMix.dataTransfer)} (plain: ` +
      `$${money(report.crmSyncMix.dataTransferPlain)}), logs $${money(report.crmSyncMix.logs)}, X-Ray ` +
      `$${money(report.crmSyncMix.xray)})`,
  ];
  if (report.organizationMonth) {
    const { rows, total } = report.organizationMonth;
    lines.push(
      '',
      '| part | how many a month | cost a month | of which DynamoDB | API Gateway | data out | logs | X-Ray |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...[...rows, total].map(
        (r) =>
          `| ${r.part} | ${r.count ? r.count.toLocaleString('en-US') : ''} | ` +
          `${r.part === 'total' ? `**$${money(r.cost)}**` : `$${money(r.cost)}`} | ${money(r.dynamodb)} | ` +
          `${money(r.apiGateway)} | ${money(r.dataTransfer)} | ${money(r.logs)} | ${money(r.xray)} |`,
      ),
    );
  }
  return lines.join('\n');
}
