import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyCreate } from '../../local/admin/commands/key';
import { simulateCall } from '../../local/admin/commands/simulate-call';
import { tenantCreate, tenantUpdate } from '../../local/admin/commands/tenant';
import {
  webhookAdd,
  webhookDeliveries,
  webhookListen,
  webhookRecover,
  webhookRotateSecret,
  webhookTest,
  webhookUpdate,
} from '../../local/admin/commands/webhook';
import { runAdmin } from '../../local/admin/main';
import { defineCommand, type CommandInput } from '../../local/admin/registry';
import { UsageError } from '../../local/usage-error';

/** A command that needs no table: it echoes what it was given, or fails when told to. */
const echo = defineCommand({
  words: ['echo', 'it'],
  summary: 'Echo the message',
  usage: '--message <s> [--fail]',
  positionals: ['id'],
  options: { message: { type: 'string' }, fail: { type: 'boolean' } },
  parse: ({ values, positionals }: CommandInput) => {
    if (typeof values.message !== 'string') throw new UsageError('--message: is required');
    return { message: values.message, id: positionals[0], fail: values.fail === true };
  },
  run: async ({ message, id, fail }) => {
    if (fail) throw new Error('it broke');
    return { message, id, table: process.env.TABLE_NAME };
  },
});

async function admin(...argv: string[]) {
  const out = { stdout: '', stderr: '' };
  const code = await runAdmin(argv, { stdout: (t) => (out.stdout += t), stderr: (t) => (out.stderr += t) }, [echo]);
  return { code, ...out };
}

const savedEnv = { ...process.env };
afterEach(() => {
  process.env = { ...savedEnv };
});

describe('the operator CLI', () => {
  it('prints the one JSON document of a command and exits 0', async () => {
    const result = await admin('--table-name', 'some-table', 'echo', 'it', 'x1', '--message', 'hi');

    expect(result).toEqual({ code: 0, stdout: expect.any(String), stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual({ message: 'hi', id: 'x1', table: 'some-table' });
  });

  it('prints usage listing the commands for --help, and exits 0', async () => {
    const result = await admin('--help');

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('echo it  Echo the message');
  });

  it("prints a command's own usage for <command> --help", async () => {
    const result = await admin('echo', 'it', '--help');

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('npm run admin -- echo it <id> --message <s> [--fail]');
  });

  it.each([
    ['no command', [], /No command given/],
    ['an unknown command', ['echo', 'that'], /Unknown command "echo that"/],
    ['an unknown option', ['echo', 'it', '--message', 'hi', '--loud'], /--loud/],
    ['an extra argument', ['echo', 'it', 'x1', 'x2', '--message', 'hi'], /Unexpected argument "x2"/],
    ['an invalid option value', ['echo', 'it', 'x1'], /--message: is required/],
  ])('exits 2 with a message and the usage for %s, before looking for a runtime', async (_name, argv, message) => {
    const result = await admin('--state-dir', '/nonexistent', ...argv);

    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).toContain('Usage: npm run admin --');
    expect(result.stdout).toBe('');
  });

  it('exits 1 with the reason when the command fails', async () => {
    const result = await admin('--table-name', 't', 'echo', 'it', '--message', 'hi', '--fail');

    expect(result).toEqual({ code: 1, stdout: '', stderr: 'echo it failed: it broke\n' });
  });

  it('exits 1 naming runtime.json when no local runtime was started in the state directory', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'cct-admin-'));
    try {
      const result = await admin('--state-dir', stateDir, 'echo', 'it', '--message', 'hi');

      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`No local runtime found (${join(stateDir, 'runtime.json')} does not exist)`);
    } finally {
      await rm(stateDir, { recursive: true, force: true });
    }
  });
});

