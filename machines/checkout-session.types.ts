import type { Environment } from '../src/event-store/event-store.ts';
import type { AppliedTaxRate } from '../src/shared/tax.ts';
import type { CollectedData } from './collected-data.types.ts';

/** Session statuses of the reference API, plus `canceled`. */
export type CheckoutSessionStatus = 'open' | 'complete' | 'incomplete' | 'expired' | 'canceled';
export type PaymentStatus = 'unpaid' | 'paid';
export type PaymentIntentStatus = 'requires_payment_method' | 'processing' | 'succeeded' | 'canceled';

export type AssetRef = {
  id: string;
  name: string;
  symbol: string;
  currency: string;
  chainId: number;
  /** Token contract, or `0x0000000000000000000000000000000000000000` / `native` for the coin. */
  address: string;
  decimals: number;
};

export type SessionAddress = {
  id: string;
  checkoutSessionId: string;
  network: string;
  asset: AssetRef;
  paymentAddress: string;
  /** The merchant wallet the deposit address is bound to: the only place its funds can go. */
  merchantAddress: string;
  /** Estimated sweep gas units for this address (0 when the payer does not pay gas). */
  gas: string;
  /** That gas priced in the session's currency, 10^8-scaled: added to the amount due when this asset is chosen. */
  gasAmount: string;
};

/** A promotion code applied to the session. */
export type SessionDiscount = {
  couponId: string;
  promotionCodeId: string;
  code: string;
  amountDiscount: string;
  /** The coupon's terms when the code was applied (absent from discounts recorded before they were kept). */
  coupon?: DiscountCoupon;
  at: string;
};

/** A coupon's terms as a discount records them: name, and percent or amount off (10^8-scaled) in a currency. */
export type DiscountCoupon = {
  name: string;
  percentOff: number | null;
  amountOff: string | null;
  currency: string | null;
};

/**
 * What a Tron sweep used of the sweeper account's resources, this session's share, integer strings:
 * energy units, bandwidth bytes, and the TRX burnt (sun) for what the account's own did not cover
 * (also the sweep's `gasCost`); where its energy came from; what renting it cost (sun), if rented.
 */
export type SessionSweepTron = {
  energyUsed: string;
  bandwidthUsed: string;
  trxBurnt: string;
  energySource: 'burn' | 'staked' | 'rented';
  rentalCost?: string;
};

/** What a sweep moved of one asset out of the deposit address: the asset (as the payments name it) and its amount in chain units. */
export type SweptAmount = { asset: string; amountRaw: string };

/** Funds moved from a deposit address to the merchant wallet by the sweeper. */
export type SessionSweep = {
  network: string;
  chainId: number;
  transactionHash: string;
  /** The block the transaction is in. Absent on sweeps recorded before this field. */
  blockNumber?: number;
  /**
   * The deposit address swept and the merchant's wallet it went to, so the sweep is matched to the
   * chain from this event alone. Absent on sweeps recorded before these fields.
   */
  depositAddress?: string;
  merchantAddress?: string;
  transferIds: string[];
  /**
   * The assets the transaction flushed (each one's whole balance in the deposit went). Absent on
   * sweeps recorded before this field: those of its transfers were flushed.
   */
  assets?: string[];
  /**
   * What it moved, per asset, in chain units: the sum of its transfers (a flush sends the whole
   * balance, so a transfer confirmed after it was recorded may be found moved by it; a
   * TransfersFoundSwept adds those to both). Absent on a reverted sweep and on sweeps recorded
   * before this field.
   */
  moved?: SweptAmount[];
  /** Gas units attributed to this session (its share of a batched sweep). */
  gasUsed: string;
  /** Native coin spent on gas for this session, in wei. */
  gasCost: string;
  /** Tron: this session's share of the sweep's energy and bandwidth and of the TRX burnt for them. Absent elsewhere. */
  tron?: SessionSweepTron;
  /**
   * The transaction was mined but reverted: nothing moved (`transferIds` is empty), yet its gas
   * was paid. Absent on a sweep that went through (and on every sweep recorded before this field).
   */
  reverted?: boolean;
  /**
   * The sweep transaction broadcast for the session that this one was mined in place of: the same
   * call with the same nonce at a higher fee (sped up in a wallet). Its broadcast ends here, never
   * mined. Absent on a sweep mined as broadcast.
   */
  replaces?: string;
  at: string;
};

