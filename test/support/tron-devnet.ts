import type { ExecutionContext } from 'ava';
import { createPublicClient, http } from 'viem';
import { devnetAccount, type DevnetInfo } from '../../src/chain-ingest/evm/devnet/devnet-info.ts';
import { createJsonRpc } from '../../src/chain-ingest/evm/devnet/json-rpc.ts';
import { deployDevnet } from '../../src/chain-ingest/evm/devnet/start-devnet.ts';
import { evmToTron, tronToEvm, type TronAddress } from '../../src/chain-ingest/tron/address.ts';
import { deployLocalTronContracts } from '../../src/chain-ingest/tron/devnet/local-tron-contracts.ts';
import { startLocalTron, type LocalTron } from '../../src/chain-ingest/tron/devnet/local-tron.ts';
import { tronLocalNetwork } from '../../src/chain-ingest/tron/networks.ts';
import { tronPayerSigner } from '../../src/chain-ingest/tron/payer-signer.ts';
import { devnetPayer } from './evm-devnet.ts';

/**
 * A local Tron for a test: anvil with the EVM devnet's contracts (factory, test USDC, USDT, DAI;
 * payers funded) behind the Tron-flavoured proxy, stopped when the test ends. Weir reads through
 * `tron.proxy.url`; payers send on anvil. Addresses in what this returns are in T… form. The
 * Tron network's factory and USDT are the local Tron's own (local-tron-contracts.ts): the Tron
 * forwarder, and a USDT whose transfer returns false as Tron mainnet's does.
 */
export async function startTestLocalTron(t: ExecutionContext, options: { finalizedDepth?: number } = {}) {
  const tron: LocalTron = await startLocalTron(options);
  t.teardown(() => tron.stop());
  if (tron.node === undefined) throw new Error('startLocalTron started no anvil');
  const devnet: DevnetInfo = await deployDevnet(tron.node);
  const own = await deployLocalTronContracts(
    tron.node,
    devnet.accounts.filter((a) => a.role === 'payer').map((a) => a.address),
  );
  const upstream = createJsonRpc(tron.upstreamUrl);
  const tokens = { usdt: evmToTron(own.usdt), usdc: evmToTron(devnet.contracts.usdc) };
  return {
    tron,
    devnet,
    network: tronLocalNetwork(
      tokens,
      options.finalizedDepth === undefined ? {} : { confirmations: options.finalizedDepth },
    ),
    tokens,
    factory: evmToTron(own.forwarderFactory),
    merchant: evmToTron(devnetAccount(devnet, 'merchant').address),
    /** viem reading through the proxy, as the rail will. */
    reader: createPublicClient({ transport: http(tron.proxy.url, { retryCount: 0 }) }),
    /** JSON-RPC to the proxy, for its control methods (`weir_emptyLogs`, ...). */
    rpc: createJsonRpc(tron.proxy.url),
    /** Mines `blocks` empty blocks on anvil, one at a time. */
    mine: async (blocks: number) => {
      for (let i = 0; i < blocks; i++) await upstream('evm_mine');
    },
    payer: (index = 0) => tronDevnetPayer(devnet, index),
  };
}

/** A devnet payer seen as a Tron payer: its T… address, TRC-20 and TRX payments to T… addresses, its signer. */
export function tronDevnetPayer(devnet: DevnetInfo, index = 0) {
  const evm = devnetPayer(devnet, index);
  const account = devnet.accounts.filter((a) => a.role === 'payer')[index]!;
  return {
    address: evmToTron(evm.address) as TronAddress,
    signer: tronPayerSigner(account.privateKey),
    payTrc20: (token: string, to: string, amount: bigint) => evm.payToken(tronToEvm(token), tronToEvm(to), amount),
    /** TRX stands as anvil's native coin: one wei for one sun. */
    payTrx: (to: string, sun: bigint) => evm.payNative(tronToEvm(to), sun),
  };
}
