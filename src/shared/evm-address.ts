import { getAddress } from 'viem';

/** An EVM address as typed: 0x and 40 hex digits, in any case (see `evmChecksumHolds` for the case). */
export const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * Whether an EVM address (already matching EVM_ADDRESS) may be taken as typed: all lower or all
 * upper case carries no checksum, and mixed case must be its EIP-55 checksum. A mixed-case
 * address whose checksum fails is most likely mistyped, and money sent to it would be lost.
 */
export const evmChecksumHolds = (address: string): boolean => {
  const hex = address.slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return true;
  return getAddress(address.toLowerCase()) === address;
};