/** See the TransfersFoundSwept event. `blockNumber` is the sweep's, at or after each transfer's. */
export type TransfersFoundSwept = {
  network: string;
  transactionHash: string;
  blockNumber: number;
  depositAddress: string;
  transferIds: string[];
  moved: SweptAmount[];
  at: string;
};

/**
 * A sweep transaction signed for this session's deposit, recorded before it is sent (broadcast),
 * whose outcome is not recorded yet: it ends with the FundsSwept of the same transaction (mined,
 * swept or reverted), or with a SweepDropped when it was never mined. Recorded before the node
 * has it, so a process killed at any moment after still finds the transaction by its hash.
 */
export type SessionSweepBroadcast = {
  network: string;
  chainId: number;
  transactionHash: string;
  /** The confirmed transfers the transaction was sent to sweep. */
  transferIds: string[];
  /** This session's place among the `count` deposits of the transaction: its gas is split over them (see the sweeper's shareOf). */
  share: { index: number; count: number };
  at: string;
};

/**
 * A SweepBroadcast as the log keeps it: the last deposit of the transaction (recorded last) also
 * carries the signed transaction, so that one killed before the node had it can be sent again,
 * the very same. Kept in the log and the sweeps read model, not on the session (nor its API).
 */
export type RecordedSweepBroadcast = SessionSweepBroadcast & { signedTransaction?: string };

export type PriceSnapshot = {
  id: string;
  productId: string;
  product: { id: string; name: string; description: string | null; isActive: boolean };
  type: 'one_time' | 'recurring';
  currency: string;
  unitAmount: string;
  interval: string | null;
  intervalCount: number | null;
  isActive: boolean;
};

export type SessionLineItem = {
  description: string | null;
  quantity: number;
  price: PriceSnapshot;
  amountSubtotal: string;
  /** amountSubtotal plus the line's exclusive tax. */
  amountTotal: string;
  currency: string;
  /** All the line's tax, inclusive and exclusive; absent on lines without tax rates. */
  amountTax?: string;
  /** The tax rates applied to the line, each with its amount; absent on lines without tax rates. */
  taxRates?: AppliedTaxRate[];
  /** The line's share of the session's discount (not taken off amountTotal); absent until a discount applies. */
  amountDiscount?: string;
};

/** A line's tax once a discount is taken off it: all of it, and each rate's part. */
export type DiscountedLineTax = { amountTax: string; taxRates: AppliedTaxRate[] };

