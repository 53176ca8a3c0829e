import { defaults } from '../config/defaults.js';
import ipaddr from 'ipaddr.js';

/**
 * The network source of a request as every per-IP limit keys it: an IPv4 address as is (IPv4-mapped
 * IPv6 counts as IPv4), an IPv6 address by its `/v6Prefix` network (RATE_LIMIT_IPV6_PREFIX, default
 * 64), because one subscriber commonly holds a whole /64 and could otherwise pick a fresh bucket per
 * request. The address is `req.ip`, which TRUST_PROXY decides (see src/config/index.ts).
 */
export function networkSourceKey(ip: string, v6Prefix: number): string {
  // The hot path (the public gate check): an IPv4 socket address is already canonical.
  if (!ip.includes(':')) return ip;
  // Parsing IPv6 costs microseconds; a client sends many requests from one address.
  const memoKey = `${v6Prefix}|${ip}`;
  let key = memo.get(memoKey);
  if (key === undefined) {
    key = ipv6SourceKey(ip, v6Prefix);
    if (memo.size >= defaults.networkSourceMemoMax) memo.clear();
    memo.set(memoKey, key);
  }
  return key;
}

const memo = new Map<string, string>();

function ipv6SourceKey(ip: string, v6Prefix: number): string {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // Zone ids (fe80::1%eth0) are local detail, not part of the source.
    addr = ipaddr.parse(ip.replace(/%.*$/, ''));
  } catch {
    return ip;
  }
  if (addr.kind() === 'ipv6') {
    const v6 = addr as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().toString();
    if (v6Prefix >= 128) return v6.toString();
    const bytes = v6.toByteArray();
    for (let bit = v6Prefix; bit < 128; bit++) bytes[bit >> 3] &= ~(0x80 >> (bit & 7));
    return `${ipaddr.fromByteArray(bytes).toString()}/${v6Prefix}`;
  }
  return addr.toString();
}

/**
 * Fastify's `trustProxy` for the configured TRUST_PROXY. A hop count trusts that many proxies in
 * front (the right-most X-Forwarded-For entries); Fastify's own numeric option trusts none, so the
 * count is given as a function. An address list is checked by proxy-addr against each hop.
 */
export function trustProxyOption(
  trust: false | number | string[],
): false | string[] | ((addr: string, hop: number) => boolean) {
  if (typeof trust !== 'number') return trust;
  const hops = trust;
  return (_addr, hop) => hop < hops;
}
