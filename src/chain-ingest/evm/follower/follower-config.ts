import type { EvmFollowerDeps } from './evm-follower.ts';
import { EvmFollowerConfigError } from './errors.ts';

const NETWORK_NAME = /^[a-z0-9][a-z0-9-]*$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** The follower's settings, checked, with their defaults filled in. */
export type CheckedConfig = {
  startBlock: number | 'latest';
  pollIntervalMs: number;
  maxLogRange: number;
  blockBatchSize: number;
  rpcTimeoutMs: number;
  maxBackoffMs: number;
  heartbeatMs: number;
  webSocketRetryMs: number;
  preferredEndpointRetryMs: number;
};

/** Checks the follower's deps; throws {@link EvmFollowerConfigError} naming the first bad field. */
export function checkConfig(deps: EvmFollowerDeps): CheckedConfig {
  const fail = (field: string, message: string): never => {
    throw new EvmFollowerConfigError(deps.network.network, field, message);
  };
  const { network } = deps;
  if (!NETWORK_NAME.test(network.network))
    fail(
      'network.network',
      'must be lowercase letters, digits and dashes (the bus subject token), e.g. "base-sepolia"',
    );
  if (!Number.isSafeInteger(network.chainId) || network.chainId <= 0)
    fail('network.chainId', `must be a positive integer, got ${network.chainId}`);
  if (!Number.isSafeInteger(network.confirmations) || network.confirmations < 1)
    fail('network.confirmations', `must be an integer >= 1 (1 = final once mined), got ${network.confirmations}`);
  if (network.nativeSymbol.trim() === '') fail('network.nativeSymbol', 'must not be empty');
  if (!isDecimals(network.nativeDecimals))
    fail('network.nativeDecimals', `must be an integer from 0 to 36, got ${network.nativeDecimals}`);
  const seen = new Set<string>();
  for (const [index, token] of network.tokens.entries()) {
    if (token.address === 'native') continue;
    const field = `network.tokens[${index}]`;
    if (!ADDRESS.test(token.address))
      fail(`${field}.address`, `${JSON.stringify(token.address)} is not a 20-byte hex address`);
    if (seen.has(token.address.toLowerCase())) fail(`${field}.address`, `${token.address} is listed twice`);
    seen.add(token.address.toLowerCase());
    if (token.symbol.trim() === '') fail(`${field}.symbol`, 'must not be empty');
    if (!isDecimals(token.decimals))
      fail(`${field}.decimals`, `must be an integer from 0 to 36, got ${token.decimals}`);
  }
  if (deps.rpc.http.length === 0)
    fail(
      'rpc.http',
      'give at least one HTTP JSON-RPC endpoint (heads and blocks are read over HTTP; WebSocket only announces heads)',
    );
  for (const [index, url] of deps.rpc.http.entries())
    if (!hasProtocol(url, ['http:', 'https:']))
      fail(`rpc.http[${index}]`, `${JSON.stringify(url)} is not an http(s) URL`);
  for (const [index, url] of deps.rpc.ws.entries())
    if (!hasProtocol(url, ['ws:', 'wss:'])) fail(`rpc.ws[${index}]`, `${JSON.stringify(url)} is not a ws(s) URL`);

  const startBlock = deps.startBlock ?? 'latest';
  if (startBlock !== 'latest' && (startBlock < 0n || startBlock > BigInt(Number.MAX_SAFE_INTEGER)))
    fail('startBlock', `must be 'latest' or a block number >= 0, got ${startBlock}`);
  const maxLogRange = deps.maxLogRange ?? 2000n;
  if (maxLogRange < 1n || maxLogRange > 1_000_000n)
    fail('maxLogRange', `must be from 1 to 1000000 blocks, got ${maxLogRange}`);
  const positive = (field: string, value: number | undefined, fallback: number): number => {
    const chosen = value ?? fallback;
    if (!Number.isFinite(chosen) || chosen <= 0) fail(field, `must be a positive number, got ${chosen}`);
    return chosen;
  };
  const pollIntervalMs = positive('pollIntervalMs', deps.pollIntervalMs, 1_000);
  const blockBatchSize = positive('blockBatchSize', deps.blockBatchSize, 50);
  if (!Number.isInteger(blockBatchSize)) fail('blockBatchSize', `must be an integer, got ${blockBatchSize}`);
  return {
    startBlock: startBlock === 'latest' ? 'latest' : Number(startBlock),
    pollIntervalMs,
    maxLogRange: Number(maxLogRange),
    blockBatchSize,
    rpcTimeoutMs: positive('rpcTimeoutMs', deps.rpcTimeoutMs, 10_000),
    maxBackoffMs: positive('maxBackoffMs', deps.maxBackoffMs, 30_000),
    heartbeatMs: positive('heartbeatMs', deps.heartbeatMs, pollIntervalMs * 10),
    webSocketRetryMs: positive('webSocketRetryMs', deps.webSocketRetryMs, 1_000),
    preferredEndpointRetryMs: positive('preferredEndpointRetryMs', deps.preferredEndpointRetryMs, 60_000),
  };
}

function isDecimals(value: number): boolean {
  return Number.isInteger(value) && value >= 0 && value <= 36;
}

function hasProtocol(url: string, protocols: readonly string[]): boolean {
  try {
    return protocols.includes(new URL(url).protocol);
  } catch {
    return false;
  }
}
