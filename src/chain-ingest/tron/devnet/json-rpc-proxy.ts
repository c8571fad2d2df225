import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Hex } from 'viem';
import { tronAddressBytes } from '../address.ts';
import { TRON_LOCAL_CHAIN_ID } from '../networks.ts';
import { createChainTransactions } from './chain-transactions.ts';
import { createWalletTransactions } from './wallet-transactions.ts';

/*
 * A Tron-flavoured JSON-RPC in front of a local EVM node (anvil), for tests and `weir devnet`. No
 * Tron node runs here, so the contracts run on anvil and Weir reads them through this proxy, which
 * answers as java-tron's JSON-RPC does where Weir depends on it (tronprotocol documentation,
 * "JSON-RPC API"):
 *  - `eth_chainId` answers the Tron chain id (local: TRON_LOCAL_CHAIN_ID, ASCII "TrnL");
 *  - the tag `finalized` is the latest solidified block: here `finalizedDepth` blocks behind the
 *    head (19 on Tron; anvil's own `finalized` would be another depth);
 *  - state is read at `latest` only: eth_getBalance, eth_call, eth_getCode and eth_getStorageAt
 *    refuse a block number ("QUANTITY not supported, just support TAG as latest") and other tags
 *    (documentation-en, eth_getBalance), as Tron keeps no historical state;
 *  - `<url>/solidity` answers as a Solidity node's JSON-RPC (port 8555): its `latest` is the latest
 *    solidified block, for eth_blockNumber, eth_getBlockByNumber and the state reads alike;
 *  - `pending` and `safe` are refused ("TAG pending not supported"), and eth_getLogs refuses
 *    fromBlock > toBlock, a range over `maxBlockRange` (5000 by default on java-tron) and a
 *    blockHash given with a range, with java-tron's messages (documentation-en, eth_getLogs);
 *  - addresses: java-tron takes and answers 20-byte `0x…` hex in its eth_ methods, the 0x41 byte
 *    dropped ("eth_call: from/to … with the prefix 41 removed"; the real Nile eth_getLogs answer
 *    in documentation-en shows `"address": "0x9ff8fc48…"`, lowercase), as anvil does, so nothing
 *    needs converting; log addresses are lowercased to hold that whatever the upstream writes.
 *    (Tron block hashes begin with the block number; nothing in Weir reads that, so it is not mimicked.)
 *  - blocks carry an all-zero `logsBloom` (java-tron's BlockResult fills it with 256 zero bytes), so
 *    a reader cannot use the bloom to notice logs an eth_getLogs answer left out;
 * And it misbehaves on request: `weir_emptyLogs` makes eth_getLogs answer [] for ranges that
 * overlap a given one, the way Tron nodes are known to miss logs, to prove a retry and a
 * reconciler. What it cannot be faithful to: CREATE2 addresses (anvil derives with 0xff, the TVM
 * with 0x41, see ../deposit-address.ts) and CREATE addresses (nonce-derived on anvil, not on the
 * TVM); TRX transfers (anvil's native value transfers stand in for them). TRC-10 transfers:
 * `weir_transferAsset` mines one, shown by the eth_ methods as java-tron shows it (a value transfer
 * of the token amount) and named TransferAssetContract by `wallet/gettransactionbyid`, which names
 * every other transaction too (chain-transactions.ts).
 * Sending goes to anvil directly (java-tron's JSON-RPC does not take eth_sendRawTransaction), or,
 * as on a real node, through the `/wallet/…` transaction calls below.
 *
 * Energy and bandwidth: beside its JSON-RPC, a full node serves the HTTP API (`/wallet/…`). The
 * proxy answers the two calls Weir's sweeper reads, shaped as java-tron answers them (zero fields
 * left out): `POST /wallet/getaccountresource` `{address, visible}` with an account's limits and
 * use (every account has the free 600 bandwidth; energy and staked bandwidth are what
 * `weir_setAccountResource` set), and `POST /wallet/getchainparameters` with `getEnergyFee` (210
 * sun per unit) and `getTransactionFee` (1000 sun per byte): stand-ins, a real node answers the
 * chain's current values, which Weir reads rather than assumes. Anvil's
 * gas stands in for energy (eth_estimateGas answers it, as java-tron's answers energy). Sends:
 * `/wallet/triggersmartcontract`, `broadcasttransaction`, `gettransactionbyid` and
 * `gettransactioninfobyid` build, check and run a Tron transaction on anvil (wallet-transactions.ts);
 * those consume the account's resources. Sends straight to anvil are not seen, and nothing regenerates.
 */

