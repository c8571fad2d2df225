/**
 * Whether `asset` can pay an amount of `currency`: the one rule by which a session offers assets,
 * an invoice's `paymentMethods.assetIds` are checked (a DAI asset never pays a USDC amount), and an
 * amount's decimals and tax rounding are read from the assets that pay its currency. Here, not in
 * chain-ingest, because src/shared (tax) and the machines that use it import nothing beyond it.
 */
export const assetPaysCurrency = (asset: { readonly currency: string }, currency: string): boolean =>
  asset.currency === currency;