describe('simulate call', () => {
  const base = {
    tenant: '0199a000-0000-7000-8000-000000000001',
    direction: 'inbound',
    from: '+14155550123',
    to: '+15005550006',
  };
  const parse = (values: Record<string, string | boolean | undefined>) =>
    simulateCall.parse({ values: { ...base, ...values }, positionals: [] });

  it('reads the documented options: a completed call of 30 s by default, the start in UTC', () => {
    const args = parse({ 'started-at': '2026-03-01T09:00:00+01:00', agent: '0199a000-0000-7000-8000-0000000000a1' });

    expect(args).toMatchObject({
      tenantId: base.tenant,
      direction: 'inbound',
      from: '+14155550123',
      to: '+15005550006',
      agentId: '0199a000-0000-7000-8000-0000000000a1',
      internal: false,
      status: 'completed',
      durationSec: 30,
      startedAt: new Date('2026-03-01T08:00:00Z'),
    });
  });

  it('starts now, in whole seconds like the provider, and keeps a ringing call without duration', () => {
    const args = parse({ status: 'ringing' });

    expect(args.startedAt.getMilliseconds()).toBe(0);
    expect(args).toMatchObject({ status: 'ringing', durationSec: 0 });
  });

  it('takes the two agents of an internal call as --from and --to', () => {
    const args = parse({
      direction: 'outbound',
      internal: true,
      from: '0199a000-0000-7000-8000-0000000000a1',
      to: '0199a000-0000-7000-8000-0000000000a2',
    });

    expect(args).toMatchObject({
      internal: true,
      from: '0199a000-0000-7000-8000-0000000000a1',
      to: '0199a000-0000-7000-8000-0000000000a2',
    });
  });

  it.each([
    ['--from', { from: '4155550123' }],
    ['--from', { from: undefined }],
    ['--to', { direction: 'outbound', to: undefined }],
    ['--direction', { direction: 'sideways' }],
    ['--status', { status: 'busy' }],
    ['--status', { status: 'hung-up' }],
    ['--started-at', { 'started-at': 'yesterday' }],
    ['--started-at', { 'started-at': '2026-03-01T09:00:00.250Z' }],
    ['--duration', { duration: '1.5' }],
    ['--duration', { status: 'in-progress', duration: '10' }],
    ['--agent', { agent: 'bob' }],
    ['--tenant', { tenant: undefined }],
    [
      '--direction',
      { internal: true, from: '0199a000-0000-7000-8000-0000000000a1', to: '0199a000-0000-7000-8000-0000000000a2' },
    ],
    ['--from', { direction: 'outbound', internal: true, to: '0199a000-0000-7000-8000-0000000000a2' }],
  ])('refuses a bad %s with a usage error', (option, values) => {
    expect(() => parse(values)).toThrow(UsageError);
    expect(() => parse(values)).toThrow(new RegExp(`^${option}: `));
  });
});