export type TronJsonRpcProxyOptions = {
  /** The EVM node's HTTP JSON-RPC, e.g. anvil's `http://127.0.0.1:<port>`. */
  upstreamUrl: string;
  /** What eth_chainId answers; TRON_LOCAL_CHAIN_ID unless given. The upstream must sign with the same. */
  chainId?: number;
  /** How far `finalized` trails the head; 19 (Tron's solidification) unless given. */
  finalizedDepth?: number;
  /** TCP port on 127.0.0.1; 0 (a free one) unless given. */
  port?: number;
  /** eth_getLogs refuses a wider range (toBlock - fromBlock); java-tron's default `maxBlockRange`, 5000, unless given. */
  maxBlockRange?: number;
  /** The time transactions are built and expire by (ms since epoch); Date.now unless given. */
  now?: () => number;
};

/** One block range whose eth_getLogs answers are forced empty, `remaining` more times. */
export type EmptyLogsRule = { fromBlock: bigint; toBlock: bigint; remaining: number };

/** An eth_getLogs answer the proxy forced empty: the range asked for and the rule's range. */
export type EmptiedLogsAnswer = {
  requested: { fromBlock: bigint; toBlock: bigint };
  rule: { fromBlock: bigint; toBlock: bigint };
};

export type TronJsonRpcProxy = {
  /** `http://127.0.0.1:<port>`: give this to viem and to Weir as the Tron node. */
  readonly url: string;
  /** `<url>/solidity`: the Solidity node's JSON-RPC, whose `latest` is the latest solidified block. */
  readonly solidityUrl: string;
  readonly port: number;
  readonly chainId: number;
  finalizedDepth(): number;
  setFinalizedDepth(depth: number): void;
  /** Same as the JSON-RPC `weir_emptyLogs`: the next `times` (1) answers overlapping the range are []. */
  emptyLogs(fromBlock: bigint, toBlock: bigint, times?: number): void;
  /**
   * Same as the JSON-RPC `weir_transferAsset`: mines a TRC-10 transfer of `amount` units of token
   * `assetName` (its id) from `from` to `to` (0x… or T…); its transaction hash.
   */
  transferAsset(transfer: { from: string; to: string; assetName: string; amount: bigint }): Promise<string>;
  /** Same as the JSON-RPC `weir_setAccountResource`: what `wallet/getaccountresource` answers for `address`. */
  setAccountResource(address: string, resource: AccountResource): void;
  /** Every eth_getLogs answer forced empty so far, oldest first. */
  emptiedAnswers(): readonly EmptiedLogsAnswer[];
  stop(): Promise<void>;
};

/** An account's resources as java-tron names them (`wallet/getaccountresource`); absent means 0. */
export type AccountResource = {
  EnergyLimit?: number;
  EnergyUsed?: number;
  NetLimit?: number;
  NetUsed?: number;
  freeNetUsed?: number;
};

const RESOURCE_FIELDS = ['EnergyLimit', 'EnergyUsed', 'NetLimit', 'NetUsed', 'freeNetUsed'] as const;
const FREE_NET_LIMIT = 600;
/** java-tron's chain parameters the sweeper reads (sun): energy price, and bandwidth price per byte. */
const TRANSACTION_FEE = 1000;
const ENERGY_FEE = 210;
const CHAIN_PARAMETERS = [
  { key: 'getTransactionFee', value: TRANSACTION_FEE },
  { key: 'getEnergyFee', value: ENERGY_FEE },
];

type JsonRpcRequest = { jsonrpc?: string; id?: unknown; method?: unknown; params?: unknown };
type JsonRpcResponse = { jsonrpc: '2.0'; id: unknown; result?: unknown; error?: { code: number; message: string } };

