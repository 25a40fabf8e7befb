/**
 * What each request kind of the soak's mix (bench/README section 11) costs, measured so a loaded machine cannot
 * distort it: table calls by operation (the runtime's counter, bench/support/table-call-counter.ts), items and units
 * as AWS charges them (the limits engine's meters) and CPU milliseconds of the runtime, of this process (the engine,
 * the receiver, the client) and of DynamoDB Local's JVM. One organization set up as the soak's; each kind's requests
 * are sent one at a time, each waited out until the runtime makes no table call for a while, so a request's count
 * holds what it set off in the background too (the loopback carrier's status steps, the webhook pipeline's routing
 * and delivery). Table calls per kind are the median over its requests (a timer's run, the settlement sweep or the
 * scheduled texts' firing, lands in one request's window at most); CPU is that of a burst of requests one
 * after another (with what they set off), less each process's idle rate.
 *
 *   npx tsx bench/probes/request-costs.ts [--n 12] [--burst 30] [--kinds <regex>] [--profile <dir>]
 *     [--out bench/out/request-costs.json] [-- <runtime options>]
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
process.env.AWS_REGION ??= 'local';

import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';

type Snapshot = {
  commands: Record<string, number>;
  runtimeCpu: number;
  benchCpu: number;
  jvmCpu: number;
  items: Units;
};
type Units = { itemReads: number; itemWrites: number; readUnits: number; writeUnits: number };
type Sample = { own: Snapshot; all: Snapshot; seconds: number };
export type KindCost = {
  kind: string;
  requests: number;
  /** Median table calls per request by operation: during the request, and with what it set off. */
  ownCalls: Record<string, number>;
  allCalls: Record<string, number>;
  /** Mean engine items and units per request, with what it set off. */
  units: Units;
  /** CPU ms per request over a burst, with what it set off (each process's idle rate taken off). */
  cpuMs: { runtime: number; bench: number; jvm: number };
  /** Mean CPU ms per request while it was answered (nothing taken off). */
  ownCpuMs: { runtime: number; bench: number; jvm: number };
};

const args = process.argv.slice(2);
const optionValue = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const N = Number(optionValue('--n') ?? 12);
const WARMUP = 3;
const BURST = Number(optionValue('--burst') ?? 30);
const QUIET_MS = 1_200;
const EXTRA_RUNTIME_ARGS = args.includes('--') ? args.slice(args.indexOf('--') + 1) : [];
const FAILING = '+16449990001';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const cpuOf = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const sum = (record: Record<string, number>) => Object.values(record).reduce((a, b) => a + b, 0);
const minus = (a: Record<string, number>, b: Record<string, number>) =>
  Object.fromEntries(Object.keys({ ...a, ...b }).map((k) => [k, (a[k] ?? 0) - (b[k] ?? 0)]));
const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const round1 = (n: number) => Math.round(n * 10) / 10;

