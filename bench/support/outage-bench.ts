import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { GSIS } from '../../lambdas/shared/table/table-schema';
import { CHANGED_AT } from '../../lambdas/shared/table/row-types';
import { createApiKey } from '../../lambdas/contexts/tenants/api-keys';
import { SCOPES } from '../../lambdas/contexts/tenants/scopes';
import { createTenant } from '../../lambdas/contexts/tenants/tenants';
import {
  costCentsOfItem,
  getMessageItem,
  listMessages,
  UNSETTLED_SHARDS,
  unsettledPk,
} from '../../lambdas/contexts/texting/messages';
import { spendOf } from '../../lambdas/contexts/texting/spend';
import { httpClient, inPool, type HttpClient } from './load';
import { startRuntimeProcess, type RuntimeProcess } from './runtime-process';
import { distribution, round, type Distribution } from './stats';
import { processCpuMs } from './webhook-bench';

/**
 * 15. An outage's backlog settled (issue 39): the local runtime (`npm start`'s code, its settlement sweep on its
 * timer, once a minute) with `--text-grace-ms` at 4 minutes, in front of a carrier that answers 500 (outcome
 * unknown: each text stays charged and queued) to every send of the outage, `texts` of them. Then the carrier
 * recovers and sends go on at `sendsPerSecond` until the sweep has failed and refunded every outage text. Reported:
 * each outage text's time from its grace end to its refund (the row's change time), the sweep's runs as the refunds
 * cluster, the spend at the end against the texts not refunded, and the answers to the sends during the sweep.
 */
export type OutageOptions = {
  texts: number;
  graceMs: number;
  organizations: number;
  /** POST /messages in flight during the outage. */
  concurrency: number;
  /** Sends started each second once the carrier is back, until every outage text is settled. */
  sendsPerSecond: number;
  /** Given up this long after the last outage text's grace ended. */
  settleTimeoutMs: number;
};

export type OutageResult = {
  texts: number;
  graceMs: number;
  /** Answers to the outage's sends (each should be 201, queued without a sid). */
  outageAnswers: Record<string, number>;
  outageSendSeconds: number;
  refunded: number;
  notRefunded: number;
  /** Refund time minus grace end, seconds, over the refunded outage texts. */
  refundAfterGraceS: Distribution;
  /** Seconds from the last outage text's grace end until every one was refunded. */
  lastRefundAfterLastGraceS: number;
  /** The refunds as the sweep's runs made them: seconds after the first grace end, and how many. */
  sweepRuns: { atS: number; refunds: number; spanS: number }[];
  spend: { cents: number; centsOfTextsNotRefunded: number; equal: boolean };
  /**
   * CPU of the runtime and DynamoDB Local together (Linux /proc): per outage send, and per refund over the sweep's
   * window with the steady sends' share taken out at the outage's cost per send (an estimate, as the two paths differ).
   */
  cpuMs: { perOutageSend: number; perRefund: number | null } | null;
  /** Sends while the sweep worked (carrier back): answers, and their latency. */
  sendsDuringSweep: { answers: Record<string, number>; withSid: number; latencyMs: Distribution };
};

type Sent = { tenantId: string; id: string; createdAt: string };
type Org = { id: string; key: string };

