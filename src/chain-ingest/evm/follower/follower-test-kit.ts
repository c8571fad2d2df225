/**
 * Helpers for the follower's tests (a hardhat chain, a spying bus, waiting). Not a test file
 * itself: AVA only runs `*.test.ts`.
 */
import { createServer } from 'node:http';
import { connect, createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  keccak256,
  type Address,
  type Hash,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startHardhatNode, hardhatAccounts, type HardhatNode } from '../../../../test/support/hardhat-node.ts';
import { testTokenAbi } from '../contracts/abis.ts';
import { createEvmWriteClients } from '../contracts/clients.ts';
import { deployTestToken } from '../contracts/deploy-contracts.ts';
import type { Bus, Consumer } from '../../../bus/bus.ts';
import { createJsonRpc } from '../devnet/json-rpc.ts';
import { localNodeTransport } from '../devnet/local-node-transport.ts';
import {
  CHAIN_SUBJECTS,
  parseChainMessage,
  type ChainFinalMessage,
  type ChainMessage,
  type ChainReorgMessage,
  type ChainTransferMessage,
} from '../../chain-messages.ts';

export type TestChain = {
  node: HardhatNode;
  /** Raw JSON-RPC call to the node. */
  call(method: string, params?: unknown[]): Promise<unknown>;
  blockNumber(): Promise<number>;
  block(number: number): Promise<{ number: number; hash: string; parentHash: string }>;
  /** Mines empty blocks. */
  mine(blocks: number): Promise<void>;
  snapshot(): Promise<string>;
  revert(snapshotId: string): Promise<void>;
  /** Sends native coin from hardhat account `fromAccount` and waits for it to be mined (automine). */
  sendNative(parameters: {
    fromAccount: number;
    to: Address;
    value: bigint;
    gas?: bigint;
  }): Promise<Mined & { succeeded: boolean }>;
  /** Deploys a TestToken owned by hardhat account 0 (the only one that may mint). */
  deployToken(symbol: string, decimals: number): Promise<Address>;
  /** Mints from the owner (a Transfer from the zero address). */
  mintToken(parameters: { token: Address; to: Address; amount: bigint }): Promise<Mined>;
  sendToken(parameters: { fromAccount: number; token: Address; to: Address; amount: bigint }): Promise<Mined>;
  stop(): Promise<void>;
};

export type Mined = { hash: Hash; blockNumber: number; blockHash: string };

export async function startTestChain(): Promise<TestChain> {
  const node = await startHardhatNode();
  const chain = defineChain({
    id: node.chainId,
    name: 'hardhat',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [node.rpcUrl] } },
  });
  const transport = localNodeTransport(node.rpcUrl);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 50 });
  const call = createJsonRpc(node.rpcUrl);
  return {
    node,
    call,
    blockNumber: async () => Number(BigInt((await call('eth_blockNumber')) as string)),
    async block(number) {
      const block = (await call('eth_getBlockByNumber', [`0x${number.toString(16)}`, false])) as {
        number: string;
        hash: string;
        parentHash: string;
      };
      return { number: Number(BigInt(block.number)), hash: block.hash, parentHash: block.parentHash };
    },
    // evm_mine one block at a time, not hardhat_mine: the blocks hardhat_mine reserves can come
    // back with a zero parentHash when read out of order (e.g. in one JSON-RPC batch), which any
    // follower that checks parent hashes must take for a broken chain.
    mine: async (blocks) => {
      for (let mined = 0; mined < blocks; mined++) await call('evm_mine');
    },
    snapshot: async () => (await call('evm_snapshot')) as string,
    async revert(snapshotId) {
      const reverted = await call('evm_revert', [snapshotId]);
      if (reverted !== true) throw new Error(`evm_revert ${snapshotId} returned ${String(reverted)}`);
    },
    async sendNative({ fromAccount, to, value, gas }) {
      const account = privateKeyToAccount(hardhatAccounts[fromAccount]!.privateKey);
      const wallet = createWalletClient({ chain, transport, account });
      // Signed here and sent raw, so that a transaction that reverts (hardhat then answers with an
      // error, though it mines it) still gives its hash.
      const request = await wallet.prepareTransactionRequest({ to, value, ...(gas === undefined ? {} : { gas }) });
      const signed = await wallet.signTransaction(request);
      const hash = keccak256(signed);
      await call('eth_sendRawTransaction', [signed]).catch((error: unknown) => {
        if (gas === undefined) throw error;
      });
      const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
      return {
        hash,
        blockNumber: Number(receipt.blockNumber),
        blockHash: receipt.blockHash,
        succeeded: receipt.status === 'success',
      };
    },
    async deployToken(symbol, decimals) {
      const clients = createEvmWriteClients({
        rpcUrl: node.rpcUrl,
        chainId: node.chainId,
        privateKey: hardhatAccounts[0].privateKey,
      });
      const deployed = await deployTestToken(clients, { name: `Test ${symbol}`, symbol, decimals });
      return deployed.address;
    },
    async mintToken({ token, to, amount }) {
      const wallet = createWalletClient({
        chain,
        transport,
        account: privateKeyToAccount(hardhatAccounts[0].privateKey),
      });
      const hash = await wallet.writeContract({
        address: token,
        abi: testTokenAbi,
        functionName: 'mint',
        args: [to, amount],
      });
      return mined(hash);
    },
    async sendToken({ fromAccount, token, to, amount }) {
      const wallet = createWalletClient({
        chain,
        transport,
        account: privateKeyToAccount(hardhatAccounts[fromAccount]!.privateKey),
      });
      const hash = await wallet.writeContract({
        address: token,
        abi: testTokenAbi,
        functionName: 'transfer',
        args: [to, amount],
      });
      return mined(hash);
    },
    stop: () => node.stop(),
  };

  async function mined(hash: Hash): Promise<Mined> {
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
    if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
    return { hash, blockNumber: Number(receipt.blockNumber), blockHash: receipt.blockHash };
  }
}