async function main(): Promise<void> {
  const { startEngineWithLocalTable } = await import('../support/local-engine');
  const ddb = await startEngineWithLocalTable();
  const { startRuntimeOnEngine } = await import('../support/limits-meters');
  const { startSoakReceiver } = await import('../support/soak-receiver');
  const { processCpuMs } = await import('../support/webhook-bench');
  const receiver = await startSoakReceiver(0, 1);
  const runtime = await startRuntimeOnEngine(
    ddb.endpoint,
    {},
    [
      ...['--rate-limit-per-key', '0', '--callback-rate-limit', '0', '--callback-limit-per-address', '0'],
      ...['--allow-http-webhooks', '--webhook-backoff-ms', '2000', ...EXTRA_RUNTIME_ARGS],
    ],
    {
      LOOPBACK_STATUS_DELAY_MS: '300',
      LOOPBACK_FAIL_TO: FAILING,
    },
    // `--profile <dir>`: the runtime writes a CPU profile there when it stops (where its milliseconds go).
    optionValue('--profile') ? ['--cpu-prof', `--cpu-prof-dir=${optionValue('--profile')}`] : [],
  );
  try {
    const snapshot = async (): Promise<Snapshot> => {
      const benchCpu = cpuOf();
      const jvmCpu = processCpuMs(ddb.pid) ?? 0;
      const [counted, engine] = await Promise.all([runtime.stats(), runtime.limits.stats()]);
      const items = Object.values(engine.items);
      const operations = Object.values(engine.operations);
      return {
        commands: counted.commands,
        runtimeCpu: (counted.cpuMicros.user + counted.cpuMicros.system) / 1000,
        benchCpu,
        jvmCpu,
        items: {
          itemReads: items.reduce((n, m) => n + m.reads, 0),
          itemWrites: items.reduce((n, m) => n + m.writes, 0),
          readUnits: operations.reduce((n, m) => n + m.readUnits, 0),
          writeUnits: operations.reduce((n, m) => n + m.writeUnits, 0),
        },
      };
    };
    const org = await setUp(receiver, runtime.baseUrl);
    const only = optionValue('--kinds');
    const kinds = requestKinds(org, runtime.baseUrl).filter(([kind]) => !only || new RegExp(only).test(kind));
    const results: KindCost[] = [];
    // The runtime's own background (stream poller, timers) and the JVM's with nothing asked: a cost per second.
    const idleAtStart = await idleRates(snapshot, runtime, 15_000);
    console.log(`idle CPU ms per second: ${JSON.stringify(idleAtStart)}`);
    for (const [kind, run] of kinds) {
      for (let i = 0; i < WARMUP; i += 1) await run();
      await quiet(runtime);
      // Measured before each kind: the JVM's and the engine's background work drifts over a run.
      const idle = await idleRates(snapshot, runtime);
      const samples: Sample[] = [];
      for (let i = 0; i < N; i += 1) samples.push(await measureOne(run, snapshot, runtime));
      const cost = costOf(kind, samples);
      cost.cpuMs = await burstCpu(run, snapshot, runtime, idle);
      results.push(cost);
      console.log(line(results.at(-1)!));
    }
    const out = optionValue('--out');
    if (out) await writeFile(out, `${JSON.stringify({ n: N, idleAtStart, results }, null, 2)}\n`);
  } finally {
    await runtime.stop();
    await receiver.close();
    await ddb.stop();
  }
}

/**
 * CPU ms per second of each process with nothing asked of the runtime but the quiet wait's polls (its stream poller,
 * its timers, the engine's): taken off each request's window, which is mostly that wait.
 */
async function idleRates(snapshot: () => Promise<Snapshot>, runtime: Runtime, ms = 4_000) {
  const before = await snapshot();
  const started = Date.now();
  while (Date.now() - started < ms) {
    await runtime.stats();
    await sleep(100);
  }
  const after = await snapshot();
  const seconds = (Date.now() - started) / 1000;
  return {
    runtime: (after.runtimeCpu - before.runtimeCpu) / seconds,
    bench: (after.benchCpu - before.benchCpu) / seconds,
    jvm: (after.jvmCpu - before.jvmCpu) / seconds,
  };
}

type Runtime = Awaited<ReturnType<typeof import('../support/limits-meters').startRuntimeOnEngine>>;

/** Waits until the runtime has made no table call for QUIET_MS. */
async function quiet(runtime: Runtime): Promise<void> {
  let last = -1;
  let since = Date.now();
  for (;;) {
    const total = sum((await runtime.stats()).commands);
    if (total !== last) [last, since] = [total, Date.now()];
    else if (Date.now() - since >= QUIET_MS) return;
    await sleep(100);
  }
}

async function measureOne(
  run: () => Promise<unknown>,
  snapshot: () => Promise<Snapshot>,
  runtime: Runtime,
): Promise<Sample> {
  const startedAt = Date.now();
  const before = await snapshot();
  await run();
  const during = await snapshot();
  await quiet(runtime);
  const after = await snapshot();
  const delta = (a: Snapshot, b: Snapshot): Snapshot => ({
    commands: minus(a.commands, b.commands),
    runtimeCpu: a.runtimeCpu - b.runtimeCpu,
    benchCpu: a.benchCpu - b.benchCpu,
    jvmCpu: a.jvmCpu - b.jvmCpu,
    items: minus(a.items, b.items) as Units,
  });
  return { own: delta(during, before), all: delta(after, before), seconds: (Date.now() - startedAt) / 1000 };
}

