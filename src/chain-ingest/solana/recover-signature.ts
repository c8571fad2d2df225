import type { Address } from '@solana/kit';
import type { Bus } from '../../bus/bus.ts';
import type { Clock } from '../../shared/clock.ts';
import { UnprocessableError, UpstreamError, ValidationError, WeirError } from '../../shared/errors.ts';
import { encodeChainMessage, transferId, type ChainTransferMessage } from '../chain-messages.ts';
import { classifyRecovery } from '../evm/recover-transaction.ts';
import type { RecoveryReads, SessionRecord } from '../payment-intents.ts';
import type { Recovery, RecoveryRequest, TransactionRecovery } from '../rail.ts';
import type { SolanaNetwork } from './define-network.ts';
import type { SolanaJsonRpc } from './follower/json-rpc.ts';
import type { SolanaFollower } from './follower/solana-follower.ts';
import type { WatchedReference } from './follower/solana-references.ts';
import { referencePayments, slotBlockHash } from './follower/solana-transfers.ts';
import { decodeTransactionJson, TransactionJsonError } from './transaction-json.ts';

/** The node's getTransaction answer read; one it garbled is the node's fault (502), not Weir's. */
function decodedAnswer(answer: unknown, where: string) {
  try {
    return decodeTransactionJson(answer);
  } catch (error) {
    if (!(error instanceof TransactionJsonError)) throw error;
    throw new UpstreamError(
      `the RPC endpoint's answer about ${where} cannot be read: ${error.message}`,
      'chain_unavailable',
    );
  }
}

/** A base58 Solana transaction signature (64 bytes). */
export const SOLANA_SIGNATURE = /^[1-9A-HJ-NP-Za-km-z]{64,88}$/;

/**
 * Recovery by signature on a Solana network, with the outcomes of the EVM recovery (the spec's):
 * the transaction is read at `confirmed`, each reference of the tenant it names is checked as
 * the follower checks it, and what pays a session is published as the follower would; a
 * transaction not yet finalized is handed to the network's follower, which confirms or withdraws it.
 */
