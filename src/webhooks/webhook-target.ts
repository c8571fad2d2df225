import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Environment } from '../event-store/event-store.ts';

/**
 * Which environments may send webhooks to internal addresses (loopback, private, link-local such as
 * cloud metadata at 169.254.169.254, unique-local, carrier-grade NAT, unspecified, ...). By default
 * only `test`, where merchants try their receivers on their own machine; `live` webhooks go only to
 * public addresses, so an endpoint URL cannot make Weir probe the network it runs in.
 */
export type WebhookTargetPolicy = { allowsInternal(environment: Environment): boolean };

/** The environments allowed internal targets unless the operator says otherwise (`WEIR_WEBHOOK_INTERNAL_TARGETS`). */
export const DEFAULT_INTERNAL_TARGETS: readonly Environment[] = ['test'];

export const webhookTargetPolicy = (
  internalFor: readonly Environment[] = DEFAULT_INTERNAL_TARGETS,
): WebhookTargetPolicy => {
  const allowed = new Set(internalFor);
  return { allowsInternal: (environment) => allowed.has(environment) };
};

/** A webhook target Weir will not connect to; `message` says which address and why. */
export class WebhookTargetRefusedError extends Error {
  override readonly name = 'WebhookTargetRefusedError';
}

/** The kind of internal address `address` is (`loopback`, `private`, `linkLocal`, ...), or null for a public one. */
export function internalAddressKind(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6 = ipaddr.parse(address);
  // ::ffff:127.0.0.1 is 127.0.0.1.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const range = parsed.range();
  return range === 'unicast' ? null : range;
}

const refusal = (host: string, address: string, kind: string) =>
  new WebhookTargetRefusedError(
    `${host === address ? address : `${host} resolves to ${address}, which`} is a ${kind} address: webhooks of this environment go only to public addresses`,
  );

/** The host of a URL as a resolver or `isIP` takes it (IPv6 literals without brackets). */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

const isLocalhostName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/** Refuses an IP literal or a `localhost` name that is internal; a name is left to the resolver. */
export function checkLiteralHost(host: string): void {
  if (isLocalhostName(host.toLowerCase())) throw refusal(host, host, 'loopback');
  if (isIP(host) === 0) return;
  const kind = internalAddressKind(host);
  if (kind) throw refusal(host, host, kind);
}

/** How names are resolved: `dns.lookup`'s shape with `all: true` (tests pass their own). */
export type Resolver = (
  hostname: string,
  options: LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * A resolver for `http.request` that refuses a name resolving to any internal address. The socket
 * connects to the very address checked here, so a name that resolves elsewhere the second time
 * (DNS rebinding) cannot slip through.
 */
export function guardedLookup(resolve: Resolver = dnsLookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const internal = addresses
        .map((a) => ({ address: a.address, kind: internalAddressKind(a.address) }))
        .find((a) => a.kind !== null);
      if (internal) return callback(refusal(hostname, internal.address, internal.kind!), '', 0);
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, addresses: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      callback(null, first.address, first.family);
    });
  };
}

/**
 * The check at create and update: an internal IP literal or `localhost` is refused, and so is a name
 * that resolves to an internal address now. A name that does not resolve (yet) is accepted: every
 * delivery checks again the address it connects to.
 */
export async function checkWebhookTarget(
  url: string,
  environment: Environment,
  policy: WebhookTargetPolicy,
  resolve: Resolver = dnsLookup,
) {
  if (policy.allowsInternal(environment)) return;
  const host = hostOf(new URL(url));
  checkLiteralHost(host);
  if (isIP(host) !== 0) return;
  await new Promise<void>((done, reject) => {
    const timer = setTimeout(done, 2_000);
    guardedLookup(resolve)(host, {}, (error) => {
      clearTimeout(timer);
      if (error instanceof WebhookTargetRefusedError) reject(error);
      else done();
    });
  });
}
