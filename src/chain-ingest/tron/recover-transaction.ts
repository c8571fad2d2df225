import { UpstreamError, ValidationError } from '../../shared/errors.ts';
import type { EvmFollowerNetwork } from '../evm/follower/evm-follower.ts';
import type { RecoveryRail } from '../evm/recover-transaction.ts';
import { TRON_NETWORKS } from './networks.ts';
import { asTron, tronTransfer } from './tron-address-layer.ts';
import type { OfferedTronNetwork } from './tron-setup.ts';
import { createTronValueKinds, type TronValueKind } from './trx-transfers.ts';

/** A Tron transaction id: 64 hex digits (the txID TronScan and wallets show), with or without 0x. */
export const TRON_TRANSACTION_ID = /^(?:0x)?[0-9a-fA-F]{64}$/;

/**
 * The Tron rail's side of the EVM recovery (evm/recover-transaction.ts): the full node's eth_
 * JSON-RPC answers receipts (TRC-20 Transfer logs) and blocks (TRX value) as an EVM node does, with
 * 0x… addresses; the address layer gives them in T… form, as the follower's transfers leave it. A
 * transaction id is taken in Tron's own form and read, and credited, as `0x` + lowercase hex:
 * what the node's eth_ methods answer, so a transfer the follower published has the same id. A
 * value is TRX only for a TRX transfer or a contract call (trx-transfers.ts), as the follower reads it.
 */
export function tronRecoveryRail(
  offered: readonly OfferedTronNetwork[],
  /** The follower's view of a network (tron-rail's `tronFollowedNetwork`: its TRC-20 contracts in 0x… form). */
  followedOf: (network: OfferedTronNetwork) => EvmFollowerNetwork,
): RecoveryRail {
  return {
    network(environment, chainId) {
      const found = offered.find((o) => o.network.environment === environment && o.network.chainId === chainId);
      return found && { followed: followedOf(found), endpoints: found.endpoints };
    },
    others(environment, chainId) {
      const names = [...offered.map((o) => o.network), ...TRON_NETWORKS]
        .filter((n) => n.environment === environment && n.chainId !== chainId)
        .map((n) => n.network);
      return [...new Set(names)];
    },
    transactionHash(given, { followed }) {
      if (!TRON_TRANSACTION_ID.test(given))
        throw new ValidationError(
          'transactionHash',
          `must be a Tron transaction id on ${followed.network}: 64 hex digits, with or without 0x (got ${given.length} characters)`,
        );
      return `0x${given.replace(/^0x/, '').toLowerCase()}`;
    },
    address: asTron,
    transfer: tronTransfer,
    async notNativeValue({ followed, endpoints }, transactionHash) {
      let kind: TronValueKind;
      try {
        kind = await createTronValueKinds(endpoints.http).kindOf(transactionHash);
      } catch (error) {
        throw new UpstreamError(
          `the Tron node of ${followed.network} did not say what transaction ${transactionHash} moved: ${(error as Error).message}`,
          'chain_unavailable',
        );
      }
      if (kind.trx) return null;
      return kind.contractType === 'TransferAssetContract'
        ? 'a TRC-10 token (a TransferAssetContract, not TRX)'
        : `a ${kind.contractType}, not a TRX transfer`;
    },
  };
}
