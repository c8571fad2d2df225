import { tronHttpApiBase, TronNodeAnswerError } from './tron-resource-node.ts';

/*
 * Which Tron transactions moved TRX. java-tron's eth_ JSON-RPC cannot tell: a transaction's `to` and
 * `value` are its contract's recipient and amount whatever the contract (JsonRpcApiUtil.getTo /
 * getTransactionAmount), so a TRC-10 transfer (TransferAssetContract) shows its token amount as
 * `value`, and `type` is "0x0" and `input` "0x" alike for both (TransactionResult). The HTTP API
 * beside `/jsonrpc` names the contract: `wallet/gettransactionbyid` → raw_data.contract[0].type.
 */

/** The contracts whose `value` on the eth_ JSON-RPC is TRX moved to `to`: a TRX transfer, and a contract call's call_value. */
const TRX_CONTRACTS: ReadonlySet<string> = new Set(['TransferContract', 'TriggerSmartContract']);

/** What a transaction's eth_ `value` is on Tron: TRX, or the contract type it is not TRX of. */
export type TronValueKind = { trx: true } | { trx: false; contractType: string };

/** How many transactions' kinds are remembered: a few batches' worth of payments to watched addresses. */
export const REMEMBERED_VALUE_KINDS = 10_000;

/**
 * Reads the contract type of transactions from the full node's HTTP API, trying `jsonRpcUrls` in
 * order (each one's `/wallet/…` beside it). Throws when none knows a transaction: asked only of
 * transactions already in the blocks it served, so that is the node's failure (retried).
 *
 * A transaction's contract never changes, so the kinds read are remembered (the newest `remember`,
 * by hash): a batch read again (a retry, the solidified re-read, a recheck) asks the node nothing.
 */
export function createTronValueKinds(
  jsonRpcUrls: readonly string[],
  fetchImpl: typeof fetch = fetch,
  remember = REMEMBERED_VALUE_KINDS,
) {
  const bases = jsonRpcUrls.map(tronHttpApiBase);
  const known = new Map<string, TronValueKind>();
  const keyOf = (transactionHash: string) => transactionHash.replace(/^0x/i, '').toLowerCase();
  const typeFrom = async (base: string, transactionHash: string): Promise<string> => {
    const response = await fetchImpl(`${base}/wallet/gettransactionbyid`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ value: transactionHash.replace(/^0x/, '') }),
    });
    if (!response.ok) throw new TronNodeAnswerError(`wallet/gettransactionbyid answered HTTP ${response.status}`);
    const answer = (await response.json()) as { raw_data?: { contract?: { type?: unknown }[] } } | null;
    const type = answer?.raw_data?.contract?.[0]?.type;
    if (typeof type !== 'string')
      throw new TronNodeAnswerError(`wallet/gettransactionbyid does not know transaction ${transactionHash}`);
    return type;
  };
  const kindOf = async (transactionHash: string): Promise<TronValueKind> => {
    const key = keyOf(transactionHash);
    const remembered = known.get(key);
    if (remembered !== undefined) {
      // Newest last, so the oldest read is the one forgotten.
      known.delete(key);
      known.set(key, remembered);
      return remembered;
    }
    const failures: string[] = [];
    for (const base of bases) {
      try {
        const contractType = await typeFrom(base, transactionHash);
        const kind: TronValueKind = TRX_CONTRACTS.has(contractType) ? { trx: true } : { trx: false, contractType };
        known.set(key, kind);
        if (known.size > remember) known.delete(known.keys().next().value!);
        return kind;
      } catch (error) {
        failures.push(error instanceof Error ? error.message : String(error));
      }
    }
    throw new TronNodeAnswerError(`the contract of ${transactionHash} could not be read: ${failures.join('; ')}`);
  };
  return {
    kindOf,
    /** Of `transactionHashes`, the ones whose value is TRX. */
    async trxTransfers(transactionHashes: readonly string[]): Promise<Set<string>> {
      const kinds = await Promise.all(transactionHashes.map(kindOf));
      return new Set(transactionHashes.filter((_, index) => kinds[index]!.trx));
    },
  };
}
