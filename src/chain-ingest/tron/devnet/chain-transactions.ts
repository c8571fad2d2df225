import type { Hex } from 'viem';

/*
 * The proxy's java-tron view of the transactions on anvil that were not built through its
 * `/wallet/…` calls: the contract `wallet/gettransactionbyid` names for each, and TRC-10 transfers.
 *
 * java-tron names a transaction's contract in its HTTP API (raw_data.contract[0].type), while its
 * eth_ JSON-RPC gives `to` and `value` as that contract's recipient and amount whatever it is
 * (JsonRpcApiUtil.getTo / getTransactionAmount, TransactionResult: `type` "0x0" and `input` "0x"
 * for every contract but TriggerSmartContract). So a TRC-10 transfer (TransferAssetContract) reads
 * there as a value transfer of its token amount to its recipient, and moves no TRX. Anvil has no
 * TRC-10: `transferAsset` mines a 0-value transaction from the sender to itself (it moves nothing
 * and cannot revert) and the eth_ answers about it are rewritten to what java-tron shows: `to` the
 * recipient and `value` the token amount, in blocks, by hash and in the receipt.
 *
 * Anvil's own transactions are named as java-tron would name their Tron equivalents: a value
 * transfer without call data is a TransferContract, a call a TriggerSmartContract (its call_value
 * the value), a creation a CreateSmartContract.
 */

type AssetTransfer = { from: Hex; to: Hex; assetName: string; amount: bigint };

const hex = (value: bigint) => `0x${value.toString(16)}`;
const tronHex = (address: string) => `41${address.slice(2).toLowerCase()}`;
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function createChainTransactions(upstreamResult: (method: string, params: unknown[]) => Promise<unknown>) {
  /** TRC-10 transfers by their anvil hash, lowercase. */
  const assets = new Map<string, AssetTransfer>();
  const assetOf = (transaction: Record<string, unknown>) =>
    typeof transaction['hash'] === 'string' ? assets.get(transaction['hash'].toLowerCase()) : undefined;

  /** A transaction object as java-tron's eth_ methods show it. */
  const asTron = (transaction: unknown): unknown => {
    if (!isRecord(transaction)) return transaction;
    const asset = assetOf(transaction);
    return asset === undefined ? transaction : { ...transaction, to: asset.to, value: hex(asset.amount) };
  };

  return {
    /** Mines a TRC-10 transfer of `amount` units of token `assetName` (its id, e.g. "1000001"); its hash. */
    async transferAsset(transfer: AssetTransfer): Promise<Hex> {
      await upstreamResult('anvil_impersonateAccount', [transfer.from]);
      const hash = (await upstreamResult('eth_sendTransaction', [
        { from: transfer.from, to: transfer.from, value: '0x0', gasPrice: '0x0' },
      ])) as Hex;
      assets.set(hash.toLowerCase(), transfer);
      return hash;
    },

    /** The upstream's answer to `method`, as java-tron's would be for the TRC-10 transfers. */
    rewrite(method: string, result: unknown): unknown {
      if (!isRecord(result)) return result;
      if (method === 'eth_getTransactionByHash') return asTron(result);
      if (method === 'eth_getTransactionReceipt') {
        const asset = assetOf({ hash: result['transactionHash'] });
        return asset === undefined ? result : { ...result, to: asset.to };
      }
      if (
        (method === 'eth_getBlockByNumber' || method === 'eth_getBlockByHash') &&
        Array.isArray(result['transactions'])
      )
        return { ...result, transactions: result['transactions'].map(asTron) };
      return result;
    },

    /** `wallet/gettransactionbyid` for a transaction on anvil (by its hash, bare); null when anvil has none. */
    async byId(txID: string): Promise<Record<string, unknown> | null> {
      const hash = `0x${txID}`;
      const found = await upstreamResult('eth_getTransactionByHash', [hash]);
      if (!isRecord(found)) return null;
      const from = String(found['from']);
      const asset = assets.get(hash.toLowerCase());
      const value = BigInt(String(found['value'] ?? '0x0'));
      const input = typeof found['input'] === 'string' ? found['input'] : '0x';
      const contract =
        asset !== undefined
          ? {
              type: 'TransferAssetContract',
              value: {
                amount: Number(asset.amount),
                asset_name: Buffer.from(asset.assetName, 'utf8').toString('hex'),
                owner_address: tronHex(asset.from),
                to_address: tronHex(asset.to),
              },
            }
          : typeof found['to'] !== 'string'
            ? { type: 'CreateSmartContract', value: { owner_address: tronHex(from) } }
            : input === '0x'
              ? {
                  type: 'TransferContract',
                  value: { amount: Number(value), owner_address: tronHex(from), to_address: tronHex(found['to']) },
                }
              : {
                  type: 'TriggerSmartContract',
                  value: {
                    data: input.slice(2),
                    owner_address: tronHex(from),
                    contract_address: tronHex(found['to']),
                    ...(value > 0n ? { call_value: Number(value) } : {}),
                  },
                };
      const receipt = await upstreamResult('eth_getTransactionReceipt', [hash]);
      const ret = isRecord(receipt)
        ? { ret: [{ contractRet: receipt['status'] === '0x1' ? 'SUCCESS' : 'REVERT' }] }
        : {};
      return {
        ...ret,
        txID,
        raw_data: {
          contract: [
            {
              parameter: { value: contract.value, type_url: `type.googleapis.com/protocol.${contract.type}` },
              type: contract.type,
            },
          ],
        },
        visible: false,
      };
    },
  };
}
