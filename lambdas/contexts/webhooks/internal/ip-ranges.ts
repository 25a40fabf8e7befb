import { isIPv4, isIPv6 } from 'node:net';

/**
 * Which addresses a delivery may never reach. Addresses are compared as integers against CIDR
 * ranges; IPv6 forms that embed an IPv4 address (mapped, NAT64, 6to4) are judged by the IPv4
 * address they lead to.
 */
type Range = { base: bigint; bits: number; label: string };

const ipv4ToBigInt = (address: string): bigint =>
  address.split('.').reduce((acc, octet) => (acc << 8n) | BigInt(Number(octet)), 0n);

function ipv6ToBigInt(address: string): bigint {
  let text = address.split('%')[0]; // a zone id (fe80::1%eth0) names an interface, not an address
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = ipv4ToBigInt(tail);
    text = `${text.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, rest] = text.split('::');
  const headGroups = head ? head.split(':') : [];
  const restGroups = rest ? rest.split(':') : [];
  const groups =
    rest === undefined
      ? headGroups
      : [...headGroups, ...Array<string>(8 - headGroups.length - restGroups.length).fill('0'), ...restGroups];
  return groups.reduce((acc, group) => (acc << 16n) | BigInt(parseInt(group, 16)), 0n);
}

const range = (cidr: string, label: string, width: 32 | 128): Range => {
  const [address, bits] = cidr.split('/');
  return { base: width === 32 ? ipv4ToBigInt(address) : ipv6ToBigInt(address), bits: Number(bits), label };
};

const inRange = (value: bigint, { base, bits }: Range, width: number): boolean => {
  const shift = BigInt(width - bits);
  return value >> shift === base >> shift;
};

// Most specific first: the first match names the reason.
const IPV4_REFUSED: Range[] = [
  ['169.254.169.254/32', 'cloud metadata'],
  ['0.0.0.0/8', 'unspecified ("this network")'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'shared (carrier-grade NAT)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignment'],
  ['192.0.2.0/24', 'documentation'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved or broadcast'],
].map(([cidr, label]) => range(cidr, label, 32));

const IPV6_REFUSED: Range[] = [
  ['fd00:ec2::254/128', 'cloud metadata'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'IPv4-compatible (deprecated)'],
  ['64:ff9b:1::/48', 'local-use NAT64'],
  ['100::/64', 'discard-only'],
  ['2001::/32', 'Teredo'],
  ['2001:db8::/32', 'documentation'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local (deprecated)'],
  ['ff00::/8', 'multicast'],
].map(([cidr, label]) => range(cidr, label, 128));

const MAPPED = range('::ffff:0:0/96', 'IPv4-mapped', 128);
const NAT64 = range('64:ff9b::/96', 'NAT64', 128);
const SIX_TO_FOUR = range('2002::/16', '6to4', 128);

const LOOPBACK_V4 = range('127.0.0.0/8', 'loopback', 32);
const LOOPBACK_V6 = range('::1/128', 'loopback', 128);

const bigIntToIpv4 = (value: bigint): string => [24n, 16n, 8n, 0n].map((s) => Number((value >> s) & 0xffn)).join('.');

/** The IPv4 address an IPv6 address leads to, when it embeds one. */
function embeddedIpv4(value: bigint): { address: string; via: string } | undefined {
  if (inRange(value, MAPPED, 128) || inRange(value, NAT64, 128)) {
    return {
      address: bigIntToIpv4(value & 0xffffffffn),
      via: inRange(value, MAPPED, 128) ? MAPPED.label : NAT64.label,
    };
  }
  if (inRange(value, SIX_TO_FOUR, 128))
    return { address: bigIntToIpv4((value >> 80n) & 0xffffffffn), via: SIX_TO_FOUR.label };
  return undefined;
}

export function isLoopback(address: string): boolean {
  if (isIPv4(address)) return inRange(ipv4ToBigInt(address), LOOPBACK_V4, 32);
  if (!isIPv6(address)) return false;
  const value = ipv6ToBigInt(address);
  const v4 = embeddedIpv4(value);
  return v4 ? isLoopback(v4.address) : inRange(value, LOOPBACK_V6, 128);
}

/** Why a delivery may not go to this address, or undefined when it may. */
export function refusalReason(address: string): string | undefined {
  if (isIPv4(address)) {
    const value = ipv4ToBigInt(address);
    return IPV4_REFUSED.find((r) => inRange(value, r, 32))?.label;
  }
  if (!isIPv6(address.split('%')[0])) return 'not an IP address';
  const value = ipv6ToBigInt(address);
  const v4 = embeddedIpv4(value);
  if (v4) {
    const inner = refusalReason(v4.address);
    return inner && `${v4.via} ${inner}`;
  }
  return IPV6_REFUSED.find((r) => inRange(value, r, 128))?.label;
}
