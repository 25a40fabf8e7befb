import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { verifyDelivery } from '../../clients/typescript/src/webhooks';
import { REPO_ROOT, tsxNode } from '../support/local-runtime';
import { useLocalRuntime } from './support/e2e';
import { pollUntil } from './support/poll';
import { startReceiver, type Receiver } from './support/receiver';

/**
 * Day two against the real local runtime: rotating a key and a webhook secret while traffic flows
 * (no request refused, no delivery a receiver cannot verify), and `webhook listen` forwarding
 * events to a local URL. The authorizer cache is off, so every request meets the key rows as they are.
 */
const e2e = useLocalRuntime({ args: ['--allow-http-webhooks', '--authorizer-cache-ttl', '0'] });
/**
 * The commands that prepare and observe; the day-two commands under test run as processes, as an operator runs them.
 */
const admin = (...args: string[]) => e2e.runtime.admin(...args);
const adminProcess = (...args: string[]) => e2e.runtime.adminProcess(...args);

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
  await admin('tenant', 'update', e2e.demoTenantId, '--approve-host', '127.0.0.1');
}, 60_000);
afterAll(() => receiver?.close());

/** Standard Webhooks' check: any `v1,<base64>` of the space-separated list, keyed by the secret's base64 part. */
function verifiesStandard(headers: IncomingHttpHeaders, body: string, secret: string): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key)
    .update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`)
    .digest('base64');
  return String(headers['webhook-signature']).split(' ').includes(`v1,${expected}`);
}

/** At most 100 requests a minute from the traffic loop: under the per-key limit whatever the rotation takes. */
const TRAFFIC_PACE_MS = 600;

describe('key rotate while requests flow', () => {
  it('refuses no request: the old key works through the rotation, the new one from the moment it is printed', async () => {
    // Prepare
    const { key: oldKey, apiKey } = await admin('key', 'create', '--tenant', e2e.demoTenantId, '--name', 'rotating');
    let current = oldKey as string;
    let rotating = true;
    const statuses: number[] = [];
    // Paced below the per-key limit (120 a minute), so a rotation slowed by a busy machine meets no 429.
    const traffic = (async () => {
      while (rotating) {
        statuses.push((await e2e.api.get('/me', current)).status);
        await new Promise((paced) => setTimeout(paced, TRAFFIC_PACE_MS));
      }
    })();
    // Act
    const rotated = await adminProcess('key', 'rotate', apiKey.id, '--grace', '1h');
    current = rotated.key;
    const withNewKey = await e2e.api.get('/me', rotated.key);
    const withOldKey = await e2e.api.get('/me', oldKey);
    rotating = false;
    await traffic;
    // Assess
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(withNewKey.status).toBe(200);
    expect(withOldKey.body).toMatchObject({ apiKey: { id: apiKey.id, expiresAt: rotated.replaced.expiresAt } });
  });
});

describe('the SMS rate of an organization', () => {
  it('is set and changed with the CLI, shown by tenant show, and prices the texts sent over the API; a rate out of range is refused, naming the option', async () => {
    // Prepare: an organization created with a rate of 3 cents, and its key
    const { tenant } = await admin(
      'tenant',
      'create',
      '--name',
      'Rated Org',
      '--sms-number',
      '+15005550177',
      '--sms-rate-cents',
      '3',
    );
    const { key } = await admin('key', 'create', '--tenant', tenant.id);
    // Act: a text of two segments; a wrong rate, then a new one
    const sent = await e2e.api.post('/messages', key, { to: '+14155550123', body: 'x'.repeat(161) });
    const refused = await e2e.runtime.adminResult('tenant', 'update', tenant.id, '--sms-rate-cents', '0');
    const updated = await admin('tenant', 'update', tenant.id, '--sms-rate-cents', '5');
    const shown = await admin('tenant', 'show', tenant.id);
    // Assess
    expect(tenant.smsRateCents).toBe(3);
    expect(sent.status).toBe(201);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--sms-rate-cents: must be a whole number of cents from 1 to 100');
    expect(updated.tenant.smsRateCents).toBe(5);
    expect(shown.tenant).toMatchObject({ smsRateCents: 5, spendCents: 2 * 3 });
  }, 90_000);
});

describe('webhook rotate-secret while events flow', () => {
  it('signs every delivery so a receiver holding the old secret and one holding the new secret both verify it', async () => {
    // Prepare
    const { endpoint, secret: oldSecret } = await admin(
      'webhook',
      'add',
      '--tenant',
      e2e.demoTenantId,
      '--url',
      receiver.url('/rotating'),
      '--events',
      'sms.received',
    );
    const sms = (from: string) =>
      admin('simulate', 'sms', '--tenant', e2e.demoTenantId, '--from', from, '--body', 'rotation traffic');
    // Act
    const [, rotation] = await Promise.all([
      sms('+14155550801'),
      adminProcess('webhook', 'rotate-secret', endpoint.id, '--grace', '1h'),
    ]);
    await sms('+14155550802');
    const received = await pollUntil(
      'two deliveries to /rotating',
      () => receiver.received().filter((r) => r.path === '/rotating'),
      (r) => r.length >= 2,
    );
    // Assess
    for (const request of received) {
      expect(verifyDelivery(request.headers, request.body, oldSecret)).toEqual({ ok: true });
      expect(verifyDelivery(request.headers, request.body, [rotation.secret, oldSecret])).toEqual({ ok: true });
    }
    const after = received.find((r) => r.body.includes('+14155550802'))!;
    expect(verifiesStandard(after.headers, after.body, rotation.secret)).toBe(true);
    expect(verifiesStandard(after.headers, after.body, oldSecret)).toBe(true);
  });
});

describe('webhook listen', () => {
  it('forwards signed events to a local URL, prints a line per event, and removes its endpoint on Ctrl-C', async () => {
    // Prepare
    const [command, argv] = tsxNode('bin/admin.ts', [
      '--state-dir',
      e2e.runtime.stateDir,
      'webhook',
      'listen',
      '--tenant',
      e2e.demoTenantId,
      '--forward-to',
      receiver.url('/dev'),
      '--events',
      'sms.received',
    ]);
    const child = spawn(command, argv, { cwd: REPO_ROOT, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    const lines = () =>
      stdout
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, any>); // eslint-disable-line @typescript-eslint/no-explicit-any
    const [{ listening }] = await pollUntil('the listening line', lines, (l) => l.length > 0, 25_000);
    // Act
    await admin('simulate', 'sms', '--tenant', e2e.demoTenantId, '--from', '+14155550803', '--body', 'forward me');
    const [forwarded] = await pollUntil(
      'the forwarded event',
      () => receiver.received().filter((r) => r.path === '/dev'),
      (r) => r.length > 0,
    );
    await pollUntil('the event line', lines, (l) => l.length > 1);
    child.kill('SIGINT');
    const code = await exited;
    const { endpoints } = await admin('webhook', 'list', '--tenant', e2e.demoTenantId);
    // Assess
    expect(verifyDelivery(forwarded.headers, forwarded.body, listening.secret)).toEqual({ ok: true });
    expect(JSON.parse(forwarded.body)).toMatchObject({ type: 'sms.received' });
    expect(lines()[1]).toMatchObject({ event: 'sms.received', status: 204, forwardedTo: receiver.url('/dev') });
    expect(code).toBe(0);
    expect(lines().at(-1)).toMatchObject({
      stopped: { endpointId: listening.endpointId, forwarded: 1, removed: true },
    });
    expect(endpoints.map((e: { id: string }) => e.id)).not.toContain(listening.endpointId);
  }, 60_000);
});