describe('webhook commands', () => {
  const endpointId = '0199a000-0000-7000-8000-0000000000e1';

  it('reads webhook add and keeps the events as given for the domain to check', () => {
    const args = webhookAdd.parse({
      values: {
        tenant: '0199a000-0000-7000-8000-000000000001',
        url: 'https://hooks.example.com/x',
        events: 'sms.received',
      },
      positionals: [],
    });

    expect(args).toEqual({
      tenant: '0199a000-0000-7000-8000-000000000001',
      url: 'https://hooks.example.com/x',
      events: 'sms.received',
    });
  });

  it('reads the endpoint of webhook deliveries and its limit, and the wait of webhook test', () => {
    expect(webhookDeliveries.parse({ values: { limit: '5' }, positionals: [endpointId] })).toEqual({
      endpointId,
      limit: 5,
    });
    expect(webhookTest.parse({ values: { 'wait-ms': '0' }, positionals: [endpointId] })).toEqual({
      endpointId,
      waitMs: 0,
    });
  });

  it('reads the grace period of rotate-secret in s, m, h or d, a day by default, and the URL and events of listen', () => {
    expect(webhookRotateSecret.parse({ values: {}, positionals: [endpointId] })).toEqual({
      endpointId,
      graceSeconds: 86_400,
    });
    expect(webhookRotateSecret.parse({ values: { grace: '90m' }, positionals: [endpointId] })).toEqual({
      endpointId,
      graceSeconds: 5400,
    });
    expect(webhookRotateSecret.parse({ values: { grace: '0' }, positionals: [endpointId] })).toEqual({
      endpointId,
      graceSeconds: 0,
    });
    expect(
      webhookListen.parse({
        values: {
          tenant: '0199a000-0000-7000-8000-000000000001',
          'forward-to': 'http://localhost:4242/hooks',
          events: 'sms.received, call.completed',
        },
        positionals: [],
      }),
    ).toEqual({
      tenant: '0199a000-0000-7000-8000-000000000001',
      forwardTo: 'http://localhost:4242/hooks',
      events: ['sms.received', 'call.completed'],
    });
  });

  it('reads webhook update and webhook recover: --since as a time or as how long ago, --max and --after', () => {
    expect(
      webhookUpdate.parse({ values: { events: 'message.delivered,message.failed' }, positionals: [endpointId] }),
    ).toEqual({ endpointId, events: 'message.delivered,message.failed' });
    expect(
      webhookRecover.parse({ values: { endpoint: endpointId, since: '2026-11-26T09:30:00+01:00' }, positionals: [] }),
    ).toEqual({
      endpointId,
      since: '2026-11-26T09:30:00+01:00',
      max: undefined,
      after: undefined,
    });
    expect(
      webhookRecover.parse({
        values: { endpoint: endpointId, since: '6h', max: '50', after: endpointId },
        positionals: [],
      }),
    ).toEqual({ endpointId, since: 21_600, max: 50, after: endpointId });
  });

  it.each([
    ['--since', () => webhookRecover.parse({ values: { endpoint: endpointId, since: 'yesterday' }, positionals: [] })],
    ['--endpoint', () => webhookRecover.parse({ values: { since: '6h' }, positionals: [] })],
    ['--max', () => webhookRecover.parse({ values: { endpoint: endpointId, since: '6h', max: '0' }, positionals: [] })],
    ['--events', () => webhookUpdate.parse({ values: {}, positionals: [endpointId] })],
    ['--grace', () => webhookRotateSecret.parse({ values: { grace: '2 days' }, positionals: [endpointId] })],
    [
      '--forward-to',
      () =>
        webhookListen.parse({
          values: { tenant: '0199a000-0000-7000-8000-000000000001', 'forward-to': 'localhost:4242' },
          positionals: [],
        }),
    ],
    ['<endpointId>', () => webhookDeliveries.parse({ values: {}, positionals: ['nope'] })],
    ['--limit', () => webhookDeliveries.parse({ values: { limit: '0' }, positionals: [endpointId] })],
    ['--url', () => webhookAdd.parse({ values: { tenant: '0199a000-0000-7000-8000-000000000001' }, positionals: [] })],
  ])('refuses a bad %s', (name, parse) => {
    expect(parse).toThrow(UsageError);
    expect(parse).toThrow(name);
  });
});