/** One on-chain transfer credited to the session, as the matcher saw it. */
export type SessionPayment = {
  transferId: string;
  network: string;
  chainId: number;
  transactionHash: string;
  logIndex: number;
  blockNumber: number;
  blockHash: string;
  fromAddress: string;
  toAddress: string;
  asset: AssetRef;
  /** Chain units of the asset. */
  amountRaw: string;
  /** 10^8-scaled amount credited. */
  amount: string;
  status: 'pending' | 'confirmed' | 'withdrawn';
  /** When it was first detected: seen again after a reorg, it keeps this (paid in time or not is judged by it). */
  detectedAt: string;
  confirmedAt: string | null;
  /** True when it was confirmed after the session had expired or been canceled. */
  late: boolean;
  /**
   * The other blocks it was seen in, each taken away by a reorg before it was mined again: one of
   * them final still proves it mined (a chain that came back to it). Absent when seen in one block.
   */
  seenIn?: SeenBlock[];
  /**
   * Withdrawn by a reorg, though detected before the session's expiresAt while the session was
   * open: a reorged transaction goes back to the mempool and may be mined again, so the session
   * waits for it as for a pending payment, until a final block at its height is another. Absent
   * otherwise (and on every transfer withdrawn before this field).
   */
  mayReturn?: true;
  /**
   * Awaited back (`mayReturn`) after a withdrawal that carried `paymentFailed` too (logged before
   * that rule): the payer was told of the failure then, so giving it up tells it no second time.
   * Absent otherwise.
   */
  failureSent?: true;
  /**
   * Withdrawn, and a final block at every height it was seen at is another (the matcher's final
   * gives it up): no final can bring it back, so finals look for it no more. Mined again in a new
   * block, it is detected again as any withdrawn transfer. Absent otherwise (a reorg's withdrawal,
   * even one past finality: a Solana slot finalized without it may yet turn out to hold it).
   */
  settled?: true;
  /**
   * Recorded before the session was canceled or expired (not confirmed then): money sent before the
   * close, confirmed after it. Set by the close in the log's order, since equal timestamps tell no
   * order. Absent otherwise.
   */
  seenBeforeClose?: true;
  /**
   * Confirmed when the merchant marked the session's payment refunded: the mark is of what had come
   * by then. Set by the mark in the log's order, since a payment confirmed in the mark's millisecond,
   * or on an instance with another clock, tells no order by its timestamp. Absent otherwise.
   */
  coveredByRefundMark?: true;
  /**
   * Late, and counted by the session's invoice while it was owed (the invoice's `latePaidTransferIds`):
   * it paid the invoice, so it is not money to settle. The invoice's log says so, not the session's:
   * set by a reader from the invoice (`withInvoicePaidLate`), never by the session's events.
   */
  paidInvoice?: true;
  /**
   * What of the session's fee and gas fee (10^8) this payment paid, fixed when it was confirmed
   * (`feeShareOf`): the volume report counts it then, so a later change of the gas fee (the payer
   * switched asset) moves no closed period. Absent until confirmed.
   */
  feeShare?: { fee: string; gasFee: string };
};

/** A block a transfer was seen in. */
export type SeenBlock = { number: number; hash: string };

/** The withdrawal of a transfer whose height is final in another block: gone for good, not waited for. */
export const NOT_IN_FINAL_BLOCK = 'not in the final block';

/**
 * The transaction id of a transfer a balance reconciler (Tron's, EVM's) credited from a deposit's
 * balance because no transfer the follower read showed it (no transaction is known).
 */
export const RECONCILIATION_TRANSACTION_PREFIX = 'reconciliation-';

/**
 * A transfer whose log arrived after a reconciliation credit already counted its money (`coveredBy`,
 * the credit's transfer id): recorded for the audit, never credited again.
 */
export type ReconciledTransfer = {
  transferId: string;
  transactionHash: string;
  blockNumber: number;
  amountRaw: string;
  coveredBy: string;
  at: string;
};

export type PaymentIntent = {
  id: string;
  organizationId: string;
  createdAt: string;
  updatedAt: string;
  amount: string;
  amountReceived: string;
  currency: string;
  status: PaymentIntentStatus;
  paymentMethodTypes: string[];
  paymentMethod: null | {
    id: string;
    type: 'wallet';
    accountAddress: string;
    asset: AssetRef;
    /** Amount due in the asset's chain units. */
    amountDue: string;
    options: { wallet: { assetId: string; transactionHash: string | null; contractAddress: string } };
  };
  /**
   * The merchant recorded that it refunded the payer outside Weir (Weir holds no funds to send
   * back). Absent until then.
   */
  isMarkRefunded?: boolean;
  markRefundedAt?: string | null;
  markRefundedComment?: string | null;
};

