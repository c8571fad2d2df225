import test from 'ava';
import { hexToBytes, keccak256, toHex, type Hex } from 'viem';
import { ERC20_TRANSFER_TOPIC } from './get-transfer-logs.ts';
import { bloomMayContain } from './logs-bloom.ts';

/** The bloom of some values, built the way the yellow paper says (independently of bloomMayContain). */
function bloomOf(values: Hex[]): Hex {
  const bloom = new Uint8Array(256);
  for (const value of values) {
    const hash = hexToBytes(keccak256(value));
    for (const pair of [0, 2, 4]) {
      const bit = ((hash[pair]! << 8) | hash[pair + 1]!) & 2047;
      bloom[255 - (bit >> 3)]! |= 1 << (bit & 7);
    }
  }
  return toHex(bloom);
}

const usdc: Hex = '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48';
const dai: Hex = '0x6b175474e89094c44da98b954eedeac495271d0f';

test('a bloom holds the values it was built from, and (almost surely) not others', (t) => {
  const bloom = bloomOf([usdc, ERC20_TRANSFER_TOPIC]);
  t.true(bloomMayContain(bloom, usdc));
  t.true(bloomMayContain(bloom, ERC20_TRANSFER_TOPIC));
  t.false(bloomMayContain(bloom, dai));
  t.false(bloomMayContain(bloomOf([]), usdc));
});

test('a malformed bloom is no reason to skip a block: it may contain anything', (t) => {
  t.true(bloomMayContain('0x00', usdc));
});
