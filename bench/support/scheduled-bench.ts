import { randomBytes } from 'node:crypto';
import { createTenant } from '../../lambdas/contexts/tenants/tenants';
import type { Carrier, CarrierReceipt, OutboundText } from '../../lambdas/contexts/texting/carrier-port';
import { nextDueAt } from '../../lambdas/contexts/texting/next-due';
import { fireDueTexts } from '../../lambdas/contexts/texting/scheduled-texts';
import { sendMessage } from '../../lambdas/contexts/texting/sending';
import { roundOf, RUN_DEADLINE_MS, RUN_WINDOW_MS, runFiring } from '../../lambdas/handlers/scheduled/firing-run';
import { LATE_AFTER_SECONDS } from '../../lambdas/handlers/scheduled/firing-metrics';
import { FIRING_MEMORY_MB } from '../../lib/constructs/scheduled-texts';
import type { LimitsStats } from '../../local/dynamodb-limits/meters';
import { PRICES } from './cost';
import type { LimitsMeters } from './limits-meters';
import { inPool } from './load';
import { distribution, round, type Distribution } from './stats';

/**
 * 13. Scheduled texts: `texts` texts scheduled for one instant (a minute's whole volume at its first second, the
 * hardest case), by `sendMessage` with `sendAt` as POST /messages runs it, then fired by the Lambda's own rounds
 * (`runFiring` over `fireDueTexts`, lambdas/handlers/scheduled/) in runs one minute apart, every table call of both on
 * the limits-faithful engine (docs/local-engine.md). The carrier counts what it is handed per message id and answers
 * after `carrierMs`, as Twilio's API answers a create; it plays no status callbacks, so the meters hold scheduling
 * and firing alone. The runs' phase is the worst for precision: a run's window closes just before the texts' time,
 * so the next run, 20 s after it, fires them.
 *
 * Reported: sends per message id (each must be 1), lateness (send - sendAt; within a minute is the promise), the
 * units AWS would charge per text for scheduling and for firing, the firing process's CPU per text, and what a
 * million scheduled texts cost.
 */
export type ScheduledOptions = {
  texts: number;
  organizations: number;
  /** Texts scheduled at once (POST /messages in flight). */
  concurrency: number;
  /** How long the carrier takes to answer a send. */
  carrierMs: number;
};

export type ScheduledScenario = {
  name: string;
  texts: number;
  organizations: number;
  scheduled: number;
  scheduleFailures: number;
  schedulingPerSecond: number;
  sent: number;
  duplicates: number;
  neverSent: number;
  sentEarly: number;
  /** Send time minus sendAt, ms. */
  latenessMs: Distribution;
  withinAMinute: number;
  runs: { startedAtS: number; rounds: number; fired: number; seconds: number }[];
  /** Texts handed to the carrier per second, from the first to the last. */
  firedPerSecond: number;
  perText: {
    scheduling: { readUnits: number; writeUnits: number; cpuMs: number };
    firing: { readUnits: number; writeUnits: number; cpuMs: number };
    /** A text sent at once, for comparison: its request's units (no carrier callbacks either). */
    direct: { readUnits: number; writeUnits: number; cpuMs: number };
  };
  hottestIndexWrite: { key: string; unitsPerText: number };
  throttles: number;
  conflicts: number;
  /**
   * What a million scheduled texts cost in DynamoDB (scheduling and firing) and the firing Lambda's duration, and
   * what that is beyond sending them at once.
   */
  dollarsPerMillion: { dynamodb: number; lambda: number; total: number; beyondDirect: number };
  /** Lambda GB-s per text at the firing function's memory, taken as CPU-bound (a full vCPU). */
  lambdaGbSecondsPerText: number;
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A carrier that counts every text it is handed, per message id, with the time it took it. */
class CountingCarrier implements Carrier {
  readonly name = 'loopback' as const;
  readonly sends = new Map<string, number[]>();
  constructor(private readonly answerMs: number) {}

  async send(text: OutboundText): Promise<CarrierReceipt> {
    const at = Date.now();
    this.sends.set(text.messageId, [...(this.sends.get(text.messageId) ?? []), at]);
    await sleep(this.answerMs);
    return { messageSid: `SM${randomBytes(16).toString('hex')}` };
  }
}

const unitsOf = (stats: LimitsStats) =>
  Object.values(stats.operations).reduce(
    (sum, o) => ({ readUnits: sum.readUnits + o.readUnits, writeUnits: sum.writeUnits + o.writeUnits }),
    { readUnits: 0, writeUnits: 0 },
  );

const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

/** Organizations with an SMS number and a limit no run reaches. */
async function organizations(count: number) {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      createTenant({
        name: `Scheduled bench ${i}`,
        smsNumber: `+1727${String(5550000 + i).padStart(7, '0')}`,
        billingStatus: 'active',
        spendingLimitCents: 100_000_000,
      }),
    ),
  );
}

