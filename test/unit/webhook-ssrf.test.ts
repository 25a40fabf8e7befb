import { ValidationError } from '../../lambdas/shared/errors';
import { refusalReason } from '../../lambdas/contexts/webhooks/internal/ip-ranges';
import {
  checkTargetUrl,
  resolveTarget,
  ResolutionTimeoutError,
  TargetRefusedError,
  type LookupAll,
} from '../../lambdas/contexts/webhooks/internal/ssrf';

const lookupTo =
  (...addresses: string[]): LookupAll =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('address classification', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'shared (carrier-grade NAT)'],
    ['169.254.10.10', 'link-local'],
    ['169.254.169.254', 'cloud metadata'],
    ['0.0.0.0', 'unspecified ("this network")'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved or broadcast'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd12:3456::1', 'unique-local'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'IPv4-mapped cloud metadata'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['64:ff9b::a00:1', 'NAT64 private'],
    ['2002:c0a8:0101::1', '6to4 private'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(refusalReason(address)).toBe(reason);
  });

  it.each([
    '93.184.215.14',
    '172.32.0.1',
    '100.128.0.1',
    '8.8.8.8',
    '2606:4700::6810:84e5',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
  ])('allows the public address %s', (address) => {
    expect(refusalReason(address)).toBeUndefined();
  });
});

describe('target URLs at registration', () => {
  const approved = ['hooks.example.com', '127.0.0.1', '10.0.0.5', '[::1]', '::1'];

  it('accepts https on an approved host, case and final dot aside', () => {
    expect(checkTargetUrl('https://HOOKS.example.com./in?x=1#frag', approved).href).toBe(
      'https://hooks.example.com./in?x=1',
    );
  });

  it('refuses http, credentials, unapproved hosts and non-URLs', () => {
    expect(() => checkTargetUrl('http://hooks.example.com/in', approved)).toThrow('url: must use https');
    expect(() => checkTargetUrl('https://u:p@hooks.example.com/in', approved)).toThrow('credentials');
    expect(() => checkTargetUrl('https://evil.example.com/in', approved)).toThrow('not approved');
    expect(() => checkTargetUrl('hooks.example.com/in', approved)).toThrow(ValidationError);
  });

  it('normalises decimal, hex and octal IPv4 forms before checking them', () => {
    // The WHATWG parser turns every form into dotted decimal: an approval of 127.0.0.1 matches.
    for (const form of ['https://2130706433/', 'https://0x7f.1/', 'https://017700000001/', 'https://127.1/']) {
      expect(new URL(form).hostname).toBe('127.0.0.1');
      expect(() => checkTargetUrl(form, approved)).toThrow('127.0.0.1 is refused: loopback address');
    }
    expect(() => checkTargetUrl('http://2130706433/', approved, { allowInsecureTargets: true })).not.toThrow();
  });

  it('refuses private IP literals even when approved; loopback only with allowInsecureTargets', () => {
    expect(() => checkTargetUrl('https://10.0.0.5/', approved, { allowInsecureTargets: true })).toThrow('private');
    expect(() => checkTargetUrl('https://[::1]/', approved)).toThrow('loopback');
    expect(checkTargetUrl('http://[::1]:8080/h', approved, { allowInsecureTargets: true }).port).toBe('8080');
  });
});

describe('resolution at send time', () => {
  const url = new URL('https://hooks.example.com/in');

  it('pins the first address when every address is public', async () => {
    const target = await resolveTarget(url, { lookup: lookupTo('93.184.215.14', '2606:4700::6810:84e5') });

    expect(target).toMatchObject({ hostname: 'hooks.example.com', address: '93.184.215.14', family: 4 });
  });

  it('refuses a name with any inside address (DNS pointing at metadata, mixed answers)', async () => {
    await expect(resolveTarget(url, { lookup: lookupTo('169.254.169.254') })).rejects.toThrow(
      'hooks.example.com resolves to 169.254.169.254, which is refused: cloud metadata address',
    );
    await expect(
      resolveTarget(url, { lookup: lookupTo('93.184.215.14', '::ffff:192.168.0.1') }),
    ).rejects.toBeInstanceOf(TargetRefusedError);
    await expect(resolveTarget(url, { lookup: lookupTo() })).rejects.toThrow('has no address');
  });

  it('pins an IPv6 address of a name that resolves only to IPv6', async () => {
    const target = await resolveTarget(url, { lookup: lookupTo('2606:4700::6810:84e5') });

    expect(target).toMatchObject({ hostname: 'hooks.example.com', address: '2606:4700::6810:84e5', family: 6 });
  });

  it.each([
    ['fd12:3456::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['::1', 'loopback'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
  ])('refuses a name with an IPv6 answer %s among public ones (%s)', async (inside, reason) => {
    await expect(resolveTarget(url, { lookup: lookupTo('2606:4700::6810:84e5', inside) })).rejects.toThrow(
      `resolves to ${inside}, which is refused: ${reason}`,
    );
  });

  it('gives up on a lookup that outlasts the timeout, naming the host', async () => {
    const never: LookupAll = () => new Promise(() => undefined);

    const resolving = resolveTarget(url, { lookup: never, timeoutMs: 20 });

    await expect(resolving).rejects.toBeInstanceOf(ResolutionTimeoutError);
    await expect(resolving).rejects.toThrow('timeout: hooks.example.com did not resolve within 20 ms');
  });

  it('lets a name resolve to loopback only with allowInsecureTargets', async () => {
    const local = new URL('http://localhost:3000/h');

    await expect(resolveTarget(local, { lookup: lookupTo('127.0.0.1') })).rejects.toThrow('loopback');
    await expect(resolveTarget(local, { lookup: lookupTo('::1'), allowInsecureTargets: true })).resolves.toMatchObject({
      address: '::1',
      family: 6,
    });
  });
});