export function createSolanaTransactionRecovery(deps: {
  networks: readonly { network: SolanaNetwork; rpc: SolanaJsonRpc; follower?: Pick<SolanaFollower, 'adopt'> }[];
  bus: Bus;
  reads: RecoveryReads;
  clock: Pick<Clock, 'now'>;
  settleTimeoutMs?: number;
}): TransactionRecovery {
  const { reads } = deps;
  const settleTimeoutMs = deps.settleTimeoutMs ?? 15_000;

  const settled = (ids: readonly string[], final: boolean) =>
    new Promise<boolean>((resolve) => {
      let done = false;
      const check = async () => {
        for (const id of ids) {
          const status = await reads.paymentStatus(id);
          // Finalized, even a transfer withdrawn before is confirmed once the matcher has its final.
          if (status === null || (final && status !== 'confirmed')) return;
        }
        finish(true);
      };
      const finish = (ok: boolean) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        unsubscribe();
        resolve(ok);
      };
      const unsubscribe = reads.onAdvanced(() => void check().catch(() => finish(false)));
      const timer = setTimeout(() => finish(false), settleTimeoutMs);
      void check().catch(() => finish(false));
    });

  return {
    async recover(request: RecoveryRequest): Promise<Recovery> {
      const found = deps.networks.find(
        (n) => n.network.chainId === request.chainId && n.network.environment === request.environment,
      );
      if (!found)
        throw new ValidationError(
          'chainId',
          `no ${request.environment} network with chain id ${request.chainId} is followed by this Weir`,
          'chain_unsupported',
        );
      const { network, rpc } = found;
      const signature = request.transactionHash;
      if (!SOLANA_SIGNATURE.test(signature))
        throw new ValidationError('transactionHash', `must be a base58 transaction signature on ${network.name}`);
      const where = `transaction ${signature} on ${network.network}`;
      let answer: unknown;
      let finalized: boolean;
      try {
        answer = await rpc.call('getTransaction', [
          signature,
          { encoding: 'json', commitment: network.commitment.seen, maxSupportedTransactionVersion: 0 },
        ]);
        const statuses = await rpc.call<{ value: ({ confirmationStatus: string | null } | null)[] }>(
          'getSignatureStatuses',
          [[signature], { searchTransactionHistory: true }],
        );
        finalized = statuses.value[0]?.confirmationStatus === network.commitment.final;
      } catch (error) {
        throw new UpstreamError(
          `the RPC endpoint of ${network.network} did not answer about ${signature}: ${error instanceof Error ? error.message : String(error)}`,
          'chain_unavailable',
        );
      }
      const tx = decodedAnswer(answer, where);
      if (tx === null)
        throw new WeirError(
          404,
          'Not Found',
          'transaction_not_found',
          `${where} not found at ${network.commitment.seen}`,
        );
      if (tx.meta.err !== null && tx.meta.err !== undefined)
        throw new UnprocessableError(`${where} failed and moved nothing`, 'transaction_failed');

      const credited: { message: ChainTransferMessage; session: SessionRecord; reference: string }[] = [];
      const refused: { session: SessionRecord; reason: string }[] = [];
      for (const key of new Set(tx.accountKeys)) {
        const doc = await reads.targetAt(network.network, key);
        if (
          !doc ||
          doc.organizationId !== request.organizationId ||
          doc.environment !== request.environment ||
          (request.checkoutSessionId !== undefined && doc.checkoutSessionId !== request.checkoutSessionId)
        )
          continue;
        const session = await reads.session(doc.checkoutSessionId);
        if (!session) continue;
        const offered = session.addresses.filter((a) => a.network === network.network && a.paymentAddress === key);
        if (offered.length === 0) continue;
        const watched: WatchedReference = {
          reference: key,
          network: network.network,
          checkoutSessionId: session.id,
          recipient: offered[0]!.merchantAddress as Address,
          mints: offered.map((a) => a.asset.address),
          closedAt: null,
          expiresAt: null,
        };
        const result = await referencePayments(network, answer, watched, new Date(deps.clock.now()).toISOString());
        if (result.ok) for (const message of result.messages) credited.push({ message, session, reference: key });
        else
          refused.push({
            session,
            reason:
              result.check.reason === 'wrong-token'
                ? `${result.check.message}, which checkout session ${session.id} does not accept on ${network.network}`
                : `${result.check.message} (checkout session ${session.id})`,
          });
      }
      if (credited.length === 0) {
        const first = refused[0];
        if (first)
          return {
            outcome: 'wrong_token_or_network',
            session: first.session,
            message: `wrong token or network: the transaction ${first.reason}; it cannot be credited, contact support to return the funds`,
          };
        return {
          outcome: 'wrong_claim',
          message: `wrong claim: ${where} pays no ${request.checkoutSessionId ? `reference of checkout session ${request.checkoutSessionId}` : 'checkout session of this organization'}; use the correct payment link`,
        };
      }
      for (const { message } of credited) {
        const encoded = encodeChainMessage(message);
        await deps.bus.publish(encoded.subject, encoded.data, { messageId: encoded.messageId });
      }
      if (finalized) {
        const final = encodeChainMessage({
          type: 'final',
          network: network.network,
          chainId: network.chainId,
          blockNumber: Number(tx.slot),
          blockHash: slotBlockHash(tx.slot),
          transactionHash: signature,
          observedAt: new Date(deps.clock.now()).toISOString(),
        });
        await deps.bus.publish(final.subject, final.data, { messageId: `${final.messageId}:recovered` });
      } else {
        for (const { reference } of credited) found.follower?.adopt(signature, tx.slot, reference);
      }
      const ids = credited.map((c) => transferId(c.message));
      // The events that followed the transfer's (completion, late payment) were appended with it: wait for those too.
      if (await settled(ids, finalized)) await reads.caughtUp(settleTimeoutMs);
      const session = (await reads.session(credited[0]!.session.id)) ?? credited[0]!.session;
      const mine = ids.filter((_, index) => credited[index]!.session.id === session.id);
      const recovery = classifyRecovery(session, mine, 1, found.follower !== undefined);
      return {
        ...recovery,
        message: recovery.message.replace('(1 block)', `(${network.commitment.final})`),
        session,
      };
    },
  };
}