/**
 * Schedules `count` texts (to distinct numbers) at `sendAt`, spread over the organizations, or sends them at once
 * without it; returns their ids.
 */
async function schedule(
  tenants: { id: string }[],
  count: number,
  sendAt: Date | undefined,
  options: ScheduledOptions,
  offset: number,
) {
  const carrier = new CountingCarrier(0);
  const ids: string[] = [];
  let failures = 0;
  await inPool(count, options.concurrency, async (i) => {
    const n = offset + i;
    try {
      const { message } = await sendMessage(
        tenants[n % tenants.length].id,
        { to: `+1720${String(n).padStart(7, '0')}`, body: `Scheduled ${n}`, sendAt: sendAt?.toISOString() },
        carrier,
      );
      ids.push(message.id);
    } catch {
      failures += 1;
    }
  });
  if (sendAt && carrier.sends.size > 0) throw new Error('scheduling handed a text to the carrier');
  return { ids, failures };
}

type Run = ScheduledScenario['runs'][number];

/**
 * Runs a minute apart, as the EventBridge rule starts them, one at a time (the reserved execution): a run still going
 * when the next is due delays it. The first starts `phaseMs` before `sendAt`; they stop once every text went, or
 * `giveUpMs` after `sendAt`.
 */
async function fireInRuns(carrier: CountingCarrier, ids: string[], sendAt: number, phaseMs: number, giveUpMs: number) {
  const runs: Run[] = [];
  let start = sendAt - phaseMs;
  while (start < Date.now()) start += 60_000;
  const allSent = () => ids.every((id) => carrier.sends.has(id));
  while (!allSent() && start < sendAt + giveUpMs) {
    await sleep(Math.max(0, start - Date.now()));
    const began = Date.now();
    const result = await runFiring(new Date(began + RUN_WINDOW_MS), new Date(began + RUN_DEADLINE_MS), {
      fire: async (now, deadline) => roundOf(await fireDueTexts({ now, deadline, carrier })),
      nextDueAt,
      now: Date.now,
      sleep,
    });
    runs.push({
      startedAtS: round((began - sendAt) / 1000, 1),
      rounds: result.rounds,
      fired: result.sent,
      seconds: round((Date.now() - began) / 1000, 1),
    });
    start += 60_000;
  }
  return runs;
}

/** Texts sent at once, the same way and to as many new numbers: what a scheduled text costs beyond them. */
async function directBaseline(
  tenants: { id: string }[],
  count: number,
  options: ScheduledOptions,
  meters: LimitsMeters,
) {
  await meters.reset();
  const cpu = process.cpuUsage();
  const { ids } = await schedule(tenants, count, undefined, options, 2 * options.texts);
  const units = unitsOf(await meters.stats());
  return { ...perUnits(units, ids.length), cpuMs: round(cpuMs(cpu) / Math.max(1, ids.length), 2) };
}

