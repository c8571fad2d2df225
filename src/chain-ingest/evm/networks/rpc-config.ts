import { readFile } from 'node:fs/promises';
import { KNOWN_EVM_CHAIN_IDS } from './all-networks.ts';
import type { RpcEndpoints, RpcEndpointsByChainId } from './registry.ts';
import { SettingError } from '../../../shared/setting-error.ts';
import { endpointLabel } from '../../../shared/mask-userinfo.ts';

/** Prefix of the per-chain variables: `WEIR_RPC_<chainId>=https://…,wss://…`. */
export const RPC_ENV_PREFIX = 'WEIR_RPC_';
/** The one `WEIR_RPC_*` variable that is not a chain: the path of a JSON RPC config file. */
export const RPC_CONFIG_PATH_VARIABLE = 'WEIR_RPC_CONFIG';

/** The RPC configuration is wrong; `source` is the variable or file, and the message says what to fix. */
export class RpcConfigError extends SettingError {
  override name = 'RpcConfigError';
  constructor(
    readonly source: string,
    message: string,
  ) {
    super(`${source}: ${message}`);
  }
}

type Options = {
  /** Chain ids that may be configured; defaults to every known EVM network plus the devnet. */
  knownChainIds?: Iterable<number>;
};

/**
 * Endpoints from `WEIR_RPC_<chainId>` variables, each a comma-separated list where `http(s)://`
 * URLs are HTTP endpoints and `ws(s)://` URLs WebSocket ones. An empty variable counts as unset.
 * Throws a `RpcConfigError` naming the variable for a non-numeric or unknown chain id, another
 * scheme, or a malformed URL. `WEIR_RPC_CONFIG` is left alone (it names the config file).
 */
export function parseRpcEnv(
  env: Readonly<Record<string, string | undefined>>,
  options: Options = {},
): RpcEndpointsByChainId {
  const known = knownSet(options);
  const result: Record<number, RpcEndpoints> = {};
  const unknown: string[] = [];
  for (const [variable, value] of Object.entries(env)) {
    if (!variable.startsWith(RPC_ENV_PREFIX) || variable === RPC_CONFIG_PATH_VARIABLE) continue;
    if (value === undefined || value.trim() === '') continue;
    const suffix = variable.slice(RPC_ENV_PREFIX.length);
    if (!/^[0-9]+$/.test(suffix)) {
      throw new RpcConfigError(
        variable,
        `expected ${RPC_ENV_PREFIX}<chainId> with a decimal chain id (e.g. ${RPC_ENV_PREFIX}1), or ${RPC_CONFIG_PATH_VARIABLE} for a config file`,
      );
    }
    const chainId = Number(suffix);
    if (!known.has(chainId)) unknown.push(variable);
    else result[chainId] = classify(value.split(','), variable);
  }
  if (unknown.length > 0)
    throw unknownChainIds(
      unknown.sort().join(', '),
      unknown.map((v) => Number(v.slice(RPC_ENV_PREFIX.length))),
      known,
    );
  return Object.freeze(result);
}

/**
 * Endpoints from a parsed config file of the shape `{ "rpc": { "<chainId>": ["https://…", "wss://…"] } }`.
 * Other top-level keys are ignored. `source` names the file in errors.
 */