function costOf(kind: string, samples: Sample[]): KindCost {
  const operations = [...new Set(samples.flatMap((s) => Object.keys(s.all.commands)))].sort();
  const calls = (pick: (s: Sample) => Snapshot) =>
    Object.fromEntries(
      operations
        .map((op) => [op, median(samples.map((s) => pick(s).commands[op] ?? 0))] as const)
        .filter(([, n]) => n > 0),
    );
  const ownCpu = (field: 'runtimeCpu' | 'benchCpu' | 'jvmCpu') => round1(mean(samples.map((s) => s.own[field])));
  const unit = (field: keyof Units) => round1(mean(samples.map((s) => s.all.items[field])));
  return {
    kind,
    requests: samples.length,
    ownCalls: calls((s) => s.own),
    allCalls: calls((s) => s.all),
    units: {
      itemReads: unit('itemReads'),
      itemWrites: unit('itemWrites'),
      readUnits: unit('readUnits'),
      writeUnits: unit('writeUnits'),
    },
    cpuMs: { runtime: 0, bench: 0, jvm: 0 },
    ownCpuMs: { runtime: ownCpu('runtimeCpu'), bench: ownCpu('benchCpu'), jvm: ownCpu('jvmCpu') },
  };
}

/**
 * CPU per request of a burst of BURST requests one after another, then the quiet wait once: the window is mostly
 * work, so the idle rate taken off is small beside it (per-request windows are mostly the wait).
 */
async function burstCpu(
  run: () => Promise<unknown>,
  snapshot: () => Promise<Snapshot>,
  runtime: Runtime,
  idle: Record<'runtime' | 'bench' | 'jvm', number>,
): Promise<KindCost['cpuMs']> {
  const startedAt = Date.now();
  const before = await snapshot();
  for (let i = 0; i < BURST; i += 1) await run();
  await quiet(runtime);
  const after = await snapshot();
  const seconds = (Date.now() - startedAt) / 1000;
  const per = (spent: number, rate: number) => round1((spent - rate * seconds) / BURST);
  return {
    runtime: per(after.runtimeCpu - before.runtimeCpu, idle.runtime),
    bench: per(after.benchCpu - before.benchCpu, idle.bench),
    jvm: per(after.jvmCpu - before.jvmCpu, idle.jvm),
  };
}

const callsText = (calls: Record<string, number>) =>
  Object.entries(calls)
    .map(([op, n]) => `${op} x${n}`)
    .join(', ') || 'none';

const line = (c: KindCost) =>
  `${c.kind.padEnd(28)} own: ${callsText(c.ownCalls)} | all: ${callsText(c.allCalls)} | items r/w ` +
  `${c.units.itemReads}/${c.units.itemWrites}, units r/w ${c.units.readUnits}/${c.units.writeUnits} | cpu ms ` +
  `runtime ${c.cpuMs.runtime} (${c.ownCpuMs.runtime} answering), bench ${c.cpuMs.bench} (${c.ownCpuMs.bench}), ` +
  `jvm ${c.cpuMs.jvm} (${c.ownCpuMs.jvm})`;

type Org = Awaited<ReturnType<typeof setUp>>;

/** One organization as the soak makes them: SMS and voice numbers, a key, a webhook endpoint for its four events. */
async function setUp(
  receiver: Awaited<ReturnType<typeof import('../support/soak-receiver').startSoakReceiver>>,
  baseUrl: string,
) {
  const { createTenant, updateTenant } = await import('../../lambdas/contexts/tenants/tenants');
  const { createApiKey } = await import('../../lambdas/contexts/tenants/api-keys');
  const { SCOPES } = await import('../../lambdas/contexts/tenants/scopes');
  const { addWebhookEndpoint } = await import('../../lambdas/contexts/webhooks/endpoints');
  const { httpClient } = await import('../support/load');
  const tenant = await createTenant({
    name: 'Probe',
    plan: 'pro',
    smsNumber: '+16400000000',
    numbers: ['+16410000000'],
    billingStatus: 'active',
    spendingLimitCents: 100_000_000,
  });
  await updateTenant(tenant.id, { approveHosts: ['127.0.0.1'] });
  const { key } = await createApiKey({ tenantId: tenant.id, name: 'probe', scopes: [...SCOPES] });
  const endpoint = await addWebhookEndpoint(
    tenant.id,
    { url: receiver.url('/probe'), events: ['call.completed', 'sms.received', 'message.delivered', 'message.failed'] },
    { allowInsecureTargets: true },
  );
  receiver.secrets.set('/probe', endpoint.secret);
  const api = httpClient(baseUrl, 1);
  return {
    tenantId: tenant.id,
    key,
    api,
    numbers: 0,
    picks: 0,
    sent: [] as { key: string; body: unknown }[],
    contacts: [] as string[],
    stopped: [] as string[],
  };
}

