import type { ExecutionContext } from 'ava';
import { createPublicClient, erc20Abi, http, type Hex, type TransactionReceipt } from 'viem';
import { createEvmWriteClients } from '../../src/chain-ingest/evm/contracts/clients.ts';
import type { DevnetInfo } from '../../src/chain-ingest/evm/devnet/devnet-info.ts';
import { createJsonRpc } from '../../src/chain-ingest/evm/devnet/json-rpc.ts';
import { evmToTron, tronToEvm, type TronAddress } from '../../src/chain-ingest/tron/address.ts';
import { startLocalTronDevnet, tronDevnetAddresses } from '../../src/chain-ingest/tron/devnet/tron-devnet.ts';
import { TRON_LOCAL_CHAIN_ID, tronLocalNetwork } from '../../src/chain-ingest/tron/networks.ts';
import { tronPayerSigner } from '../../src/chain-ingest/tron/payer-signer.ts';
import { devnetPayer } from './evm-devnet.ts';

/**
 * A local Tron for a test (startLocalTronDevnet: anvil with the EVM devnet's contracts behind the
 * Tron-flavoured proxy, finalized at the head unless `finalizedDepth` is given), stopped when the test ends. Weir reads
 * through `tron.proxy.url`; payers send on anvil. Addresses in what this returns are in T… form.
 */
export async function startTestLocalTron(t: ExecutionContext, options: { finalizedDepth?: number } = {}) {
  const started = await startLocalTronDevnet(options);
  t.teardown(() => started.stop());
  const { tron, devnet } = started;
  const upstream = createJsonRpc(tron.upstreamUrl);
  const { tokens, factory, merchant } = tronDevnetAddresses(devnet);
  return {
    tron,
    devnet,
    /** What Weir offers it with (`overrides.tronLocal`). */
    info: started.info,
    network: tronLocalNetwork(
      tokens,
      options.finalizedDepth === undefined ? {} : { confirmations: options.finalizedDepth },
    ),
    tokens,
    factory,
    merchant,
    /** viem reading through the proxy, as the rail will. */
    reader: createPublicClient({ transport: http(tron.proxy.url, { retryCount: 0 }) }),
    /** JSON-RPC to the proxy, for its control methods (`weir_emptyLogs`, ...). */
    rpc: createJsonRpc(tron.proxy.url),
    /** Mines `blocks` empty blocks on anvil, one at a time. */
    mine: async (blocks: number) => {
      for (let i = 0; i < blocks; i++) await upstream('evm_mine');
    },
    payer: (index = 0) => {
      const payer = tronDevnetPayer(devnet, index);
      return {
        ...payer,
        /** A TRC-10 transfer of `amount` units of token `assetName` (its id): java-tron shows it as a value transfer, of no TRX. */
        payTrc10: (to: string, assetName: string, amount: bigint) =>
          tron.proxy.transferAsset({ from: payer.address, to, assetName, amount }),
      };
    },
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

/**
 * A TRC-20 transfer on the local Tron (`devnet`: its anvil) from `privateKey`, T… addresses, with
 * gas price 0: a payer holding only what the faucet gave pays no fee there. Resolves with its receipt.
 */
export async function payTrc20WithoutFee(
  devnet: DevnetInfo,
  privateKey: Hex,
  payment: { token: string; to: string; amount: bigint },
): Promise<TransactionReceipt> {
  const { walletClient, publicClient } = createEvmWriteClients({
    rpcUrl: devnet.rpcUrl,
    chainId: TRON_LOCAL_CHAIN_ID,
    privateKey,
  });
  const hash = await walletClient.writeContract({
    address: tronToEvm(payment.token),
    abi: erc20Abi,
    functionName: 'transfer',
    args: [tronToEvm(payment.to), payment.amount],
    gasPrice: 0n,
  });
  return publicClient.waitForTransactionReceipt({ hash });
}