export function parseRpcConfig(json: unknown, source: string, options: Options = {}): RpcEndpointsByChainId {
  const known = knownSet(options);
  if (!isRecord(json))
    throw new RpcConfigError(source, 'expected a JSON object with an "rpc" object, e.g. {"rpc": {"1": ["https://…"]}}');
  const rpc = json['rpc'];
  if (!isRecord(rpc))
    throw new RpcConfigError(
      source,
      'expected an "rpc" object mapping chain ids to lists of URLs, e.g. {"rpc": {"1": ["https://…"]}}',
    );
  const result: Record<number, RpcEndpoints> = {};
  const unknown = Object.keys(rpc).filter((key) => /^[0-9]+$/.test(key) && !known.has(Number(key)));
  if (unknown.length > 0) throw unknownChainIds(source, unknown.map(Number), known);
  for (const [key, urls] of Object.entries(rpc)) {
    const where = `${source} rpc["${key}"]`;
    if (!/^[0-9]+$/.test(key)) throw new RpcConfigError(where, 'keys of "rpc" must be decimal chain ids');
    const chainId = Number(key);
    if (!Array.isArray(urls) || !urls.every((url): url is string => typeof url === 'string')) {
      throw new RpcConfigError(where, 'expected a list of URL strings, e.g. ["https://…", "wss://…"]');
    }
    result[chainId] = classify(urls, where);
  }
  return Object.freeze(result);
}

/** Reads and parses a JSON RPC config file (see `parseRpcConfig`); errors name the path. */
export async function readRpcConfigFile(path: string, options: Options = {}): Promise<RpcEndpointsByChainId> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? String(error.code) : 'unreadable';
    throw new RpcConfigError(path, `cannot read the RPC config file (${code})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new RpcConfigError(path, `is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  return parseRpcConfig(json, path, options);
}

/** File endpoints overlaid by environment endpoints: a chain set in the environment takes only those. */
export function mergeRpcConfigs(file: RpcEndpointsByChainId, env: RpcEndpointsByChainId): RpcEndpointsByChainId {
  return Object.freeze({ ...file, ...env });
}

/**
 * The RPC configuration of a process: the file named by `configPath` (or `WEIR_RPC_CONFIG`), if
 * any, overlaid by the `WEIR_RPC_<chainId>` variables.
 */
export async function loadRpcConfig(
  input: { env: Readonly<Record<string, string | undefined>>; configPath?: string } & Options,
): Promise<RpcEndpointsByChainId> {
  const options: Options = input.knownChainIds === undefined ? {} : { knownChainIds: input.knownChainIds };
  const path = input.configPath ?? nonEmpty(input.env[RPC_CONFIG_PATH_VARIABLE]);
  const file = path === undefined ? {} : await readRpcConfigFile(path, options);
  return mergeRpcConfigs(file, parseRpcEnv(input.env, options));
}

function classify(entries: readonly string[], source: string): RpcEndpoints {
  const http: string[] = [];
  const ws: string[] = [];
  entries.forEach((raw, index) => {
    const entry = raw.trim();
    if (entry === '') return;
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new RpcConfigError(
        source,
        `entry ${index + 1} is not a URL (${describe(entry)}); expected http(s):// or ws(s)://`,
      );
    }
    const list =
      url.protocol === 'http:' || url.protocol === 'https:'
        ? http
        : url.protocol === 'ws:' || url.protocol === 'wss:'
          ? ws
          : undefined;
    if (!list)
      throw new RpcConfigError(
        source,
        `entry ${index + 1} has scheme "${url.protocol.replace(/:$/, '')}"; only http, https, ws and wss are supported`,
      );
    if (url.hostname === '')
      throw new RpcConfigError(source, `entry ${index + 1} has no host (${endpointLabel(url.href)})`);
    if (!list.includes(entry)) list.push(entry);
  });
  return Object.freeze({ http: Object.freeze(http), ws: Object.freeze(ws) });
}

function describe(entry: string): string {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(entry)?.[1];
  return scheme ? `starts with "${scheme}:"` : `${entry.length} characters`;
}

function unknownChainIds(source: string, chainIds: number[], known: ReadonlySet<number>): RpcConfigError {
  const ids = chainIds.sort((a, b) => a - b).join(', ');
  return new RpcConfigError(
    source,
    `unknown chain id${chainIds.length > 1 ? 's' : ''} ${ids}; known chain ids: ${[...known].sort((a, b) => a - b).join(', ')}`,
  );
}

function knownSet(options: Options): ReadonlySet<number> {
  return new Set(options.knownChainIds ?? KNOWN_EVM_CHAIN_IDS);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
