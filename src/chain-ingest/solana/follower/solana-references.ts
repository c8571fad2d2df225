import type { Address } from '@solana/kit';
import type { SessionAddress } from '../../../../machines/checkout-session.types.ts';

/** A session's reference on one Solana network: where it may be paid (the merchant's wallet) and in what. */
export type WatchedReference = {
  reference: Address;
  network: string;
  checkoutSessionId: string;
  /** The merchant's wallet. */
  recipient: Address;
  /** The mints the session takes there (`native` for SOL). */
  mints: string[];
  /** When the session closed (complete, expired, canceled) as the log records it, on Weir's clock; null while open. */
  closedAt: number | null;
  /**
   * When the session expires, on Weir's clock (null: unknown). Its expiry waits for the chain read
   * through then, so the follower reads this reference once at or after it, never on a socket's silence.
   */
  expiresAt: number | null;
};

/** How long a closed session's reference is still polled after it closed (late and overpayments). */
export const CLOSED_GRACE_MS = 24 * 3600_000;

/** The references the Solana followers poll, per network, in memory (case kept: base58). */
export type SolanaReferences = {
  of(network: string): WatchedReference[];
  /** `expiresAt`: the session's, on Weir's clock (see WatchedReference). */
  add(
    address: Pick<SessionAddress, 'network' | 'paymentAddress' | 'merchantAddress' | 'asset' | 'checkoutSessionId'>,
    expiresAt?: number | null,
  ): void;
  /**
   * The session closed at `at`; `now` is Weir's clock. A session that closed past the grace (one
   * loaded or replayed at start) is forgotten at once: the first round would only drop it.
   */
  close(checkoutSessionId: string, at: number, now: number): void;
  /** Whether `watched` closed more than the grace before `now` (Weir's clock): the one rule, at start and in rounds. */
  pastGrace(watched: Pick<WatchedReference, 'closedAt'>, now: number): boolean;
  /** Stop polling a reference (closed long enough ago). */
  forget(network: string, reference: string): void;
};

export function createSolanaReferences(): SolanaReferences {
  const byNetwork = new Map<string, Map<string, WatchedReference>>();
  const bySession = new Map<string, WatchedReference[]>();
  const pastGrace = (watched: Pick<WatchedReference, 'closedAt'>, now: number) =>
    watched.closedAt !== null && now - watched.closedAt > CLOSED_GRACE_MS;
  const store: SolanaReferences = {
    of: (network) => [...(byNetwork.get(network)?.values() ?? [])],
    add(address, expiresAt = null) {
      const references = byNetwork.get(address.network) ?? new Map<string, WatchedReference>();
      byNetwork.set(address.network, references);
      const known = references.get(address.paymentAddress);
      if (known) {
        if (!known.mints.includes(address.asset.address)) known.mints.push(address.asset.address);
        return;
      }
      const watched: WatchedReference = {
        reference: address.paymentAddress as Address,
        network: address.network,
        checkoutSessionId: address.checkoutSessionId,
        recipient: address.merchantAddress as Address,
        mints: [address.asset.address],
        closedAt: null,
        expiresAt,
      };
      references.set(address.paymentAddress, watched);
      bySession.set(address.checkoutSessionId, [...(bySession.get(address.checkoutSessionId) ?? []), watched]);
    },
    close(checkoutSessionId, at, now) {
      for (const watched of bySession.get(checkoutSessionId) ?? []) {
        watched.closedAt ??= at;
        if (pastGrace(watched, now)) store.forget(watched.network, watched.reference);
      }
    },
    pastGrace,
    forget(network, reference) {
      const watched = byNetwork.get(network)?.get(reference);
      if (!watched) return;
      byNetwork.get(network)?.delete(reference);
      const left = (bySession.get(watched.checkoutSessionId) ?? []).filter((w) => w !== watched);
      if (left.length === 0) bySession.delete(watched.checkoutSessionId);
      else bySession.set(watched.checkoutSessionId, left);
    },
  };
  return store;
}