export type CheckoutSession = {
  id: string;
  organizationId: string;
  environment: Environment;
  createdAt: string;
  updatedAt: string;
  mode: 'payment' | 'subscription';
  status: CheckoutSessionStatus;
  paymentStatus: PaymentStatus;
  expiresAt: string;
  currency: string;
  amountSubtotal: string;
  amountTotal: string;
  amountFee: string;
  amountNet: string;
  amountGasFee: string;
  amountReceived: string;
  amountOverpaid: string;
  amountDetails: {
    currency: string;
    amountTotal: string;
    amountSubtotal: string;
    amountDiscount: string;
    amountTax: string;
    amountFee: string;
    amountGasFee: string;
    feePercentage: number;
    applyFee: boolean;
    applyGasFee: boolean;
    /** Each discount's amount with the coupon and promotion code it was applied by (as the discount recorded them). */
    discountAmounts: { amount: string; couponId: string; promotionCodeId: string | null }[];
  };
  /** Whether the payer may apply a promotion code on the hosted page. */
  allowPromotionCodes?: boolean;
  paymentMethodTypes: string[];
  paymentSetting: {
    paymentMethodTypes: string[];
    allowedChains: { chainId: number }[];
    preferredChainId: number | null;
    allowSwap: boolean;
    allowFiatPayment: boolean;
  };
  submitType: string;
  successUrl: string;
  cancelUrl: string | null;
  clientReferenceId: string | null;
  customerId: string | null;
  /**
   * The reference's `customerCreation`: `if_required` creates a customer only where one is needed
   * (a subscription, from `customerDetails.email`, when no `customerId` was given); `always` also
   * creates one for a payment. Absent on sessions recorded before it existed (read: `if_required`).
   */
  customerCreation?: CustomerCreation;
  /**
   * The reference's `customerUpdate`: which of the collected details (`name`, billing `address`,
   * `shipping`) the session's customer (`customerId`) takes when the session completes. Only on
   * sessions created with it (absent: the customer takes nothing).
   */
  customerUpdate?: CustomerUpdate;
  metadata: Record<string, string>;
  afterCompletion: 'redirect' | 'hosted_confirmation';
  afterCompletionConfirmMsg: string | null;
  paymentLinkId: string | null;
  /**
   * What the payer gave on the payment link's page, or what the merchant prefilled with the API's
   * `customerData` (absent on sessions that collected and were given nothing).
   */
  customerDetails?: CollectedData['customerDetails'];
  billingDetails?: CollectedData['billingDetails'];
  shippingDetails?: CollectedData['shippingDetails'];
  customFields?: CollectedData['customFields'];
  invoiceId: string | null;
  subscriptionId: string | null;
  url: string;
  lineItems: { object: 'list'; data: SessionLineItem[] };
  addresses: SessionAddress[];
  paymentIntent: PaymentIntent;
  payments: SessionPayment[];
  /** Transfers a reconciliation credit already held when their logs came; absent on sessions that never had one. */
  reconciledTransfers?: ReconciledTransfer[];
  sweeps: SessionSweep[];
  /** Sweep transactions broadcast whose outcome is not recorded yet; absent on sessions that never had one. */
  sweepsBroadcast?: SessionSweepBroadcast[];
  /**
   * Sweep transactions broadcast for the session and recorded as dropped (not mined in time): one
   * found mined later is still recorded, its gas paid. Absent on sessions that never had one.
   */
  sweepsDropped?: string[];
  /**
   * Of `sweepsDropped`, those dropped for their age that the node may still mine: the sweeper looks
   * them up (across restarts) until one is recorded mined or it gives up (SweepLookUpEnded).
   */
  sweepsLookedUp?: string[];
  discounts: SessionDiscount[];
  isManualPayment: boolean;
  completedAt: string | null;
  canceledAt: string | null;
  expiredAt: string | null;
  transactionHash: string | null;
};

/** The reference's `customerCreation` values. */
export type CustomerCreation = 'if_required' | 'always';

/** The reference's `CustomerUpdateMode`: `auto` copies the collected detail onto the customer, `never` leaves it. */
export type CustomerUpdateMode = 'auto' | 'never';

/** The reference's `CheckoutSessionCustomerUpdateDto`, every part spelled out (a part left out of a request is `never`). */
export type CustomerUpdate = { address: CustomerUpdateMode; name: CustomerUpdateMode; shipping: CustomerUpdateMode };

