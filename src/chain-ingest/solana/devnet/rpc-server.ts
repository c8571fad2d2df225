import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getBase58Decoder, getBase58Encoder, getBase64Encoder, isAddress, type Address } from '@solana/kit';
import type { Commitment } from '../define-network.ts';
import {
  base64,
  createLocalSolana,
  LocalSolanaRpcError,
  uiAmount,
  type LocalAsset,
  type LocalSolana,
  type LocalSolanaOptions,
} from './local-ledger.ts';
import { attachLocalSolanaPubSub, type LocalSolanaPubSub } from './pubsub-server.ts';

/** The port `solana-test-validator` answers on; `weir devnet` uses it unless told otherwise. */
export const defaultSolanaRpcPort = 8899;

export type LocalSolanaServer = {
  ledger: LocalSolana;
  /** `http://127.0.0.1:<port>`. */
  rpcUrl: string;
  /** `ws://127.0.0.1:<port>`: Solana's PubSub (`logsSubscribe`) on the same port. */
  wsUrl: string;
  pubsub: LocalSolanaPubSub;
  port: number;
  stop(): Promise<void>;
};

/**
 * Starts a local Solana cluster (`createLocalSolana`) behind an HTTP JSON-RPC server on
 * 127.0.0.1 (`port` 0 picks a free one). It answers as a node does for `sendTransaction`
 * (base64 wire transactions, with preflight unless `skipPreflight`), `getTransaction`
 * (`json` or `base64`), `getSignaturesForAddress`, `getSignatureStatuses`,
 * `getLatestBlockhash`, `getSlot`, `getBlockHeight`, `getAccountInfo` (`base64`/`base58`),
 * `getBalance`, `getTokenAccountBalance`, `getMinimumBalanceForRentExemption`,
 * `requestAirdrop`, `getHealth`, `getVersion` and `getGenesisHash`. Control methods for tests
 * and `weir devnet`: `weir_confirm([slot])`, `weir_finalize([slot])`, `weir_drop(signature)`,
 * `weir_mintTo(owner, "usdc"|"usdt", amount)` and `weir_info()`. The same port takes WebSocket
 * connections for `logsSubscribe` (pubsub-server.ts).
 */
export async function startLocalSolana(
  options: LocalSolanaOptions & { port?: number; host?: '127.0.0.1' } = {},
): Promise<LocalSolanaServer> {
  const ledger = await createLocalSolana(options);
  const server = createServer((request, response) => {
    void answer(ledger, request, response);
  });
  // Idle connections stay open long past a client's own keep-alive (fetch drops them 2 s before the
  // server's announced timeout): with Node's 5 s, a client whose loop stalls 3 s sends on a closed socket.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port ?? defaultSolanaRpcPort, host: options.host ?? '127.0.0.1' }, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const pubsub = attachLocalSolanaPubSub(server, ledger);
  return {
    ledger,
    rpcUrl: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    pubsub,
    port,
    async stop() {
      await Promise.all([pubsub.stop(), close(server)]);
    },
  };
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

type JsonRpcRequest = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown };

async function answer(ledger: LocalSolana, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return send(response, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
  }
  const one = (call: unknown) => handle(ledger, call as JsonRpcRequest);
  send(response, Array.isArray(body) ? await Promise.all(body.map(one)) : await one(body));
}

async function handle(ledger: LocalSolana, call: JsonRpcRequest): Promise<Record<string, unknown>> {
  const id = call.id ?? null;
  if (typeof call !== 'object' || call === null || typeof call.method !== 'string')
    return { jsonrpc: '2.0', id, error: { code: -32600, message: 'Invalid request' } };
  const method = METHODS[call.method];
  if (method === undefined) return { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } };
  try {
    const params = Array.isArray(call.params) ? call.params : [];
    return { jsonrpc: '2.0', id, result: await method(ledger, params) };
  } catch (error) {
    if (error instanceof LocalSolanaRpcError)
      return {
        jsonrpc: '2.0',
        id,
        error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) },
      };
    return {
      jsonrpc: '2.0',
      id,
      error: { code: -32603, message: error instanceof Error ? error.message : 'Internal error' },
    };
  }
}

