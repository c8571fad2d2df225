import type { RailNetwork } from '../rail.ts';

/** Below this value an address is a precompile or a system contract somewhere (see `evmUnpayableAddress`). */
const SYSTEM_ADDRESS_LIMIT = 0x10000n;
/** The OP Stack predeploy namespace, 0x4200…0000 to 0x4200…07ff (OP Stack specs, "Predeploys"). */
const OP_PREDEPLOY_FIRST = 0x4200000000000000000000000000000000000000n;
const OP_PREDEPLOY_LAST = 0x42000000000000000000000000000000000007ffn;

/** An address of Weir's own on a network, with what it is. */
export type EvmMachinery = { address: string; what: string };

/**
 * Why an EVM wallet address (0x and 40 hex digits) cannot receive a merchant's payouts on
 * `network`, or null when it can. Funds sent there would be lost: the zero address; an address
 * below 0x10000 or in the OP Stack predeploy range (precompiles such as ecrecover at 0x01 and
 * P-256 at 0x100, Arbitrum's ArbOS precompiles, BSC's and Polygon's system contracts at 0x1000
 * and up, the 0x…dEaD burn address: no key can be found for any of them); one of the network's
 * token contracts (a token sent to its own contract stays there). Or it is Weir's own machinery
 * on that network (`machinery`: the forwarder factory, the Forwarder it clones, the sweeper account).
 */
export function evmUnpayableAddress(input: {
  network: RailNetwork;
  address: string;
  machinery?: readonly EvmMachinery[];
}): string | null {
  const { network, address } = input;
  const value = BigInt(address);
  const lower = address.toLowerCase();
  if (value === 0n) return 'is the zero address: funds sent there are burnt';
  if (value < SYSTEM_ADDRESS_LIMIT)
    return 'is a precompile or system contract address (0x…0001 to 0x…ffff): nobody holds its key, so funds sent there are lost';
  if (value >= OP_PREDEPLOY_FIRST && value <= OP_PREDEPLOY_LAST)
    return 'is in the OP Stack predeploy range (0x4200…0000 to 0x4200…07ff): nobody holds its key, so funds sent there are lost';
  const token = network.assets.find((a) => a.address.toLowerCase() === lower);
  if (token) return `is the ${token.symbol} token contract on ${network.name}: tokens sent to it are lost`;
  const own = input.machinery?.find((m) => m.address.toLowerCase() === lower);
  if (own) return `is ${own.what} on ${network.name}, not a wallet of the merchant`;
  return null;
}
