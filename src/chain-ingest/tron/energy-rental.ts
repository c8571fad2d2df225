/*
 * Renting energy for a sweep: a provider delegates energy to the sweeper account for a fee, so the
 * sweep burns little or no TRX. A port, so any provider fits; Weir ships an HTTP adapter for a
 * provider (or the operator's own bridge to one) at a URL. Proven only against a test double.
 */

/** An energy rental order: `energy` units delegated to `receiver` (T…) on `network`. */
export type EnergyRentalOrder = { network: string; receiver: string; energy: bigint };

/** A filled order: the provider's id for it and what it cost, in sun. */
export type EnergyRentalReceipt = { orderId: string; costSun: bigint };

/** Delegates energy to the sweeper before a sweep; resolves once the delegation is on chain. */
export type EnergyRental = { rent(order: EnergyRentalOrder): Promise<EnergyRentalReceipt> };

/** The provider refused the order or answered something unreadable. */
export class EnergyRentalError extends Error {
  override readonly name = 'EnergyRentalError';
}

/**
 * The HTTP adapter: POST `url` with `{"network","receiver","energy":"<units>"}`; the provider
 * answers 200 with `{"orderId": "...", "costSun": "<integer>"}` once the energy is delegated.
 * Anything else is an {@link EnergyRentalError}.
 */
export function httpEnergyRental(url: string, fetchImpl: typeof fetch = fetch): EnergyRental {
  return {
    async rent(order) {
      const response = await fetchImpl(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ network: order.network, receiver: order.receiver, energy: order.energy.toString() }),
      });
      if (!response.ok) throw new EnergyRentalError(`the energy rental provider answered HTTP ${response.status}`);
      const answer = (await response.json().catch(() => null)) as { orderId?: unknown; costSun?: unknown } | null;
      if (typeof answer?.orderId !== 'string' || typeof answer.costSun !== 'string' || !/^[0-9]+$/.test(answer.costSun))
        throw new EnergyRentalError(
          'the energy rental provider answered without {"orderId": string, "costSun": "<integer>"}',
        );
      return { orderId: answer.orderId, costSun: BigInt(answer.costSun) };
    },
  };
}
