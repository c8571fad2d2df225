import { createHash } from 'node:crypto';
import type { Address, Hex } from 'viem';
import { getAddress } from 'viem/utils';
// viem/utils, not the viem root, which loads all of viem: see src/shared/evm-address.ts.

/*
 * Tron addresses (Tron developer docs, "Accounts and keys" and "Encoding addresses and data"):
 * 21 bytes, the version byte 0x41 followed by the same 20 bytes an EVM address has (the last 20
 * bytes of keccak256 of the public key). Shown to people in Base58Check: base58 of
 * (21 bytes ‖ first 4 bytes of sha256(sha256(21 bytes))), 34 characters starting with T. Weir
 * keeps the T… form everywhere and converts at the rail's edge only: the TVM and the node's
 * eth_ JSON-RPC use the 20 bytes (0x…), the node's HTTP API the 21 bytes (41…).
 */

/** The version byte of every Tron address on mainnet, Nile and Shasta. */
export const TRON_ADDRESS_PREFIX = 0x41;

/** A Tron address in Base58Check, e.g. `TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t`. */
export type TronAddress = string & { readonly __tronAddress: true };

/** The 21-byte form, `0x41` then the 20 bytes, lowercase. */
export type TronHexAddress = `0x41${string}`;

/** A string is not a Tron address; `reason` completes "<field> …" for a 400. */
export class TronAddressError extends Error {
  override name = 'TronAddressError';
  constructor(
    readonly value: string,
    readonly reason: string,
  ) {
    super(`${JSON.stringify(value)} ${reason}`);
  }
}

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const ALPHABET_INDEX = new Map([...ALPHABET].map((char, index) => [char, BigInt(index)]));
const BASE = 58n;
const PAYLOAD_BYTES = 21;
const CHECKSUM_BYTES = 4;
const EVM_HEX = /^0x[0-9a-fA-F]{40}$/;
const TRON_HEX = /^(?:0x)?41[0-9a-fA-F]{40}$/;

/** Base58 (Bitcoin alphabet) of `bytes`; each leading zero byte is a leading `1`. */
export function base58Encode(bytes: Uint8Array): string {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  let out = '';
  while (value > 0n) {
    out = ALPHABET[Number(value % BASE)] + out;
    value /= BASE;
  }
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  return '1'.repeat(zeros) + out;
}

/** The bytes of a base58 string, or the first character outside the alphabet. */
export function base58Decode(text: string): Uint8Array | { badCharacter: string } {
  let value = 0n;
  for (const char of text) {
    const digit = ALPHABET_INDEX.get(char);
    if (digit === undefined) return { badCharacter: char };
    value = value * BASE + digit;
  }
  const bytes: number[] = [];
  while (value > 0n) {
    bytes.unshift(Number(value & 0xffn));
    value >>= 8n;
  }
  let zeros = 0;
  while (zeros < text.length && text[zeros] === '1') zeros++;
  return Uint8Array.from([...new Array<number>(zeros).fill(0), ...bytes]);
}

/** The first 4 bytes of sha256(sha256(payload)): Base58Check's checksum. */
function checksumOf(payload: Uint8Array): Uint8Array {
  const once = createHash('sha256').update(payload).digest();
  return createHash('sha256').update(once).digest().subarray(0, CHECKSUM_BYTES);
}

/** The 21 bytes of a Base58Check Tron address, or why it is not one. */
function decodeTron(value: string): Uint8Array | string {
  if (value.length === 0) return 'is empty; expected a Tron address (34 characters starting with T)';
  const decoded = base58Decode(value);
  if (!(decoded instanceof Uint8Array)) {
    const hint = EVM_HEX.test(value) || TRON_HEX.test(value) ? ' (a hex address: give its T… form)' : '';
    return `contains ${JSON.stringify(decoded.badCharacter)}, which is not a base58 character${hint}; expected a Tron address (34 characters starting with T)`;
  }
  if (decoded.length !== PAYLOAD_BYTES + CHECKSUM_BYTES)
    return `decodes to ${decoded.length} bytes, not 25; expected a Tron address (34 characters starting with T)`;
  const payload = decoded.subarray(0, PAYLOAD_BYTES);
  if (payload[0] !== TRON_ADDRESS_PREFIX)
    return `has version byte 0x${payload[0]?.toString(16).padStart(2, '0')}, not 0x41: it is not a Tron address`;
  const expected = checksumOf(payload);
  if (!decoded.subarray(PAYLOAD_BYTES).every((byte, index) => byte === expected[index]))
    return 'fails its Base58Check checksum: a character is mistyped or missing';
  return payload;
}

