import { createHash } from 'node:crypto';
import type { Address } from '@solana/kit';
import type { ChainTransferMessage } from '../../chain-messages.ts';
import { NATIVE_ASSET_ADDRESS } from '../../network-definition.ts';
import type { SolanaNetwork } from '../define-network.ts';
import { validateSolanaTransfer, type SolanaPayment, type TransferCheck } from '../validate-transfer.ts';
import type { WatchedReference } from './solana-references.ts';

/**
 * The bus's `blockHash` of a slot: the bus contract keys finality by (block number, block hash),
 * and a Solana slot holds at most one block that can reach `confirmed`, so the slot alone names
 * it. Every transfer of a slot carries the same value; as finality is learnt per signature, a
 * `final` or withdrawal of the slot names its transaction (`transactionHash`) and settles only its
 * transfers.
 */
export const slotBlockHash = (slot: bigint | number): string =>
  `0x${createHash('sha256').update(`solana-slot:${slot}`).digest('hex')}`;

/** What a transaction pays a watched reference: the transfer messages to publish, or why none. */
export type ReferencePayments =
  | { ok: true; messages: ChainTransferMessage[]; slot: bigint }
  | { ok: false; check: TransferCheck & { valid: false } };

/**
 * The payments `answer` (a `getTransaction` json answer) makes to `watched`, checked as
 * `validateSolanaTransfer` does against every mint the session takes there, merged by instruction:
 * one transaction may pay the reference in several of them (SOL and USDC), and the follower reads
 * it once. A payment in a mint the session does not take (or to another wallet) is no payment, and
 * the check says why.
 */
export async function referencePayments(
  network: SolanaNetwork,
  answer: unknown,
  watched: WatchedReference,
  observedAt: string,
): Promise<ReferencePayments> {
  const checks: TransferCheck[] = [];
  const byInstruction = new Map<number, SolanaPayment>();
  for (const mint of new Set(watched.mints)) {
    const check = await validateSolanaTransfer(answer, {
      recipient: watched.recipient,
      mint: mint as Address | typeof NATIVE_ASSET_ADDRESS,
      references: [watched.reference],
    });
    checks.push(check);
    if (check.valid) for (const payment of check.payments) byInstruction.set(payment.instructionIndex, payment);
  }
  const payments = [...byInstruction.values()].sort((a, b) => a.instructionIndex - b.instructionIndex);
  if (payments.length === 0) {
    const failed = checks.filter((c): c is TransferCheck & { valid: false } => !c.valid);
    return {
      ok: false,
      // Paid in another mint than each asked: say so for the first; any other reason says more.
      check: failed.find((c) => c.reason !== 'wrong-token') ??
        failed[0] ?? {
          valid: false,
          reason: 'reference-not-found',
          message: 'the session takes no asset there',
          rejected: [],
        },
    };
  }
  const messages = payments.flatMap((payment): ChainTransferMessage[] => {
    const asset = network.assets.find((a) => a.address === payment.mint);
    if (!asset) return [];
    return [
      {
        type: 'transfer',
        network: network.network,
        chainId: network.chainId,
        transactionHash: payment.signature,
        logIndex: payment.instructionIndex,
        blockNumber: Number(payment.slot),
        blockHash: slotBlockHash(payment.slot),
        from: payment.payer,
        to: payment.destination,
        asset: { address: asset.address, symbol: asset.symbol, decimals: asset.decimals },
        amount: payment.amount.toString(),
        reference: watched.reference,
        observedAt,
      },
    ];
  });
  return { ok: true, messages, slot: payments[0]?.slot ?? 0n };
}
