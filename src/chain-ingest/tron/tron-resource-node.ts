import { createPublicClient, erc20Abi, http, type Address, type Hash, type Hex } from 'viem';
import type { TronAddress } from './address.ts';
import type { SweepDepositShape, TronAccountResources, TronResourcePrices } from './tron-resources.ts';

/** What the Tron sweeps read of a node, as ports so the policy is tested without one. */
export type TronResourceNode = {
  /** The account's energy and bandwidth available now (`wallet/getaccountresource`). */
  accountResources(address: TronAddress): Promise<TronAccountResources>;
  /** Sun per energy unit and per bandwidth byte (`wallet/getchainparameters`). */
  prices(): Promise<TronResourcePrices>;
  /** The node's estimate of a call's energy (java-tron's eth_estimateGas answers energy), or null when it gives none. */
  estimateEnergy(call: { from: Address; to: Address; data: Hex }): Promise<bigint | null>;
  /** Whether each deposit's forwarder is deployed and its merchant holds each token (for an estimate without the node's). */
  shapes(
    deposits: { depositAddress: Address; merchantAddress: Address; tokens: Address[]; native: boolean }[],
  ): Promise<SweepDepositShape[]>;
  /** Bytes of a mined transaction's call data (its bandwidth, with the overhead), or null when the node does not have it. */
  callDataBytes(transactionHash: string): Promise<number | null>;
};

/** A full node's HTTP API base from its JSON-RPC URL: `https://node/jsonrpc` → `https://node`. */
export function tronHttpApiBase(jsonRpcUrl: string): string {
  return jsonRpcUrl.replace(/\/+$/, '').replace(/\/jsonrpc$/, '');
}

/** A Tron node error that is the node's (HTTP status, unreadable answer). */
export class TronNodeAnswerError extends Error {
  override readonly name = 'TronNodeAnswerError';
}

const count = (value: unknown): bigint =>
  typeof value === 'number' && Number.isSafeInteger(value) ? BigInt(value) : 0n;
const left = (limit: unknown, used: unknown): bigint => {
  const rest = count(limit) - count(used);
  return rest > 0n ? rest : 0n;
};

/** A full node read over its JSON-RPC (`/jsonrpc`) and HTTP API (`/wallet/…`), which java-tron serves side by side. */
export function createTronResourceNode(jsonRpcUrl: string, fetchImpl: typeof fetch = fetch): TronResourceNode {
  const base = tronHttpApiBase(jsonRpcUrl);
  const client = createPublicClient({ transport: http(jsonRpcUrl, { retryCount: 1 }) });
  async function wallet(path: string, body: unknown): Promise<Record<string, unknown>> {
    const response = await fetchImpl(`${base}/wallet/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new TronNodeAnswerError(`wallet/${path} answered HTTP ${response.status}`);
    const answer = (await response.json()) as unknown;
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
      throw new TronNodeAnswerError(`wallet/${path} answered no object`);
    return answer as Record<string, unknown>;
  }
  return {
    async accountResources(address) {
      // java-tron leaves out every field that is zero.
      const r = await wallet('getaccountresource', { address, visible: true });
      return {
        energy: left(r['EnergyLimit'], r['EnergyUsed']),
        stakedBandwidth: left(r['NetLimit'], r['NetUsed']),
        freeBandwidth: left(r['freeNetLimit'], r['freeNetUsed']),
      };
    },
    async prices() {
      const { chainParameter } = await wallet('getchainparameters', {});
      const parameters = Array.isArray(chainParameter) ? (chainParameter as { key?: unknown; value?: unknown }[]) : [];
      const value = (key: string) => {
        const found = parameters.find((p) => p.key === key);
        if (found === undefined) throw new TronNodeAnswerError(`wallet/getchainparameters has no ${key}`);
        return count(found.value);
      };
      return { energySun: value('getEnergyFee'), bandwidthSun: value('getTransactionFee') };
    },
    async estimateEnergy(call) {
      try {
        return await client.estimateGas({ account: call.from, to: call.to, data: call.data });
      } catch {
        // A node that does not estimate (or a revert it foresees): the caller estimates from the shape.
        return null;
      }
    },
    async shapes(deposits) {
      return Promise.all(
        deposits.map(async (d) => ({
          deployed: ((await client.getCode({ address: d.depositAddress })) ?? '0x') !== '0x',
          native: d.native,
          tokens: await Promise.all(
            d.tokens.map(async (token) => ({
              merchantHolds:
                (await client.readContract({
                  address: token,
                  abi: erc20Abi,
                  functionName: 'balanceOf',
                  args: [d.merchantAddress],
                })) > 0n,
            })),
          ),
        })),
      );
    },
    async callDataBytes(transactionHash) {
      try {
        const transaction = await client.getTransaction({ hash: transactionHash as Hash });
        return (transaction.input.length - 2) / 2;
      } catch {
        return null;
      }
    },
  };
}