/** Why `value` is not a Tron address in Base58Check (T…), or null when it is one. */
export function tronAddressProblem(value: string): string | null {
  const decoded = decodeTron(value);
  return typeof decoded === 'string' ? decoded : null;
}

/** The 20 bytes of the zero address in its Tron form: funds sent there are burnt. */
const ZERO_TRON_ADDRESS = 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb';

/**
 * Why `value` cannot be a merchant's Tron wallet, or null when it can: it must be a valid T…
 * address and not the zero address. Whether it holds a contract needs the chain (the rail's job).
 */
export function tronWalletAddressProblem(value: string): string | null {
  const problem = tronAddressProblem(value);
  if (problem !== null) return problem;
  if (value === ZERO_TRON_ADDRESS) return 'is the zero address: funds sent there are burnt; use the merchant wallet';
  return null;
}

/** `value` as a checked Tron address; throws {@link TronAddressError} with the reason. */
export function parseTronAddress(value: string): TronAddress {
  const problem = tronAddressProblem(value);
  if (problem !== null) throw new TronAddressError(value, problem);
  return value as TronAddress;
}

/** The T… form of 21 bytes (0x41 ‖ 20 bytes). */
function encodeTron(payload: Uint8Array): TronAddress {
  const checksum = checksumOf(payload);
  const full = new Uint8Array(PAYLOAD_BYTES + CHECKSUM_BYTES);
  full.set(payload);
  full.set(checksum, PAYLOAD_BYTES);
  return base58Encode(full) as TronAddress;
}

/** The 21-byte hex form (`0x41…`, lowercase) of a T… address. Throws {@link TronAddressError}. */
export function tronToHex(address: string): TronHexAddress {
  const decoded = decodeTron(address);
  if (typeof decoded === 'string') throw new TronAddressError(address, decoded);
  return `0x${Buffer.from(decoded).toString('hex')}` as TronHexAddress;
}

/** The 20-byte EVM form (EIP-55 checksummed) of a T… address: what the TVM and eth_ JSON-RPC use. */
export function tronToEvm(address: string): Address {
  return getAddress(`0x${tronToHex(address).slice(4)}`);
}

/** The T… form of a 21-byte hex address (`41…` or `0x41…`, any case). Throws {@link TronAddressError}. */
export function hexToTron(hex: string): TronAddress {
  if (!TRON_HEX.test(hex))
    throw new TronAddressError(hex, 'is not a 21-byte Tron hex address (41 followed by 40 hex digits)');
  return encodeTron(Buffer.from(hex.replace(/^0x/, ''), 'hex'));
}

/** The T… form of a 20-byte EVM address (`0x…`, any case: the eth_ JSON-RPC answers lowercase). */
export function evmToTron(address: string): TronAddress {
  if (!EVM_HEX.test(address))
    throw new TronAddressError(address, 'is not a 20-byte hex address (0x followed by 40 hex digits)');
  return hexToTron(`41${address.slice(2)}`);
}

/** The 20 bytes of a Tron address (T…, 41…, 0x41… or 0x… 20 bytes) as hex: for hashing and ABI encoding. */
export function tronAddressBytes(address: string): Hex {
  if (EVM_HEX.test(address)) return address.toLowerCase() as Hex;
  if (TRON_HEX.test(address)) return `0x${address.replace(/^0x/, '').slice(2).toLowerCase()}`;
  return `0x${tronToHex(address).slice(4)}`;
}
