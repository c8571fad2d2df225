import type { CheckoutSessionEvent } from '../../machines/checkout-session.types.ts';
import type { ReadDocument } from '../read-store/read-store.ts';
import { COLLECTIONS, type CheckoutSessionDoc } from './collections.ts';
import type { Projection } from './projection.ts';

export const SWEEPS = 'sweeps';

/** Confirmed money still sitting in a deposit address, per session and network. */
export type SweepDoc = ReadDocument & {
  checkoutSessionId: string;
  organizationId: string;
  environment: string;
  network: string;
  chainId: number;
  depositAddress: string;
  merchantAddress: string;
  /** Token contracts to flush ('native' for the coin). */
  assets: string[];
  /** Confirmed transfers not yet swept. */
  transferIds: string[];
  pending: boolean;
  updatedAt: string;
};

const sweepId = (sessionId: string, network: string) => `${sessionId}:${network}`;

/**
 * What the sweeper must move: a transfer becomes sweepable when it is confirmed, and stops being
 * so when a FundsSwept event covers it (a reverted sweep covers none).
 */
export const sweepsProjection: Projection = {
  name: 'sweeps',
  collections: [SWEEPS],
  categories: ['checkout_session'],
  async apply(event, store) {
    if (!event.streamId.startsWith('checkout_session-')) return;
    const typed = event as unknown as CheckoutSessionEvent;
    if (typed.type !== 'PaymentConfirmed' && typed.type !== 'FundsSwept') return;
    const sessionId = event.streamId.slice('checkout_session-'.length);
    const session = await store.collection<CheckoutSessionDoc>(COLLECTIONS.checkoutSessions).get(sessionId);
    if (!session) return;
    const sweeps = store.collection<SweepDoc>(SWEEPS);
    if (typed.type === 'PaymentConfirmed') {
      const payment = session.payments.find((p) => p.transferId === typed.data.transferId);
      if (!payment) return;
      const address = session.addresses.find((a) => a.network === payment.network && a.paymentAddress.toLowerCase() === payment.toAddress.toLowerCase());
      if (!address) return;
      const id = sweepId(sessionId, payment.network);
      const current = await sweeps.get(id);
      const transferIds = [...new Set([...(current?.transferIds ?? []), payment.transferId])];
      const assets = [...new Set([...(current?.assets ?? []), payment.asset.address])];
      await sweeps.put({
        _id: id, checkoutSessionId: sessionId, organizationId: session.organizationId, environment: session.environment,
        network: payment.network, chainId: payment.chainId, depositAddress: address.paymentAddress, merchantAddress: address.merchantAddress,
        assets, transferIds, pending: true, updatedAt: typed.data.at,
      });
      return;
    }
    const { sweep } = typed.data;
    // A reverted sweep moved nothing: the money still waits, as it did.
    if (sweep.reverted) return;
    const id = sweepId(sessionId, sweep.network);
    const current = await sweeps.get(id);
    if (!current) return;
    const transferIds = current.transferIds.filter((t) => !sweep.transferIds.includes(t));
    await sweeps.put({ ...current, transferIds, pending: transferIds.length > 0, updatedAt: sweep.at });
  },
};