describe('key create, tenant create and tenant update', () => {
  const tenantId = '0199a000-0000-7000-8000-000000000001';

  it('reads comma-separated scopes and stores the expiry in UTC', () => {
    const input = keyCreate.parse({
      values: { tenant: tenantId, scopes: 'contacts.view, calls.view.team', 'expires-at': '2030-01-01T00:00:00+02:00' },
      positionals: [],
    });

    expect(input).toEqual({
      tenantId,
      name: undefined,
      scopes: ['contacts.view', 'calls.view.team'],
      expiresAt: '2029-12-31T22:00:00.000Z',
    });
  });

  it('names an unknown scope', () => {
    expect(() =>
      keyCreate.parse({ values: { tenant: tenantId, scopes: 'contacts.view,contacts.edit' }, positionals: [] }),
    ).toThrow(/^--scopes: unknown scope contacts\.edit/);
  });

  it('turns --no-sms-number into a null SMS number and collects every --approve-host', () => {
    const { change } = tenantUpdate.parse({
      values: { 'no-sms-number': true, 'approve-host': ['a.example.com', 'b.example.com'] },
      positionals: [tenantId],
    });

    expect(change).toMatchObject({ smsNumber: null, approveHosts: ['a.example.com', 'b.example.com'] });
  });

  it('collects every --number: the numbers of a new organization, numbers added to an existing one', () => {
    const created = tenantCreate.parse({
      values: { name: 'Org', number: ['+14155550100', '+14155550101'] },
      positionals: [],
    });
    const { change } = tenantUpdate.parse({ values: { number: ['+14155550102'] }, positionals: [tenantId] });

    expect(created.numbers).toEqual(['+14155550100', '+14155550101']);
    expect(change.addNumbers).toEqual(['+14155550102']);
  });

  it('reads the quiet-hours options into the policy, and only the parts given', () => {
    const created = tenantCreate.parse({
      values: {
        name: 'Org',
        'quiet-hours': 'refuse',
        'quiet-hours-applies-to': 'marketing',
        'quiet-hours-window': '09:00-20:00',
      },
      positionals: [],
    });
    const { change } = tenantUpdate.parse({ values: { 'quiet-hours': 'defer' }, positionals: [tenantId] });
    const without = tenantCreate.parse({ values: { name: 'Org' }, positionals: [] });

    expect(created.quietHours).toEqual({
      mode: 'refuse',
      appliesTo: 'marketing',
      window: { start: '09:00', end: '20:00' },
    });
    expect(change.quietHours).toEqual({ mode: 'defer' });
    expect(without.quietHours).toBeUndefined();
  });

  it.each([
    ['--quiet-hours', 'sometimes', /^--quiet-hours: must be one of off, refuse, defer/],
    ['--quiet-hours-applies-to', 'some', /^--quiet-hours-applies-to: must be one of all, marketing/],
    ['--quiet-hours-window', '07:00-20:00', /^--quiet-hours-window: must be HH:MM-HH:MM inside 08:00-21:00/],
    ['--quiet-hours-window', '09:00-21:30', /^--quiet-hours-window: must be HH:MM-HH:MM inside 08:00-21:00/],
    ['--quiet-hours-window', '12:00-15:00', /at least 4 hours/],
    ['--quiet-hours-window', '9-20', /^--quiet-hours-window: must be HH:MM-HH:MM/],
  ])('refuses %s %s naming the option', (option, value, message) => {
    expect(() => tenantUpdate.parse({ values: { [option.slice(2)]: value }, positionals: [tenantId] })).toThrow(
      message,
    );
  });

  it('reads the SMS rate in whole cents, on a new organization and as a change', () => {
    const created = tenantCreate.parse({ values: { name: 'Org', 'sms-rate-cents': '3' }, positionals: [] });
    const { change } = tenantUpdate.parse({ values: { 'sms-rate-cents': '100' }, positionals: [tenantId] });
    const withoutRate = tenantCreate.parse({ values: { name: 'Org' }, positionals: [] });

    expect(created.smsRateCents).toBe(3);
    expect(change).toMatchObject({ smsRateCents: 100 });
    expect(withoutRate.smsRateCents).toBeUndefined();
  });

  it.each(['0', '101', '1.5', '-2', 'two', ''])(
    'refuses an SMS rate of %p, naming the option and the range',
    (rate) => {
      const message = /^--sms-rate-cents: must be a whole number of cents from 1 to 100$/;

      expect(() => tenantCreate.parse({ values: { name: 'Org', 'sms-rate-cents': rate }, positionals: [] })).toThrow(
        message,
      );
      expect(() => tenantUpdate.parse({ values: { 'sms-rate-cents': rate }, positionals: [tenantId] })).toThrow(
        message,
      );
    },
  );

  it.each([
    ['nothing to change', {}, /nothing to change/],
    ['a number that is not E.164', { number: ['4155550100'] }, /^--number\.0: /],
    [
      'both --sms-number and --no-sms-number',
      { 'sms-number': '+15005550006', 'no-sms-number': true },
      /cannot be used together/,
    ],
    ['a URL as a host', { 'approve-host': ['https://a.example.com'] }, /^--approve-host\.0: /],
    ['an unknown plan', { plan: 'enterprise' }, /^--plan: must be one of starter, pro, business/],
  ])('refuses %s', (_name, values, message) => {
    expect(() => tenantUpdate.parse({ values, positionals: [tenantId] })).toThrow(message);
  });
});