const ACCOUNT_SID = `AC${'0'.repeat(32)}`;
const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** Twilio's Messages API as an outage shows it: 500 while `down`, else 201 with a fresh sid. */
function outageCarrier() {
  const state = { down: true, answered500: 0, answered201: 0 };
  const server: Server = createServer((req, res) => {
    req.resume().on('end', () => {
      const ok = !state.down;
      state[ok ? 'answered201' : 'answered500'] += 1;
      const body = ok
        ? { sid: `SM${randomBytes(16).toString('hex')}`, status: 'queued' }
        : { code: 20500, message: 'Internal Server Error', status: 500 };
      res.writeHead(ok ? 201 : 500, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  return {
    state,
    start: () =>
      new Promise<string>((done) =>
        server.listen(0, '127.0.0.1', () => done(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
      ),
    stop: () => new Promise<void>((done) => server.close(() => done())),
  };
}

async function organizations(count: number): Promise<Org[]> {
  return inPool(count, 4, async (i) => {
    const tenant = await createTenant({
      name: `Outage bench ${i}`,
      smsNumber: `+1737${String(5550000 + i).padStart(7, '0')}`,
      billingStatus: 'active',
      spendingLimitCents: 100_000_000,
    });
    const { key } = await createApiKey({ tenantId: tenant.id, name: 'outage-bench', scopes: [...SCOPES] });
    return { id: tenant.id, key };
  });
}

type Answer = {
  status: number;
  /** The text, from a 201's body; for any other answer, its organization and number, to look it up later. */
  sent?: Sent;
  asked: { tenantId: string; to: string };
  sid?: string;
  at: number;
  ms: number;
  requestId?: string;
  code?: string;
};

async function post(client: HttpClient, org: Org, to: string, body: string): Promise<Answer> {
  const started = Date.now();
  const response = await client
    .request('POST', '/messages', { Authorization: `Bearer ${org.key}` }, JSON.stringify({ to, body }))
    .catch(() => ({ status: 0, body: '' }));
  const at = Date.now();
  if (response.status !== 201) {
    const { requestId, code } = parsedError(response.body);
    return { status: response.status, asked: { tenantId: org.id, to }, at, ms: at - started, requestId, code };
  }
  const message = (JSON.parse(response.body) as { message: { id: string; createdAt: string; messageSid?: string } })
    .message;
  const sent = { tenantId: org.id, id: message.id, createdAt: message.createdAt };
  const asked = { tenantId: org.id, to };
  return { status: 201, sent, asked, sid: message.messageSid || undefined, at, ms: at - started };
}

/**
 * The texts the answers stand for: a 201's from its body; a send that answered otherwise (a 504 from the local
 * gateway while the send went on) found by its number, which no other send used.
 */
async function textsOf(answers: Answer[]): Promise<Sent[]> {
  const found = await inPool(answers.length, 8, async (i) => {
    const { sent, asked } = answers[i]!;
    if (sent) return [sent];
    const { items } = await listMessages(asked.tenantId, asked.to, { limit: 5 });
    return items.map((m) => ({ tenantId: asked.tenantId, id: m.id, createdAt: m.createdAt }));
  });
  return found.flat();
}

/** An error answer's request id and code (API Gateway's own answers carry a message instead). */
function parsedError(body: string): { requestId?: string; code?: string } {
  try {
    const parsed = JSON.parse(body) as { requestId?: string; code?: string; message?: string };
    return { requestId: parsed.requestId, code: parsed.code ?? parsed.message };
  } catch {
    return {};
  }
}

const countBy = (answers: Answer[]) =>
  answers.reduce<Record<string, number>>((n, a) => ({ ...n, [a.status]: (n[a.status] ?? 0) + 1 }), {});
const recipient = (prefix: string, i: number) => `+1${prefix}${String(i).padStart(7, '0')}`;

/** Outage texts still in the unsettled worklist: every shard's entries created up to the last outage text. */
async function unsettledUpTo(lastCreatedAt: string): Promise<number> {
  const counts = await inPool(UNSETTLED_SHARDS, 8, async (shard) => {
    let count = 0;
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await dynamo.send(
        new QueryCommand({
          TableName: TABLE_NAME,
          IndexName: GSIS.gsi2.indexName,
          KeyConditionExpression: '#pk = :pk AND #sk <= :upTo',
          ExpressionAttributeNames: { '#pk': GSIS.gsi2.partitionKey, '#sk': GSIS.gsi2.sortKey },
          ExpressionAttributeValues: { ':pk': unsettledPk(shard), ':upTo': `${lastCreatedAt}#\uffff` },
          Select: 'COUNT',
          ExclusiveStartKey: startKey,
        }),
      );
      count += page.Count ?? 0;
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return count;
  });
  return counts.reduce((a, b) => a + b, 0);
}

/**
 * Sends at `perSecond` from a pool of organizations until `stop()`; their answers. `explain` is handed each
 * answer other than 201 (to find what the runtime logged for it).
 */
function steadySends(client: HttpClient, orgs: Org[], perSecond: number, explain: (a: Answer) => void) {
  const answers: Answer[] = [];
  const inFlight = new Set<Promise<void>>();
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i += 1) {
      const send = post(client, orgs[i % orgs.length]!, recipient('512', i), `After the outage ${i}`).then((a) => {
        answers.push(a);
        if (a.status !== 201) explain(a);
        inFlight.delete(send);
      });
      inFlight.add(send);
      await sleep(1000 / perSecond);
    }
  })();
  return {
    answers,
    stop: async () => {
      running = false;
      await loop;
      await Promise.all(inFlight);
    },
  };
}

/** The outage: every send answered 500 by the carrier; the texts that answered 201 (queued, charged). */
async function outage(client: HttpClient, orgs: Org[], options: OutageOptions, explain: (a: Answer) => void) {
  const started = Date.now();
  const answers = await inPool(options.texts, options.concurrency, async (i) => {
    const answer = await post(client, orgs[i % orgs.length]!, recipient('737', i), `During the outage ${i}`);
    if (answer.status !== 201) explain(answer);
    return answer;
  });
  const seconds = round((Date.now() - started) / 1000, 1);
  return { answers, seconds, sent: await textsOf(answers) };
}

/** Waits until no outage text is left in the worklist, or the timeout; logs the count as it falls. */
async function untilSettled(lastCreatedAt: string, deadline: number, log: (line: string) => void): Promise<void> {
  let last = -1;
  for (;;) {
    const left = await unsettledUpTo(lastCreatedAt);
    if (left !== last) log(`  [${new Date().toISOString().slice(11, 19)}] outage texts unsettled: ${left}`);
    last = left;
    if (left === 0 || Date.now() > deadline) return;
    await sleep(2_000);
  }
}

/** The refunds' times clustered into the sweep's runs (a gap of 15 s or more starts another). */
function runsOf(refundedAt: number[], origin: number): OutageResult['sweepRuns'] {
  const runs: { first: number; last: number; refunds: number }[] = [];
  for (const at of [...refundedAt].sort((a, b) => a - b)) {
    const run = runs[runs.length - 1];
    if (run && at - run.last < 15_000) Object.assign(run, { last: at, refunds: run.refunds + 1 });
    else runs.push({ first: at, last: at, refunds: 1 });
  }
  return runs.map((r) => ({
    atS: round((r.first - origin) / 1000, 1),
    refunds: r.refunds,
    spanS: round((r.last - r.first) / 1000, 1),
  }));
}

/** Reads every text's row at the end: the outage texts' refunds, and the spend the rows still account for. */
async function assess(outageTexts: Sent[], later: Sent[], orgs: Org[], graceMs: number) {
  const rowsOf = (texts: Sent[]) => inPool(texts.length, 16, (i) => getMessageItem(texts[i]!.tenantId, texts[i]!.id));
  const [outageRows, laterRows] = [await rowsOf(outageTexts), await rowsOf(later)];
  const graceEnd = (i: number) => Date.parse(outageTexts[i]!.createdAt) + graceMs;
  const refunded = outageRows.flatMap((row, i) =>
    row.status === 'failed' && row.failureReason === 'carrier_outcome_unknown'
      ? [{ at: Number(row[CHANGED_AT]), after: Number(row[CHANGED_AT]) - graceEnd(i) }]
      : [],
  );
  const charged = [...outageRows, ...laterRows].filter((row) => row.status !== 'failed' && row.status !== 'canceled');
  const cents = (await Promise.all(orgs.map((org) => spendOf(org.id)))).reduce((a, b) => a + b, 0);
  const centsOfTextsNotRefunded = charged.reduce((sum, row) => sum + costCentsOfItem(row), 0);
  return { refunded, spend: { cents, centsOfTextsNotRefunded, equal: cents === centsOfTextsNotRefunded } };
}

/** What the runtime logged at warning or error level for an answer other than 201 (never a body: ids and errors). */
function explainAnswer(runtime: RuntimeProcess, answer: Answer, log: (line: string) => void): void {
  const what = `a send answered ${answer.status} (${answer.code ?? 'no code'}) after ${answer.ms} ms`;
  if (!answer.requestId) return log(`  ${what}, without a request id`);
  void runtime
    .linesUntil(answer.requestId)
    .then((lines) => lines.filter((line) => line.includes(answer.requestId!) || /"level":"(ERROR|WARN)"/.test(line)))
    .then((lines) => log(`  ${what}; the runtime logged:\n    ${lines.join('\n    ')}`))
    .catch((err: Error) => log(`  ${what} (${answer.requestId}): ${err.message}`));
}

/** The local runtime as `npm start` runs it, its carrier Twilio's API at `carrierUrl`, its grace `graceMs`. */
function startOutageRuntime(endpoint: string, carrierUrl: string, graceMs: number) {
  return startRuntimeProcess(endpoint, [], ['--text-grace-ms', String(graceMs)], {
    CARRIER: 'twilio',
    TWILIO_BASE_URL: carrierUrl,
    TWILIO_ACCOUNT_SID: ACCOUNT_SID,
    TWILIO_AUTH_TOKEN: 'outage-bench-token',
    // Where Twilio would post statuses: nowhere here, so only the sweep settles the outage's texts.
    TWILIO_STATUS_CALLBACK_URL: 'https://outage-bench.invalid/carrier/twilio/sms/status',
  });
}

export async function runOutage(
  engine: { endpoint: string; pid: number | undefined },
  options: OutageOptions,
  log: (line: string) => void,
): Promise<OutageResult> {
  const orgs = await organizations(options.organizations);
  const carrier = outageCarrier();
  const runtime = await startOutageRuntime(engine.endpoint, await carrier.start(), options.graceMs);
  const client = httpClient(runtime.baseUrl, options.concurrency);
  const cpu = () => cpuMsOf([runtime.pid, engine.pid]);
  try {
    const cpuAt = [cpu()];
    const explain = (a: Answer) => explainAnswer(runtime, a, log);
    const down = await outage(client, orgs, options, explain);
    log(`  outage: ${options.texts} sends in ${down.seconds} s, answers ${JSON.stringify(countBy(down.answers))}`);
    carrier.state.down = false; // the carrier is back: every later send must answer 201 with a sid
    cpuAt.push(cpu());
    const graceEnds = down.sent.map((s) => Date.parse(s.createdAt) + options.graceMs);
    const window = { firstGraceEnd: Math.min(...graceEnds), lastGraceEnd: Math.max(...graceEnds) };
    const lastCreatedAt = down.sent.map((s) => s.createdAt).sort()[down.sent.length - 1]!;
    const sends = steadySends(client, orgs, options.sendsPerSecond, explain);
    await untilSettled(lastCreatedAt, window.lastGraceEnd + options.settleTimeoutMs, log);
    await sends.stop();
    cpuAt.push(cpu());
    const later = await textsOf(sends.answers);
    const assessed = await assess(down.sent, later, orgs, options.graceMs);
    const result = resultOf(options, down, sends.answers, assessed, window);
    return { ...result, cpuMs: cpuShares(cpuAt, down.answers.length, sends.answers.length, result.refunded) };
  } finally {
    client.close();
    await runtime.stop();
    await carrier.stop();
  }
}

/** CPU ms of processes (Linux /proc), summed; null where it cannot be read. */
function cpuMsOf(pids: (number | undefined)[]): number | null {
  const each = pids.map(processCpuMs);
  return each.some((ms) => ms === null) ? null : (each as number[]).reduce((a, b) => a + b, 0);
}

function cpuShares(at: (number | null)[], outageSends: number, laterSends: number, refunds: number) {
  const [start, back, end] = at;
  if (start == null || back == null || end == null || refunds === 0) return null;
  const perOutageSend = (back - start) / outageSends;
  const perRefund = (end - back - laterSends * perOutageSend) / refunds;
  // Negative when the later sends cost more than the outage's did (a loaded machine): no estimate then.
  return { perOutageSend: round(perOutageSend, 1), perRefund: perRefund > 0 ? round(perRefund, 1) : null };
}

function resultOf(
  options: OutageOptions,
  down: { answers: Answer[]; seconds: number; sent: Sent[] },
  later: Answer[],
  { refunded, spend }: Awaited<ReturnType<typeof assess>>,
  { firstGraceEnd, lastGraceEnd }: { firstGraceEnd: number; lastGraceEnd: number },
): Omit<OutageResult, 'cpuMs'> {
  const during = later.filter((a) => a.at >= firstGraceEnd);
  return {
    texts: options.texts,
    graceMs: options.graceMs,
    outageAnswers: countBy(down.answers),
    outageSendSeconds: down.seconds,
    refunded: refunded.length,
    notRefunded: down.sent.length - refunded.length,
    refundAfterGraceS: distribution(refunded.map((r) => round(r.after / 1000, 1))),
    lastRefundAfterLastGraceS: round((Math.max(...refunded.map((r) => r.at)) - lastGraceEnd) / 1000, 1),
    sweepRuns: runsOf(
      refunded.map((r) => r.at),
      firstGraceEnd,
    ),
    spend,
    sendsDuringSweep: {
      answers: countBy(during),
      withSid: during.filter((a) => a.sid !== undefined).length,
      latencyMs: distribution(during.map((a) => a.ms)),
    },
  };
}
