/*
 * Energy and bandwidth of a Tron sweep, and the TRX it burns (developers.tron.network, "Resource
 * Model"). A smart-contract call consumes energy (about what the EVM would charge in gas) and
 * bandwidth (one point per byte of the transaction). Energy comes first from the account's own
 * (staked, or delegated by a rental provider); what is missing is burnt at the chain's energy price
 * (`getEnergyFee`, sun per unit). Bandwidth is all or nothing: the transaction's bytes come from
 * the staked bandwidth, else the free daily allowance (600), else they are all burnt at
 * `getTransactionFee` (sun per byte). All amounts are integers: sun, energy units, bytes.
 */

/** Where the sweeper's energy comes from. `burn`: TRX is burnt for it (the default). `staked`: the sweeper's own stake. `rented`: delegated by a provider before each sweep. */
export type TronEnergySource = 'burn' | 'staked' | 'rented';

/** With `staked`: what a sweep that needs more energy than is available does: `wait` for it to regenerate, or `burn` TRX for the rest. */
export type TronEnergyWhenShort = 'wait' | 'burn';

/**
 * Energy of a TRC-20 `transfer` (Tron USDT's measured figures, rounded up): a recipient that
 * already holds the token costs one storage write, one that does not a new slot, about twice.
 */
export const TRC20_TRANSFER_ENERGY = { intoHolder: 65_000n, intoNonHolder: 131_000n } as const;

/**
 * What a forwarder adds around its transfers: the factory's loop, the forwarder's balance reads
 * and event (FORWARDER_CALL_ENERGY), and, for one not deployed yet, the EIP-1167 clone's CREATE2
 * and initialize (FORWARDER_DEPLOY_ENERGY). Measured as gas on the local chain, rounded up.
 */
export const FORWARDER_CALL_ENERGY = 15_000n;
export const FORWARDER_DEPLOY_ENERGY = 70_000n;
/** Moving TRX from a forwarder to its merchant (a CALL with value, to an account that exists). */
export const TRX_FLUSH_ENERGY = 10_000n;

/**
 * Bytes of a TriggerSmartContract transaction besides its call data: raw_data (ref block, expiry,
 * owner and contract addresses, fee limit, timestamp), the 65-byte signature, and the 64 bytes
 * java-tron adds for the result. A USDT transfer (68 bytes of call data) takes about 345.
 */
export const TRIGGER_TRANSACTION_OVERHEAD_BYTES = 280n;

/** One deposit in a sweep, as the energy estimate sees it. */
export type SweepDepositShape = {
  /** The forwarder is already deployed (swept before). */
  deployed: boolean;
  /** Per token swept: whether the merchant already holds some. */
  tokens: { merchantHolds: boolean }[];
  native: boolean;
};

/** An estimate of a sweep's energy from its shape, for a node that does not answer eth_estimateGas. */
export function estimateSweepEnergy(deposits: readonly SweepDepositShape[]): bigint {
  let energy = 0n;
  for (const deposit of deposits) {
    energy += FORWARDER_CALL_ENERGY;
    if (!deposit.deployed) energy += FORWARDER_DEPLOY_ENERGY;
    if (deposit.native) energy += TRX_FLUSH_ENERGY;
    for (const token of deposit.tokens)
      energy += token.merchantHolds ? TRC20_TRANSFER_ENERGY.intoHolder : TRC20_TRANSFER_ENERGY.intoNonHolder;
  }
  return energy;
}

/** Bandwidth (bytes) of a contract call whose call data is `callDataBytes` long. */
export function tronBandwidthOf(callDataBytes: number): bigint {
  if (!Number.isSafeInteger(callDataBytes) || callDataBytes < 0)
    throw new RangeError(`callDataBytes must be a non-negative integer, got ${callDataBytes}`);
  return BigInt(callDataBytes) + TRIGGER_TRANSACTION_OVERHEAD_BYTES;
}

/** An account's resources available now, as `wallet/getaccountresource` gives them (limits minus used). */
export type TronAccountResources = {
  /** Energy from the account's stake and delegations to it. */
  energy: bigint;
  /** Bandwidth from the account's stake. */
  stakedBandwidth: bigint;
  /** What is left of the free daily bandwidth. */
  freeBandwidth: bigint;
};

/** The chain's prices (`wallet/getchainparameters`): sun per unit of energy and per byte of bandwidth. */
export type TronResourcePrices = { energySun: bigint; bandwidthSun: bigint };

/** What a sweep consumed and the TRX it burnt (sun). */
export type TronSweepFee = {
  energyUsed: bigint;
  bandwidthUsed: bigint;
  /** Energy not covered by the account's own, burnt. */
  energyBurnt: bigint;
  /** Bytes burnt for (all of the transaction's, or none). */
  bandwidthBurnt: bigint;
  trxBurnt: bigint;
};

/** The TRX a transaction burns, given what it used and what the account had before it. */
export function tronSweepFee(input: {
  energyUsed: bigint;
  bandwidthUsed: bigint;
  available: TronAccountResources;
  prices: TronResourcePrices;
}): TronSweepFee {
  const { energyUsed, bandwidthUsed, available, prices } = input;
  if (energyUsed < 0n || bandwidthUsed < 0n) throw new RangeError('energy and bandwidth used cannot be negative');
  const energyBurnt = energyUsed > available.energy ? energyUsed - available.energy : 0n;
  const covered = bandwidthUsed <= available.stakedBandwidth || bandwidthUsed <= available.freeBandwidth;
  const bandwidthBurnt = covered ? 0n : bandwidthUsed;
  return {
    energyUsed,
    bandwidthUsed,
    energyBurnt,
    bandwidthBurnt,
    trxBurnt: energyBurnt * prices.energySun + bandwidthBurnt * prices.bandwidthSun,
  };
}

/** The operator's choice of energy source (config `WEIR_TRON_ENERGY_*`). */
export type TronEnergyPolicy =
  | { source: 'burn' }
  | { source: 'staked'; whenShort: TronEnergyWhenShort }
  | { source: 'rented' };

/** What to do before sending a sweep that needs `needed` energy when the account has `available`. */
export type TronEnergyStep =
  | { action: 'send' }
  /** Not enough staked energy and the operator waits for it: nothing is sent; `short` is missing. */
  | { action: 'wait'; short: bigint }
  /** Rent `energy` (the shortfall) from the provider, then send. */
  | { action: 'rent'; energy: bigint };

export function energyStep(policy: TronEnergyPolicy, needed: bigint, available: bigint): TronEnergyStep {
  const short = needed > available ? needed - available : 0n;
  if (policy.source === 'burn' || short === 0n) return { action: 'send' };
  if (policy.source === 'rented') return { action: 'rent', energy: short };
  return policy.whenShort === 'wait' ? { action: 'wait', short } : { action: 'send' };
}