/** A fresh random address (nobody holds its key in these tests). */
export function randomAddress(): Address {
  return privateKeyToAccount(generatePrivateKey()).address;
}

export type Publication = { subject: string; messageId: string | undefined; message: ChainMessage };

/**
 * Wraps a bus and records every publish call (before the bus drops duplicates), so tests can say
 * "published exactly once" and see the order.
 */
export function spyOnPublishes(inner: Bus): {
  bus: Bus;
  publications: Publication[];
  failNext(count: number, error?: Error): void;
} {
  const publications: Publication[] = [];
  let failures = 0;
  let failure = new Error('bus unavailable (test)');
  return {
    publications,
    failNext(count, error) {
      failures = count;
      if (error !== undefined) failure = error;
    },
    bus: {
      async publish(subject, data, options) {
        if (failures > 0) {
          failures -= 1;
          throw failure;
        }
        publications.push({ subject, messageId: options?.messageId, message: parseChainMessage(subject, data) });
        await inner.publish(subject, data, options);
      },
      consume: (options, handler) => inner.consume(options, handler),
      deleteDurable: (durableName) => inner.deleteDurable(durableName),
      close: () => inner.close(),
    },
  };
}

/** Consumes `chain.>` under a durable name and keeps what arrives, parsed. */
export async function consumeChainMessages(
  bus: Bus,
  durableName = 'follower-test',
): Promise<{ messages: ChainMessage[]; stop(): Promise<void> }> {
  const messages: ChainMessage[] = [];
  const consumer: Consumer = await bus.consume({ durableName, filterSubject: CHAIN_SUBJECTS }, async (message) => {
    messages.push(parseChainMessage(message.subject, message.data));
  });
  return { messages, stop: () => consumer.stop() };
}

export async function waitUntil<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export const transfersIn = (publications: readonly Publication[]): ChainTransferMessage[] =>
  publications.flatMap((publication) => (publication.message.type === 'transfer' ? [publication.message] : []));
export const finalsIn = (publications: readonly Publication[]): ChainFinalMessage[] =>
  publications.flatMap((publication) => (publication.message.type === 'final' ? [publication.message] : []));
export const reorgsIn = (publications: readonly Publication[]): ChainReorgMessage[] =>
  publications.flatMap((publication) => (publication.message.type === 'reorg' ? [publication.message] : []));

export const toHex = (value: bigint | number): Hex => `0x${value.toString(16)}`;

export type JsonRpcCall = { jsonrpc?: string; id?: unknown; method: string; params?: unknown[] };

export type RpcProxy = { url: string; calls: JsonRpcCall[]; refused: JsonRpcCall[]; close(): Promise<void> };

/**
 * An HTTP JSON-RPC endpoint in front of `target` that answers chosen calls with a JSON-RPC error
 * (as a node with limits does) and forwards the others one by one.
 */
export async function startRpcProxy(
  target: string,
  refuse: (call: JsonRpcCall) => { code: number; message: string } | undefined,
  /** Rewrites a forwarded call's answer (e.g. to corrupt a block). */
  rewrite: (call: JsonRpcCall, answer: { result?: unknown }) => unknown = (_, answer) => answer,
): Promise<RpcProxy> {
  const calls: JsonRpcCall[] = [];
  const refused: JsonRpcCall[] = [];
  const answer = async (call: JsonRpcCall): Promise<unknown> => {
    calls.push(call);
    const error = refuse(call);
    if (error !== undefined) {
      refused.push(call);
      return { jsonrpc: '2.0', id: call.id ?? null, error };
    }
    const response = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(call),
    });
    return rewrite(call, (await response.json()) as { result?: unknown });
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const result = Array.isArray(body)
          ? await Promise.all((body as JsonRpcCall[]).map(answer))
          : await answer(body as JsonRpcCall);
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(result));
      })().catch((error: unknown) => {
        response.writeHead(500);
        response.end(String(error));
      });
    });
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, calls, refused, close: () => closeServer(server) };
}

/** An endpoint that accepts connections and never answers (a stalled node). */
export async function startStalledEndpoint(): Promise<{ url: string; wsUrl: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.resume();
  });
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    async close() {
      for (const socket of sockets) socket.destroy();
      await closeServer(server);
    },
  };
}

/**
 * A TCP relay to `targetPort` whose connections can be cut (to break a WebSocket) or held: the
 * target's bytes stop reaching the clients while the connections stay open (a silently stalled
 * WebSocket).
 */
export async function startTcpRelay(
  targetPort: number,
): Promise<{ port: number; cutAll(): void; holdAll(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const upstreams = new Map<Socket, Socket>();
  const server = createNetServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    upstreams.set(upstream, client);
    upstream.on('close', () => upstreams.delete(upstream));
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const port = await listen(server);
  return {
    port,
    cutAll() {
      for (const socket of sockets) socket.destroy();
    },
    holdAll() {
      for (const [upstream, client] of upstreams) {
        upstream.unpipe(client);
        upstream.pause();
      }
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await closeServer(server);
    },
  };
}

function listen(server: NetServer): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') reject(new Error('no TCP address'));
      else resolve(address.port);
    });
  });
}

function closeServer(server: NetServer): Promise<void> {
  if ('closeAllConnections' in server && typeof server.closeAllConnections === 'function') server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
