import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyCreate } from '../../local/admin/commands/key';
import { simulateCall } from '../../local/admin/commands/simulate-call';
import { tenantUpdate } from '../../local/admin/commands/tenant';
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
  const base = { tenant: '0199a000-0000-7000-8000-000000000001', direction: 'inbound', from: '+14155550123', to: '+15005550006' };

  it('answers a completed call with a duration at its start and ends it duration seconds later', () => {
    const { call } = simulateCall.parse({ values: { ...base, 'started-at': '2026-03-01T09:00:00+01:00', duration: '65' }, positionals: [] });

    expect(call).toMatchObject({
      status: 'completed',
      startedAt: new Date('2026-03-01T08:00:00Z'),
      answeredAt: new Date('2026-03-01T08:00:00Z'),
      endedAt: new Date('2026-03-01T08:01:05Z'),
      durationSec: 65,
      isInternal: false,
      agentId: null,
    });
  });

  it('leaves an unanswered call unanswered, and a call without duration without times', () => {
    const parse = (values: Record<string, string>) => simulateCall.parse({ values: { ...base, ...values }, positionals: [] }).call;

    const noAnswer = parse({ status: 'no-answer', duration: '20' });
    const ringing = parse({ status: 'ringing' });

    expect(noAnswer).toMatchObject({ answeredAt: null, durationSec: 20 });
    expect(ringing).toMatchObject({ answeredAt: null, endedAt: null, durationSec: null });
  });

  it.each([
    ['--from', { from: '4155550123' }],
    ['--direction', { direction: 'sideways' }],
    ['--started-at', { 'started-at': 'yesterday' }],
    ['--duration', { duration: '1.5' }],
    ['--agent', { agent: 'bob' }],
    ['--tenant', { tenant: undefined }],
  ])('refuses a bad %s', (option, values) => {
    expect(() => simulateCall.parse({ values: { ...base, ...values }, positionals: [] })).toThrow(new RegExp(`^${option}: `));
  });
});

describe('key create and tenant update', () => {
  const tenantId = '0199a000-0000-7000-8000-000000000001';

  it('reads comma-separated scopes and stores the expiry in UTC', () => {
    const input = keyCreate.parse({ values: { tenant: tenantId, scopes: 'contacts.view, calls.view.team', 'expires-at': '2030-01-01T00:00:00+02:00' }, positionals: [] });

    expect(input).toEqual({ tenantId, name: undefined, scopes: ['contacts.view', 'calls.view.team'], expiresAt: '2029-12-31T22:00:00.000Z' });
  });

  it('names an unknown scope', () => {
    expect(() => keyCreate.parse({ values: { tenant: tenantId, scopes: 'contacts.view,contacts.edit' }, positionals: [] })).toThrow(
      /^--scopes: unknown scope contacts\.edit/,
    );
  });

  it('turns --no-sms-number into a null SMS number and collects every --approve-host', () => {
    const { change } = tenantUpdate.parse({ values: { 'no-sms-number': true, 'approve-host': ['a.example.com', 'b.example.com'] }, positionals: [tenantId] });

    expect(change).toMatchObject({ smsNumber: null, approveHosts: ['a.example.com', 'b.example.com'] });
  });

  it.each([
    ['nothing to change', {}, /nothing to change/],
    ['both --sms-number and --no-sms-number', { 'sms-number': '+15005550006', 'no-sms-number': true }, /cannot be used together/],
    ['a URL as a host', { 'approve-host': ['https://a.example.com'] }, /^--approve-host\.0: /],
    ['an unknown plan', { plan: 'enterprise' }, /^--plan: must be one of starter, pro, business/],
  ])('refuses %s', (_name, values, message) => {
    expect(() => tenantUpdate.parse({ values, positionals: [tenantId] })).toThrow(message);
  });
});