/** The domain events of a checkout session, as stored in the log (`type` + `data`). */
export type CheckoutSessionEvent =
  | { type: 'CheckoutSessionCreated'; data: { session: CheckoutSession } }
  /**
   * `amountGasFee`: the session's network fee from then on, the chosen address's sweep gas plus that of
   * every other address paid into (see `gasFeeChoosing`; events before it charged the chosen one's alone).
   */
  | { type: 'PaymentMethodSelected'; data: { addressId: string; amountDue: string; amountGasFee: string; at: string } }
  | { type: 'PaymentDetected'; data: { payment: SessionPayment } }
  | {
      type: 'PaymentWithdrawn';
      /**
       * `paymentFailed`: the payment intent was waiting for this payment alone and now needs a
       * payment again (sent as `payment_intent.payment_failed`); absent otherwise, and in events
       * written before it existed. Never with `mayReturn` (the intent stays processing while the
       * transfer is awaited back): the withdrawal that gives it up carries it instead. Never on a
       * withdrawal the session expires with: the expiry's `payment_intent.canceled` tells the end
       * (logs written before this rule may hold it in either case). `mayReturn`: the transfer may be mined again and the
       * session waits for it (see `SessionPayment.mayReturn`); absent otherwise. `settled`: a final
       * block at every height it was seen at is another (see `SessionPayment.settled`); absent
       * otherwise, and in events written before it existed.
       */
      data: { transferId: string; reason: string; at: string; paymentFailed?: true; mayReturn?: true; settled?: true };
    }
  | { type: 'PaymentConfirmed'; data: { transferId: string; at: string } }
  | { type: 'TransferAlreadyReconciled'; data: { transfer: ReconciledTransfer } }
  | { type: 'CheckoutSessionPartiallyPaid'; data: { amountReceived: string; at: string } }
  | {
      type: 'CheckoutSessionCompleted';
      data: {
        amountReceived: string;
        amountOverpaid: string;
        transactionHash: string | null;
        partial: boolean;
        at: string;
        /**
         * Why a partly paid session was completed as is by the system (its invoice was paid or settled
         * another way). Absent when paid in full, when the merchant completed it, and on events before it.
         */
        reason?: string;
      };
    }
  | { type: 'LatePaymentReceived'; data: { transferId: string; amount: string; at: string } }
  | { type: 'OverpaymentReceived'; data: { transferId: string; amount: string; amountOverpaid: string; at: string } }
  | { type: 'CheckoutSessionExpired'; data: { at: string } }
  | { type: 'CheckoutSessionCanceled'; data: { at: string; reason: string | null } }
  | { type: 'FundsSwept'; data: { sweep: SessionSweep } }
  | { type: 'SweepBroadcast'; data: { broadcast: RecordedSweepBroadcast } }
  /**
   * Confirmed transfers found moved by the sweep `transactionHash` recorded before (its FundsSwept):
   * mined before it, at the deposit it emptied (a flush sends the whole balance), they were confirmed
   * only after it was sent. Adds them, and what they moved, to that sweep; its gas is its FundsSwept's.
   */
  | { type: 'TransfersFoundSwept'; data: TransfersFoundSwept }
  | {
      type: 'SweepDropped';
      /** `mayBeMined`: dropped for its age, the node may still mine it (looked up until SweepLookUpEnded). */
      data: { network: string; transactionHash: string; at: string; mayBeMined?: true };
    }
  | { type: 'SweepLookUpEnded'; data: { network: string; transactionHash: string; at: string } }
  | {
      type: 'DiscountApplied';
      /**
       * `lineTaxes`: each line's tax with the discount taken off it, by index (absent on a session
       * without tax, and on discounts recorded before tax followed the discount). `amountGasFee`: the
       * session's network fee from then on, "0" when the discount leaves no goods to pay (nothing was
       * received, so no deposit is left to sweep); absent: the fee stays (and in events before it).
       */
      data: { discount: SessionDiscount; lineTaxes?: DiscountedLineTax[]; amountGasFee?: string };
    }
  /**
   * The payer gave their email on the hosted page: a subscription session created without a
   * customer asks for it first (see `needsCustomerEmail`). Kept as `customerDetails.email`.
   */
  | { type: 'CustomerEmailCollected'; data: { email: string; at: string } }
  | { type: 'PaymentMarkedRefunded'; data: { comment: string | null; at: string } }
  /** The merchant asked Weir to mail the payer a receipt: the mail follows from this event (see mails.projection). */
  | { type: 'PaymentReceiptRequested'; data: { to: string; receiptNumber: string; at: string } };

export type CheckoutSessionEventType = CheckoutSessionEvent['type'];
