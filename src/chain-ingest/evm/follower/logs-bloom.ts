import { hexToBytes, keccak256, type Hex } from 'viem';

/**
 * Whether a block's 2048-bit logs bloom may hold `value` (an emitting address or a topic), per
 * the yellow paper: the three 11-bit slices of keccak256(value) each set one bit. False means
 * surely absent; true may be a false positive.
 */
export function bloomMayContain(bloom: Hex, value: Hex): boolean {
  const bits = hexToBytes(bloom);
  if (bits.length !== 256) return true;
  const hash = hexToBytes(keccak256(value));
  for (let pair = 0; pair < 6; pair += 2) {
    const bit = ((hash[pair]! << 8) | hash[pair + 1]!) & 2047;
    const byte = bits[255 - Math.floor(bit / 8)]!;
    if ((byte & (1 << (bit % 8))) === 0) return false;
  }
  return true;
}
