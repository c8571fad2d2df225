import { getAddress } from 'viem';

/** `0x` and 40 hex digits, in any case: the shape of an EVM address, checksum not checked. */
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

/**
 * An address as answers and webhooks show it: an EVM one in its EIP-55 checksum (the log keeps
 * whatever case it was seen in), any other (Tron, Solana: base58) as it is.
 */
export const shownAddress = (address: string): string =>
  EVM_ADDRESS.test(address) ? getAddress(address.toLowerCase()) : address;