/** Writes JSON with bigints as plain numbers, as a node writes u64 fields (kit reads them back as bigints). */
function send(response: ServerResponse, value: unknown): void {
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `\u0000u64:${v}` : v)).replace(
    /"\\u0000u64:(\d+)"/g,
    '$1',
  );
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(text);
}

type Method = (ledger: LocalSolana, params: unknown[]) => unknown;

const invalid = (message: string) => new LocalSolanaRpcError(-32602, `Invalid params: ${message}`);

function config(params: unknown[], index: number): Record<string, unknown> {
  const value = params[index];
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function addressParam(params: unknown[], index: number): Address {
  const value = params[index];
  if (typeof value !== 'string' || !isAddress(value)) throw invalid(`param ${index} is not a base58 address`);
  return value;
}

/** The commitment asked for; `processed` only where `allowProcessed`, as on a node. Default `finalized`. */
function commitment(options: Record<string, unknown>, allowProcessed = true): Commitment {
  const value = options['commitment'] ?? 'finalized';
  if (value === 'processed' && !allowProcessed) throw invalid('processed commitment is not supported for this method');
  if (value !== 'processed' && value !== 'confirmed' && value !== 'finalized')
    throw invalid(`unknown commitment ${JSON.stringify(value)}`);
  return value;
}

const context = (ledger: LocalSolana, value: unknown) => ({
  context: { apiVersion: '2.2.0', slot: ledger.slot('processed') },
  value,
});

const METHODS: Record<string, Method> = {
  getHealth: () => 'ok',
  getVersion: () => ({ 'solana-core': '2.2.0', 'feature-set': 0 }),
  getGenesisHash: () => 'WeirLocaL1111111111111111111111111111111111',
  getSlot: (ledger, params) => ledger.slot(commitment(config(params, 0))),
  getBlockHeight: (ledger, params) => ledger.slot(commitment(config(params, 0))),
  getLatestBlockhash: (ledger, params) => {
    commitment(config(params, 0));
    return context(ledger, ledger.latestBlockhash());
  },
  getMinimumBalanceForRentExemption: (ledger, params) => {
    const size = params[0];
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 0) throw invalid('param 0 is not a size');
    return ledger.svm.minimumBalanceForRentExemption(BigInt(size));
  },
  getBalance: (ledger, params) => {
    const account = ledger.svm.getAccount(addressParam(params, 0));
    return context(ledger, account.exists ? account.lamports : 0n);
  },
  getAccountInfo: (ledger, params) => {
    const address = addressParam(params, 0);
    const encoding = config(params, 1)['encoding'] ?? 'base58';
    if (encoding !== 'base64' && encoding !== 'base58')
      throw invalid(`encoding ${JSON.stringify(encoding)} is not supported by the local node (use base64)`);
    const account = ledger.svm.getAccount(address);
    if (!account.exists) return context(ledger, null);
    const data = encoding === 'base64' ? base64(account.data) : base58Of(account.data);
    return context(ledger, {
      data: [data, encoding],
      executable: account.executable,
      lamports: account.lamports,
      owner: account.programAddress,
      rentEpoch: 18_446_744_073_709_551_615n,
      space: BigInt(account.data.length),
    });
  },
  getTokenAccountBalance: (ledger, params) => {
    const address = addressParam(params, 0);
    const account = ledger.svm.getAccount(address);
    const data = account.exists ? account.data : new Uint8Array();
    if (!account.exists || data.length < 165)
      throw new LocalSolanaRpcError(-32602, 'Invalid param: could not find account');
    const mint = ledger.svm.getAccount(addressFrom(data, 0));
    const decimals = mint.exists ? (mint.data[44] ?? 0) : 0;
    const amount = new DataView(data.buffer, data.byteOffset).getBigUint64(64, true);
    const ui = uiAmount(amount, decimals);
    return context(ledger, { amount: amount.toString(), decimals, uiAmount: Number(ui), uiAmountString: ui });
  },
  sendTransaction: (ledger, params) => {
    const wire = params[0];
    const options = config(params, 1);
    if (typeof wire !== 'string') throw invalid('param 0 is not an encoded transaction');
    const bytes =
      options['encoding'] === 'base64'
        ? new Uint8Array(getBase64Encoder().encode(wire))
        : new Uint8Array(getBase58Encoder().encode(wire));
    return ledger.sendWireTransaction(bytes, { skipPreflight: options['skipPreflight'] === true });
  },
  requestAirdrop: (ledger, params) => {
    const amount = params[1];
    if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0)
      throw invalid('param 1 is not a positive lamport amount');
    return ledger.airdrop(addressParam(params, 0), BigInt(amount));
  },
  getTransaction: (ledger, params) => {
    const signature = params[0];
    if (typeof signature !== 'string') throw invalid('param 0 is not a signature');
    const options = config(params, 1);
    const tx = ledger.transaction(signature, commitment(options, false));
    if (tx === undefined) return null;
    const max = options['maxSupportedTransactionVersion'];
    if (tx.version === 0 && max === undefined)
      throw new LocalSolanaRpcError(
        -32015,
        'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
      );
    const encoding = options['encoding'] ?? 'json';
    if (encoding !== 'json' && encoding !== 'base64')
      throw invalid(`encoding ${JSON.stringify(encoding)} is not supported by the local node (use json or base64)`);
    return {
      blockTime: tx.blockTime,
      meta: max === undefined ? tx.metaJson : { ...tx.metaJson, loadedAddresses: tx.loadedAddresses },
      slot: tx.slot,
      transaction: encoding === 'json' ? tx.transactionJson : [base64(tx.wire), 'base64'],
      ...(max === undefined ? {} : { version: tx.version }),
    };
  },
  getSignaturesForAddress: (ledger, params) => {
    const address = addressParam(params, 0);
    const options = config(params, 1);
    const limit = options['limit'] ?? 1000;
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw invalid('Invalid limit; max 1000');
    const before = options['before'];
    const until = options['until'];
    return ledger
      .signaturesForAddress(address, {
        commitment: commitment(options, false),
        limit,
        ...(typeof before === 'string' ? { before } : {}),
        ...(typeof until === 'string' ? { until } : {}),
      })
      .map(({ tx, confirmationStatus }) => ({
        blockTime: tx.blockTime,
        confirmationStatus,
        err: tx.err,
        memo: null,
        signature: tx.signature,
        slot: tx.slot,
      }));
  },
  getSignatureStatuses: (ledger, params) => {
    const signatures = params[0];
    if (!Array.isArray(signatures) || signatures.length > 256)
      throw invalid('param 0 must be a list of at most 256 signatures');
    return context(
      ledger,
      signatures.map((signature) => {
        const status = typeof signature === 'string' ? ledger.status(signature) : undefined;
        if (status === undefined) return null;
        const { tx } = status;
        return {
          confirmationStatus: status.confirmationStatus,
          confirmations: status.confirmations,
          err: tx.err,
          slot: tx.slot,
          status: tx.err === null ? { Ok: null } : { Err: tx.err },
        };
      }),
    );
  },
  weir_confirm: (ledger, params) => ledger.confirm(slotParam(params)),
  weir_finalize: (ledger, params) => ledger.finalize(slotParam(params)),
  weir_drop: (ledger, params) => {
    const signature = params[0];
    if (typeof signature !== 'string') throw invalid('param 0 is not a signature');
    ledger.drop(signature);
    return null;
  },
  weir_mintTo: (ledger, params) => {
    const asset = params[1];
    const amount = params[2];
    if (asset !== 'usdc' && asset !== 'usdt') throw invalid('param 1 must be "usdc" or "usdt"');
    if (typeof amount !== 'string' || !/^[1-9][0-9]*$/.test(amount))
      throw invalid('param 2 must be a positive integer string of base units');
    return ledger.mintTo(addressParam(params, 0), asset satisfies LocalAsset, BigInt(amount));
  },
  weir_info: (ledger) => ({ faucet: ledger.faucet, mints: ledger.mints }),
};

function slotParam(params: unknown[]): bigint | undefined {
  const value = params[0];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw invalid('param 0 is not a slot');
  return BigInt(value);
}

function addressFrom(data: Uint8Array, offset: number): Address {
  return base58Of(data.subarray(offset, offset + 32)) as Address;
}

function base58Of(bytes: Uint8Array): string {
  return getBase58Decoder().decode(bytes);
}