/** The soak's request kinds, each as one request (an inbound call: its six callbacks). */
function requestKinds(org: Org, baseUrl: string): [string, () => Promise<unknown>][] {
  const origin = new URL(baseUrl).origin;
  const fresh = () => `+1642${String((org.numbers += 1)).padStart(7, '0')}`;
  const known = '+16429999999';
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const send = () =>
      org.api.request(
        method,
        path,
        { Authorization: `Bearer ${org.key}`, ...headers },
        body === undefined ? undefined : JSON.stringify(body),
      );
    // A gateway that closes idle connections after 5 s (the 2026-11-27 code's) resets a reused one now and then.
    const response = await send().catch(send);
    if (response.status >= 500) throw new Error(`${method} ${path}: ${response.status} ${response.body}`);
    return response;
  };
  const send = async (to: string) => {
    const key = randomUUID();
    const body = { to, body: 'Probe text' };
    const response = await call('POST', '/messages', body, { 'Idempotency-Key': key });
    org.sent.push({ key, body });
    return response;
  };
  const callback = async (post: import('../../local/admin/carrier-sequences').CallbackPost) => {
    const [{ postSignedCallback }, { LOCAL_TWILIO_AUTH_TOKEN }] = await Promise.all([
      import('../../local/admin/carrier-post'),
      import('../../lambdas/contexts/carrier/callback-config'),
    ]);
    const search = new URLSearchParams(post.query ?? {}).toString();
    const path = `${post.route.path}${search ? `?${search}` : ''}`;
    const { status, body } = await postSignedCallback(origin, path, post.params, LOCAL_TWILIO_AUTH_TOKEN, origin);
    if (status >= 400) throw new Error(`${path}: ${status} ${body}`);
  };
  const sequences = () => import('../../local/admin/carrier-sequences');
  const inbound = async (from: string, body: string) =>
    callback((await sequences()).inboundSmsCallback({ from, to: '+16400000000', body }).post);
  return [
    [
      'STOP',
      async () => {
        const number = fresh();
        await inbound(number, 'STOP');
        org.stopped.push(number);
      },
    ],
    ['send, new conversation (201)', () => send(fresh())],
    ['send, known conversation (201)', () => send(known)],
    [
      'send replay (201)',
      async () => {
        const { key, body } = org.sent[org.sent.length - 1 - (org.picks++ % 5)];
        await call('POST', '/messages', body, { 'Idempotency-Key': key });
      },
    ],
    ['send to opted out (409)', () => send(org.stopped[org.picks++ % org.stopped.length])],
    ['send refused (422)', () => send(FAILING)],
    ['inbound text, new number', () => inbound(fresh(), 'Is my order ready?')],
    ['inbound text, known number', () => inbound(known, 'Is my order ready?')],
    [
      'inbound call (6 callbacks)',
      async () => {
        const sequence = (await sequences()).inboundCallSequence({
          tenantId: org.tenantId,
          from: fresh(),
          to: '+16410000000',
          startedAt: new Date(),
          agentId: '0199a000-0000-7000-8000-00000000a9e7',
          durationSec: 30,
        });
        for (const post of sequence.posts) await callback(post);
      },
    ],
    [
      'create contact',
      async () => {
        const response = await call('POST', '/contacts', {
          displayName: 'Probe contact',
          phoneNumber: fresh(),
          company: 'Soak Inc',
        });
        const id = (JSON.parse(response.body) as { contact?: { id: string } }).contact?.id;
        if (id) org.contacts.push(id);
      },
    ],
    [
      'update contact',
      () =>
        call('PATCH', `/contacts/${org.contacts[org.picks++ % org.contacts.length]}`, { tag: `t${org.picks % 100}` }),
    ],
    ['read contacts', () => call('GET', '/contacts?limit=20')],
    ['read calls', () => call('GET', '/calls?limit=20')],
    ['read threads', () => call('GET', '/messages?limit=20')],
    ['read conversation', () => call('GET', `/messages/${encodeURIComponent(known)}?limit=20`)],
    ['read me', () => call('GET', '/me')],
  ];
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