export async function measureScheduled(
  meters: LimitsMeters,
  options: ScheduledOptions,
  progress: (line: string) => void,
): Promise<ScheduledScenario> {
  const tenants = await organizations(options.organizations);
  const probe = Math.max(20, Math.min(200, Math.round(options.texts / 20)));
  // Texts sent at once first: the baseline, and the warm-up of the code and the engine before the pace is taken.
  const direct = await directBaseline(tenants, probe, options, meters);
  // The pace of scheduling here, on texts due two hours on (they never fire in this run): it sets the texts' time.
  const probeStart = Date.now();
  await schedule(tenants, probe, new Date(Date.now() + 2 * 3_600_000), options, options.texts);
  const pace = probe / ((Date.now() - probeStart) / 1000);
  const sendAt = Math.ceil((Date.now() + 65_000 + (1.5 * options.texts * 1000) / pace) / 1000) * 1000;
  progress(
    `  scheduling ${options.texts} texts for ${new Date(sendAt).toISOString()} (${round(pace)} a second here, ` +
      `${options.organizations} organizations)`,
  );

  await meters.reset();
  let cpu = process.cpuUsage();
  const scheduledAt = Date.now();
  const { ids, failures } = await schedule(tenants, options.texts, new Date(sendAt), options, 0);
  const schedulingS = (Date.now() - scheduledAt) / 1000;
  const schedulingCpuMs = cpuMs(cpu);
  const scheduling = await meters.stats();
  progress(
    `  ${ids.length} scheduled in ${round(schedulingS, 1)} s (${failures} failed); firing in runs a minute apart`,
  );

  await meters.reset();
  const carrier = new CountingCarrier(options.carrierMs);
  cpu = process.cpuUsage();
  const runs = await fireInRuns(carrier, ids, sendAt, RUN_WINDOW_MS + 500, 5 * 60_000);
  const firingCpuMs = cpuMs(cpu);
  const firing = await meters.stats();
  const measured = { options, ids, failures, sendAt, schedulingS, carrier, runs, scheduling, firing };
  return report({ ...measured, schedulingCpuMs, firingCpuMs, direct });
}

type Measured = {
  options: ScheduledOptions;
  ids: string[];
  failures: number;
  sendAt: number;
  schedulingS: number;
  carrier: CountingCarrier;
  runs: Run[];
  scheduling: LimitsStats;
  firing: LimitsStats;
  schedulingCpuMs: number;
  firingCpuMs: number;
  direct: { readUnits: number; writeUnits: number; cpuMs: number };
};

/** The hottest index partition by write units, over scheduling and firing together, per text. */
function hottestIndexWrite(m: Measured) {
  const units = new Map<string, number>();
  for (const stats of [m.scheduling, m.firing])
    for (const [key, meter] of Object.entries(stats.partitions))
      if (key.split(' ')[0].includes('/')) units.set(key, (units.get(key) ?? 0) + meter.writeUnits);
  const [key, most] = [...units].reduce((best, entry) => (entry[1] > best[1] ? entry : best), ['-', 0]);
  return { key, unitsPerText: round(most / Math.max(1, m.ids.length), 3) };
}