/** A JSON-RPC error the proxy answers itself. */
class ProxyRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const TRON_SOLIDIFIED_DEPTH = 19;
const JAVA_TRON_MAX_BLOCK_RANGE = 5000;
const MAX_BODY_BYTES = 1_000_000;
/** Methods whose block parameter sits at this position. */
const BLOCK_PARAM_POSITION: Record<string, number> = {
  eth_getBlockByNumber: 0,
  eth_getBalance: 1,
  eth_getCode: 1,
  eth_call: 1,
  eth_getTransactionCount: 1,
  eth_getStorageAt: 2,
};
/** Methods that read state: java-tron answers them at `latest` only (it keeps no historical state). */
const LATEST_ONLY = new Set(['eth_getBalance', 'eth_getCode', 'eth_call', 'eth_getStorageAt']);
const hexQuantity = /^0x[0-9a-fA-F]+$/;

/** java-tron's refusal of a state read at anything but `latest` (TronJsonRpcImpl, documentation-en eth_getBalance). */
function latestOnly(tag: unknown): void {
  if (tag === undefined || tag === 'latest') return;
  if (tag === 'earliest' || tag === 'pending' || tag === 'finalized')
    throw new ProxyRpcError(-32602, 'TAG [earliest | pending | finalized] not supported');
  if (typeof tag === 'string' && hexQuantity.test(tag))
    throw new ProxyRpcError(-32602, 'QUANTITY not supported, just support TAG as latest');
  throw new ProxyRpcError(-32602, 'invalid block number');
}

