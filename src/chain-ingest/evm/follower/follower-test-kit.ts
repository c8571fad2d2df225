/**
 * Helpers for the follower's tests (a hardhat chain, a spying bus, waiting). Not a test file
 * itself: AVA only runs `*.test.ts`.
 */
import { createPublicClient, createWalletClient, defineChain, http, type Address, type Hash, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startHardhatNode, hardhatAccounts, type HardhatNode } from '../../../../test/support/hardhat-node.ts';
import type { Bus, Consumer } from '../../../bus/bus.ts';
import { CHAIN_SUBJECTS, parseChainMessage, type ChainMessage, type ChainTransferMessage } from '../../chain-messages.ts';

export type TestChain = {
  node: HardhatNode;
  /** Raw JSON-RPC call to the node. */
  call(method: string, params?: unknown[]): Promise<unknown>;
  blockNumber(): Promise<number>;
  block(number: number): Promise<{ number: number; hash: string; parentHash: string }>;
  mine(blocks: number): Promise<void>;
  snapshot(): Promise<string>;
  revert(snapshotId: string): Promise<void>;
  /** Sends native coin from hardhat account `fromAccount` and waits for it to be mined (automine). */
  sendNative(parameters: { fromAccount: number; to: Address; value: bigint }): Promise<{ hash: Hash; blockNumber: number; blockHash: string }>;
  stop(): Promise<void>;
};

export async function startTestChain(): Promise<TestChain> {
  const node = await startHardhatNode();
  const chain = defineChain({ id: node.chainId, name: 'hardhat', nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 }, rpcUrls: { default: { http: [node.rpcUrl] } } });
  const transport = http(node.rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 50 });
  let id = 0;
  const call = async (method: string, params: unknown[] = []): Promise<unknown> => {
    const response = await fetch(node.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }) });
    const body = (await response.json()) as { result?: unknown; error?: { message: string } };
    if (body.error !== undefined) throw new Error(`${method}: ${body.error.message}`);
    return body.result;
  };
  return {
    node,
    call,
    blockNumber: async () => Number(BigInt((await call('eth_blockNumber')) as string)),
    async block(number) {
      const block = (await call('eth_getBlockByNumber', [`0x${number.toString(16)}`, false])) as { number: string; hash: string; parentHash: string };
      return { number: Number(BigInt(block.number)), hash: block.hash, parentHash: block.parentHash };
    },
    mine: async (blocks) => {
      await call('hardhat_mine', [`0x${blocks.toString(16)}`]);
    },
    snapshot: async () => (await call('evm_snapshot')) as string,
    async revert(snapshotId) {
      const reverted = await call('evm_revert', [snapshotId]);
      if (reverted !== true) throw new Error(`evm_revert ${snapshotId} returned ${String(reverted)}`);
    },
    async sendNative({ fromAccount, to, value }) {
      const account = privateKeyToAccount(hardhatAccounts[fromAccount]!.privateKey);
      const wallet = createWalletClient({ chain, transport, account });
      const hash = await wallet.sendTransaction({ to, value });
      const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 20 });
      return { hash, blockNumber: Number(receipt.blockNumber), blockHash: receipt.blockHash };
    },
    stop: () => node.stop(),
  };
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
export function spyOnPublishes(inner: Bus): { bus: Bus; publications: Publication[]; failNext(count: number, error?: Error): void } {
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
      close: () => inner.close(),
    },
  };
}

/** Consumes `chain.>` under a durable name and keeps what arrives, parsed. */
export async function consumeChainMessages(bus: Bus, durableName = 'follower-test'): Promise<{ messages: ChainMessage[]; stop(): Promise<void> }> {
  const messages: ChainMessage[] = [];
  const consumer: Consumer = await bus.consume({ durableName, filterSubject: CHAIN_SUBJECTS }, async (message) => {
    messages.push(parseChainMessage(message.subject, message.data));
  });
  return { messages, stop: () => consumer.stop() };
}

export async function waitUntil<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
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

export const toHex = (value: bigint | number): Hex => `0x${value.toString(16)}`;