function report(m: Measured): ScheduledScenario {
  const sends = m.ids.map((id) => m.carrier.sends.get(id) ?? []);
  const firsts = sends.filter((s) => s.length > 0).map((s) => s[0]);
  const lateness = firsts.map((at) => at - m.sendAt);
  const n = Math.max(1, m.ids.length);
  const per = (value: number, digits = 3) => round(value / n, digits);
  const scheduling = unitsOf(m.scheduling);
  const firing = unitsOf(m.firing);
  const lambdaGbSecondsPerText = (m.firingCpuMs / 1000 / n) * (FIRING_MEMORY_MB / 1024);
  const dynamodb =
    ((scheduling.writeUnits + firing.writeUnits) / n) * PRICES.writeUnitPerMillion +
    ((scheduling.readUnits + firing.readUnits) / n) * PRICES.readUnitPerMillion;
  const lambda = lambdaGbSecondsPerText * 1_000_000 * PRICES.lambdaGbSecond;
  const directDynamodb =
    m.direct.writeUnits * PRICES.writeUnitPerMillion + m.direct.readUnits * PRICES.readUnitPerMillion;
  return {
    name: `${m.options.texts} texts for one instant, ${m.options.organizations} organizations`,
    texts: m.options.texts,
    organizations: m.options.organizations,
    scheduled: m.ids.length,
    scheduleFailures: m.failures,
    schedulingPerSecond: round(m.ids.length / m.schedulingS, 1),
    sent: firsts.length,
    duplicates: sends.reduce((sum, s) => sum + Math.max(0, s.length - 1), 0),
    neverSent: sends.filter((s) => s.length === 0).length,
    sentEarly: lateness.filter((ms) => ms < 0).length,
    latenessMs: distribution(lateness),
    withinAMinute: lateness.filter((ms) => ms >= 0 && ms <= LATE_AFTER_SECONDS * 1000).length,
    runs: m.runs,
    firedPerSecond:
      firsts.length > 1 ? round(firsts.length / ((Math.max(...firsts) - Math.min(...firsts)) / 1000 || 1), 1) : 0,
    perText: {
      scheduling: { ...perUnits(scheduling, n), cpuMs: per(m.schedulingCpuMs, 2) },
      firing: { ...perUnits(firing, n), cpuMs: per(m.firingCpuMs, 2) },
      direct: m.direct,
    },
    hottestIndexWrite: hottestIndexWrite(m),
    throttles: m.scheduling.throttles.total + m.firing.throttles.total,
    conflicts: m.scheduling.conflicts.total + m.firing.conflicts.total,
    dollarsPerMillion: {
      dynamodb: round(dynamodb),
      lambda: round(lambda),
      total: round(dynamodb + lambda),
      beyondDirect: round(dynamodb + lambda - directDynamodb),
    },
    lambdaGbSecondsPerText: round(lambdaGbSecondsPerText, 5),
  };
}

const perUnits = (units: { readUnits: number; writeUnits: number }, n: number) => ({
  readUnits: round(units.readUnits / n, 3),
  writeUnits: round(units.writeUnits / n, 3),
});

/** The section's lines for the console. */
export function scheduledReport(s: ScheduledScenario): string {
  const units = (u: { readUnits: number; writeUnits: number; cpuMs: number }) =>
    `${u.writeUnits} WU, ${u.readUnits} RU, ${u.cpuMs} ms CPU`;
  return [
    `  ${s.name}: ${s.scheduled} scheduled (${s.scheduleFailures} failed) at ${s.schedulingPerSecond} a second`,
    `  sent ${s.sent} (${s.neverSent} never, ${s.duplicates} twice or more, ${s.sentEarly} early); ` +
      `${s.withinAMinute} within a minute after their time`,
    `  lateness ms: p50 ${s.latenessMs.p50}, p99 ${s.latenessMs.p99}, max ${s.latenessMs.max}; ` +
      `${s.firedPerSecond} texts a second from the first send to the last`,
    `  runs (start s after sendAt / rounds / sent / s): ` +
      s.runs.map((r) => `${r.startedAtS}/${r.rounds}/${r.fired}/${r.seconds}`).join(', '),
    `  per text: scheduling ${units(s.perText.scheduling)}; firing ${units(s.perText.firing)}; ` +
      `a text sent at once ${units(s.perText.direct)}`,
    `  hottest index key ${s.hottestIndexWrite.key}: ${s.hottestIndexWrite.unitsPerText} WU per text; ` +
      `throttles ${s.throttles}, conflicts ${s.conflicts}`,
    `  per million scheduled texts: DynamoDB $${s.dollarsPerMillion.dynamodb}, the firing's Lambda ` +
      `$${s.dollarsPerMillion.lambda} (${s.lambdaGbSecondsPerText} GB-s a text), $${s.dollarsPerMillion.beyondDirect} ` +
      `beyond sending at once`,
  ].join('\n');
}
