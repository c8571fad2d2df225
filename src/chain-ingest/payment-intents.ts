import type {
  CheckoutSession,
  SeenBlock,
  SessionAddress,
  SessionPayment,
} from '../../machines/checkout-session.types.ts';

/** Whom a deposit address pays: the session and its tenant. */
export type PaymentTarget = { checkoutSessionId: string; organizationId: string; environment: string };

/**
 * A transfer recorded on a session (pending, or withdrawn after a reorg), the block it was seen in
 * last, and the other blocks it was seen in (`seenIn`, absent when one).
 */
export type PendingPayment = PaymentTarget & {
  transferId: string;
  blockNumber: number;
  blockHash: string;
  seenIn?: SeenBlock[];
};

/** A transfer as a session records it. */
export type CreditedTransfer = Omit<SessionPayment, 'status' | 'detectedAt' | 'confirmedAt' | 'late'>;

/**
 * The port through which chain-ingest reaches the payment side (the matcher today, recovery
 * through the same lookups): find the session a deposit address pays, find the transfers pending
 * in blocks, and credit, confirm or withdraw a transfer. The app wiring implements it over the read
 * models and the command handler (src/app/payment-intents.ts), so chain-ingest reads no projection
 * and loads no aggregate. Each command returns once the read models show it: later chain messages
 * look the transfer up there.
 */
export type PaymentIntents = {
  /** The session paid at `address` on `network`, or null when it is no deposit address. */
  targetAt(network: string, address: string): Promise<PaymentTarget | null>;
  /** The addresses (network, deposit address, asset) the session takes; null for an unknown session. */
  sessionAddresses(checkoutSessionId: string): Promise<readonly SessionAddress[] | null>;
  /** Pending transfers of `network` in the blocks with these hashes. */
  pendingInBlocks(network: string, blockHashes: readonly string[]): Promise<PendingPayment[]>;
  /** Pending transfers of `network` seen at height `blockNumber` (in whichever block, last or before: `seenIn`). */
  pendingAtHeight(network: string, blockNumber: number): Promise<PendingPayment[]>;
  /**
   * Transfers of `network` withdrawn after a reorg that were seen in `block` (settled ones too) or,
   * not settled, at its height: in the block they were in last, or one they were in before
   * (`seenIn`). A final reads them once, to credit again those seen in it and to give up those it ends.
   */
  withdrawnAtFinal(network: string, block: SeenBlock): Promise<PendingPayment[]>;
  recordTransfer(target: PaymentTarget, payment: CreditedTransfer, causationId: string): Promise<void>;
  /** Confirms a pending transfer mined in the final block `blockHash`: its last block or one it was seen in before. */
  confirmTransfer(target: PaymentTarget, transferId: string, blockHash: string, causationId: string): Promise<void>;
  withdrawTransfer(target: PaymentTarget, transferId: string, reason: string, causationId: string): Promise<void>;
  /**
   * Withdraws for good a transfer, pending or withdrawn, that a final block at every height it was
   * seen at is another of: it is settled (`SessionPayment.settled`), and finals read it no more.
   */
  giveUpTransfer(target: PaymentTarget, transferId: string, causationId: string): Promise<void>;
  /** Credits again a withdrawn transfer whose block `blockHash` (its last or an earlier one) is final: detected and confirmed at once. */
  reinstateTransfer(target: PaymentTarget, transferId: string, blockHash: string, causationId: string): Promise<void>;
};

/** A checkout session as the read models hold it (what the API shows of it). */
export type SessionRecord = CheckoutSession & { _id: string; [key: string]: unknown };

/**
 * What payment recovery reads of the payment side, through the same port: sessions by deposit
 * address and by id, a transfer's status, and a way to wait until the read models show what the
 * matcher did. Implemented by the app wiring (src/app/payment-intents.ts).
 */
export type RecoveryReads = Pick<PaymentIntents, 'targetAt'> & {
  session(checkoutSessionId: string): Promise<SessionRecord | null>;
  /** A recorded transfer's status; null when no session records it (yet). */
  paymentStatus(transferId: string): Promise<'pending' | 'confirmed' | 'withdrawn' | null>;
  /**
   * The transfer indexes recorded for `transactionHash` on `network` by any session of any tenant:
   * only to keep a recovered transfer off an id another move holds, never shown to the requester.
   */
  recordedIndexes(network: string, transactionHash: string): Promise<number[]>;
  /** Calls `listener` each time the read models move on; returns the call that stops it. */
  onAdvanced(listener: () => void): () => void;
  /** Waits (up to `timeoutMs`) until the read models include every event appended so far. */
  caughtUp(timeoutMs: number): Promise<void>;
};
