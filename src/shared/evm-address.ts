import { getAddress } from 'viem/utils';
// From viem/utils, not the viem root: the root loads all of viem (340 modules, seconds through tsx) for weir replay and audit.

/** `0x` and 40 hex digits, in any case: the shape of an EVM address, checksum not checked. */
export const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** EIP-55 forms computed lately, by lowercase address, at most this many (then forgotten at once). */
const CHECKSUMS_KEPT = 10_000;
const checksums = new Map<string, string>();

/**
 * The EIP-55 form of an address given in lowercase. A session's addresses are shown at every
 * render, and viem's own caches still cost a regex and two LRU moves per call.
 */
const checksummed = (lowercase: string): string => {
  const known = checksums.get(lowercase);
  if (known !== undefined) return known;
  const address = getAddress(lowercase);
  if (checksums.size >= CHECKSUMS_KEPT) checksums.clear();
  checksums.set(lowercase, address);
  return address;
};

/**
 * Whether an EVM address (already matching EVM_ADDRESS) may be taken as typed: all lower or all
 * upper case carries no checksum, and mixed case must be its EIP-55 checksum. A mixed-case
 * address whose checksum fails is most likely mistyped, and money sent to it would be lost.
 */
export const evmChecksumHolds = (address: string): boolean => {
  const hex = address.slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return true;
  return checksummed(address.toLowerCase()) === address;
};

/**
 * An address as answers and webhooks show it: an EVM one in its EIP-55 checksum (the log keeps
 * whatever case it was seen in), any other (Tron, Solana: base58) as it is.
 */
export const shownAddress = (address: string): string =>
  EVM_ADDRESS.test(address) ? checksummed(address.toLowerCase()) : address;