/** Starts the proxy on 127.0.0.1. Stop it with `stop()`; it does not stop the upstream. */
export async function startTronJsonRpcProxy(options: TronJsonRpcProxyOptions): Promise<TronJsonRpcProxy> {
  const chainId = options.chainId ?? TRON_LOCAL_CHAIN_ID;
  let depth = checkedDepth(options.finalizedDepth ?? TRON_SOLIDIFIED_DEPTH);
  const maxBlockRange = options.maxBlockRange ?? JAVA_TRON_MAX_BLOCK_RANGE;
  const rules: EmptyLogsRule[] = [];
  const emptied: EmptiedLogsAnswer[] = [];
  /** By the account's 20 bytes, lowercase hex. */
  const resources = new Map<string, AccountResource>();
  let upstreamId = 0;

  const setResource = (address: unknown, resource: unknown): void => {
    if (typeof address !== 'string') throw new ProxyRpcError(-32602, 'weir_setAccountResource takes an address');
    let key: string;
    try {
      key = tronAddressBytes(address);
    } catch {
      throw new ProxyRpcError(-32602, `weir_setAccountResource: ${JSON.stringify(address)} is not an address`);
    }
    const given = (typeof resource === 'object' && resource !== null ? resource : {}) as Record<string, unknown>;
    const clean: AccountResource = {};
    for (const field of RESOURCE_FIELDS) {
      const value = given[field];
      if (value === undefined) continue;
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
        throw new ProxyRpcError(-32602, `weir_setAccountResource: ${field} must be a non-negative integer`);
      if (value > 0) clean[field] = value;
    }
    resources.set(key, clean);
  };

  /** java-tron's HTTP API, the calls Weir reads and its sweeps send; `null` for a path it does not serve. */
  const wallet = async (
    path: string,
    body: Record<string, unknown>,
  ): Promise<{ status: number; body: unknown } | null> => {
    if (path === '/wallet/getchainparameters') return { status: 200, body: { chainParameter: CHAIN_PARAMETERS } };
    if (path !== '/wallet/getaccountresource') {
      let answer = await transactions(path, body);
      // Not one the calls below built: a transaction sent on anvil, named as java-tron would.
      if (path === '/wallet/gettransactionbyid' && isEmpty(answer))
        answer = (await chain.byId(String(body['value'] ?? '').toLowerCase())) ?? {};
      return answer === null ? null : { status: 200, body: answer };
    }
    let key: string;
    try {
      key = tronAddressBytes(String(body['address']));
    } catch {
      return { status: 200, body: { Error: 'class java.lang.IllegalArgumentException : Invalid address' } };
    }
    return { status: 200, body: { freeNetLimit: FREE_NET_LIMIT, ...resources.get(key) } };
  };

  const upstream = async (method: string, params: unknown[]): Promise<JsonRpcResponse> => {
    const response = await fetch(options.upstreamUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++upstreamId, method, params }),
    });
    return (await response.json()) as JsonRpcResponse;
  };
  const upstreamResult = async (method: string, params: unknown[]): Promise<unknown> => {
    const answer = await upstream(method, params);
    if (answer.error !== undefined) throw new ProxyRpcError(answer.error.code, answer.error.message);
    return answer.result;
  };
  const transactions = createWalletTransactions({
    upstreamResult,
    resources: { get: (key) => resources.get(key) ?? {}, set: (key, value) => resources.set(key, value) },
    prices: { energySun: ENERGY_FEE, bandwidthSun: TRANSACTION_FEE },
    now: options.now ?? (() => Date.now()),
  });
  const chain = createChainTransactions(upstreamResult);
  /** A TRC-10 transfer asked for by `weir_transferAsset` (hex amount) or `transferAsset` (bigint). */
  const transferAsset = async (transfer: unknown): Promise<string> => {
    const given = isRecord(transfer) ? transfer : {};
    const { assetName, amount } = given;
    let from: Hex;
    let to: Hex;
    try {
      from = tronAddressBytes(String(given['from']));
      to = tronAddressBytes(String(given['to']));
    } catch {
      throw new ProxyRpcError(-32602, 'weir_transferAsset: from and to must be addresses');
    }
    if (typeof assetName !== 'string' || !/^[0-9]+$/.test(assetName))
      throw new ProxyRpcError(-32602, 'weir_transferAsset: assetName must be a TRC-10 token id');
    if (typeof amount !== 'bigint' && (typeof amount !== 'string' || !hexQuantity.test(amount)))
      throw new ProxyRpcError(-32602, 'weir_transferAsset: amount must be a hex quantity');
    return chain.transferAsset({ from, to, assetName, amount: BigInt(amount) });
  };
  const head = async (): Promise<bigint> => BigInt(String(await upstreamResult('eth_blockNumber', [])));

  const solidified = async (): Promise<bigint> => {
    const latest = await head();
    return latest > BigInt(depth) ? latest - BigInt(depth) : 0n;
  };
  /** A block tag or number as the upstream should see it: `finalized` (and `latest` on the Solidity view) becomes a number. */
  const resolveTag = async (tag: unknown, solidity = false): Promise<unknown> => {
    if (tag === 'pending') throw new ProxyRpcError(-32602, 'TAG pending not supported');
    if (tag === 'safe') throw new ProxyRpcError(-32602, 'TAG safe not supported');
    if (tag === 'finalized' || (solidity && (tag === 'latest' || tag === undefined))) return hex(await solidified());
    return tag;
  };
  /** The block number a resolved tag stands for. */
  const numberOf = async (tag: unknown): Promise<bigint> => {
    if (tag === undefined || tag === 'latest') return head();
    if (tag === 'earliest') return 0n;
    if (typeof tag === 'string' && hexQuantity.test(tag)) return BigInt(tag);
    throw new ProxyRpcError(-32602, `invalid block number or tag ${JSON.stringify(tag)}`);
  };

  const getLogs = async (params: unknown[]): Promise<unknown> => {
    const filter = params[0];
    if (typeof filter !== 'object' || filter === null || Array.isArray(filter))
      throw new ProxyRpcError(-32602, 'eth_getLogs takes a filter object');
    const request: Record<string, unknown> = { ...filter };
    let range: { fromBlock: bigint; toBlock: bigint };
    if (typeof request['blockHash'] === 'string') {
      if (request['fromBlock'] !== undefined || request['toBlock'] !== undefined)
        throw new ProxyRpcError(-32602, 'cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other');
      const block = (await upstreamResult('eth_getBlockByHash', [request['blockHash'], false])) as {
        number?: string;
      } | null;
      const number = block?.number === undefined ? -1n : BigInt(block.number);
      range = { fromBlock: number, toBlock: number };
    } else {
      request['fromBlock'] = await resolveTag(request['fromBlock'] ?? 'latest');
      request['toBlock'] = await resolveTag(request['toBlock'] ?? 'latest');
      range = { fromBlock: await numberOf(request['fromBlock']), toBlock: await numberOf(request['toBlock']) };
      if (range.fromBlock > range.toBlock) throw new ProxyRpcError(-32602, 'please verify: fromBlock <= toBlock');
      if (range.toBlock - range.fromBlock > BigInt(maxBlockRange))
        throw new ProxyRpcError(-32602, `exceed max block range: ${maxBlockRange}`);
    }
    const rule = rules.find((r) => r.remaining > 0 && r.fromBlock <= range.toBlock && range.fromBlock <= r.toBlock);
    if (rule !== undefined) {
      rule.remaining--;
      emptied.push({ requested: range, rule: { fromBlock: rule.fromBlock, toBlock: rule.toBlock } });
      return [];
    }
    const logs = await upstreamResult('eth_getLogs', [request]);
    if (!Array.isArray(logs)) return logs;
    return logs.map((log: unknown) =>
      typeof log === 'object' && log !== null && 'address' in log && typeof log.address === 'string'
        ? { ...log, address: log.address.toLowerCase() }
        : log,
    );
  };

  const addRule = (fromBlock: bigint, toBlock: bigint, times = 1): void => {
    if (fromBlock < 0n || toBlock < fromBlock)
      throw new ProxyRpcError(-32602, `weir_emptyLogs: need 0 <= fromBlock <= toBlock, got ${fromBlock}..${toBlock}`);
    if (!Number.isSafeInteger(times) || times < 1)
      throw new ProxyRpcError(-32602, `weir_emptyLogs: times must be a positive integer, got ${times}`);
    rules.push({ fromBlock, toBlock, remaining: times });
  };

  const handle = async (request: JsonRpcRequest, solidity: boolean): Promise<JsonRpcResponse> => {
    const id = request.id ?? null;
    const method = request.method;
    const params = Array.isArray(request.params) ? request.params : [];
    try {
      if (typeof method !== 'string') throw new ProxyRpcError(-32600, 'the request has no method');
      switch (method) {
        case 'eth_chainId':
          return { jsonrpc: '2.0', id, result: `0x${chainId.toString(16)}` };
        case 'eth_blockNumber':
          if (solidity) return { jsonrpc: '2.0', id, result: hex(await solidified()) };
          break;
        case 'net_version':
          return { jsonrpc: '2.0', id, result: String(chainId) };
        case 'eth_getLogs':
          return { jsonrpc: '2.0', id, result: await getLogs(params) };
        case 'weir_emptyLogs': {
          const [rule] = params as [{ fromBlock?: unknown; toBlock?: unknown; times?: unknown } | undefined];
          const from = rule?.fromBlock;
          const to = rule?.toBlock;
          if (typeof from !== 'string' || typeof to !== 'string' || !hexQuantity.test(from) || !hexQuantity.test(to))
            throw new ProxyRpcError(-32602, 'weir_emptyLogs takes {fromBlock, toBlock, times?} with hex block numbers');
          addRule(BigInt(from), BigInt(to), typeof rule?.times === 'number' ? rule.times : 1);
          return { jsonrpc: '2.0', id, result: true };
        }
        case 'weir_emptiedLogs':
          return {
            jsonrpc: '2.0',
            id,
            result: emptied.map((e) => ({
              requested: { fromBlock: hex(e.requested.fromBlock), toBlock: hex(e.requested.toBlock) },
              rule: { fromBlock: hex(e.rule.fromBlock), toBlock: hex(e.rule.toBlock) },
            })),
          };
        case 'weir_transferAsset':
          return { jsonrpc: '2.0', id, result: await transferAsset(params[0]) };
        case 'weir_setAccountResource': {
          const [address, resource] = params;
          setResource(address, resource);
          return { jsonrpc: '2.0', id, result: true };
        }
        case 'weir_setFinalizedDepth': {
          depth = checkedDepth(params[0]);
          return { jsonrpc: '2.0', id, result: depth };
        }
      }
      const position = BLOCK_PARAM_POSITION[method];
      const forwarded = [...params];
      if (position !== undefined && LATEST_ONLY.has(method)) latestOnly(forwarded[position]);
      if (position !== undefined && (position < forwarded.length || solidity))
        forwarded[position] = await resolveTag(forwarded[position], solidity);
      const answer = await upstream(method, forwarded);
      if (answer.error !== undefined) return { ...answer, id };
      const result = chain.rewrite(method, answer.result);
      if ((method === 'eth_getBlockByNumber' || method === 'eth_getBlockByHash') && isBlock(result))
        return { ...answer, id, result: { ...result, logsBloom: ZERO_BLOOM } };
      return { ...answer, id, result };
    } catch (error) {
      if (error instanceof ProxyRpcError)
        return { jsonrpc: '2.0', id, error: { code: error.code, message: error.message } };
      return {
        jsonrpc: '2.0',
        id,
        error: { code: -32603, message: error instanceof Error ? error.message : String(error) },
      };
    }
  };

  const server = createServer((req, res) => {
    const solidity = req.url === '/solidity' || req.url?.startsWith('/solidity/') === true;
    void serve(req, res, (request) => handle(request, solidity), wallet);
  });
  // Idle connections stay open long past a client's own keep-alive (fetch drops them 2 s before the
  // server's announced timeout): with Node's 5 s, a client whose loop stalls 3 s sends on a closed socket.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    solidityUrl: `http://127.0.0.1:${port}/solidity`,
    port,
    chainId,
    finalizedDepth: () => depth,
    setFinalizedDepth(value) {
      depth = checkedDepth(value);
    },
    emptyLogs: (fromBlock, toBlock, times) => addRule(fromBlock, toBlock, times),
    setAccountResource: (address, resource) => setResource(address, resource),
    transferAsset: (transfer) => transferAsset(transfer),
    emptiedAnswers: () => emptied.map((e) => ({ requested: { ...e.requested }, rule: { ...e.rule } })),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const ZERO_BLOOM = `0x${'00'.repeat(256)}`;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isEmpty = (value: unknown): boolean => isRecord(value) && Object.keys(value).length === 0;

function isBlock(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'logsBloom' in value;
}

function checkedDepth(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new ProxyRpcError(-32602, `finalizedDepth must be a non-negative integer, got ${JSON.stringify(value)}`);
  return value;
}

function hex(value: bigint): string {
  return `0x${value.toString(16)}`;
}

/** Reads one HTTP request (a JSON-RPC call or a batch, or a `/wallet/…` call) and writes the answer. */
async function serve(
  req: IncomingMessage,
  res: ServerResponse,
  handle: (request: JsonRpcRequest) => Promise<JsonRpcResponse>,
  wallet: (path: string, body: Record<string, unknown>) => Promise<{ status: number; body: unknown } | null>,
): Promise<void> {
  const reply = (status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.method !== 'POST')
    return reply(405, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'POST only' } });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES)
      return reply(413, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'request too large' } });
    chunks.push(buffer);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return reply(200, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } });
  }
  const path = new URL(req.url ?? '/', 'http://proxy').pathname;
  if (path.startsWith('/wallet/')) {
    let answer: { status: number; body: unknown } | null;
    try {
      answer = await wallet(path, typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {});
    } catch (error) {
      // java-tron answers a failure inside a call as 200 with an Error field.
      return reply(200, { Error: error instanceof Error ? error.message : String(error) });
    }
    return answer === null ? reply(404, { Error: `${path} is not served here` }) : reply(answer.status, answer.body);
  }
  const one = (request: unknown) =>
    typeof request === 'object' && request !== null
      ? handle(request as JsonRpcRequest)
      : Promise.resolve<JsonRpcResponse>({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32600, message: 'invalid request' },
        });
  reply(200, Array.isArray(body) ? await Promise.all(body.map(one)) : await one(body));
}
