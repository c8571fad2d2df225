import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { evmToTron, type TronAddress } from './address.ts';

/*
 * Signing as a Tron payer, offline (for tests and the injected TronLink-like provider): a Tron key
 * is a secp256k1 key like an Ethereum one, and its address the same 20 bytes with the 0x41
 * version byte (Tron docs, "Accounts and keys"). A transaction is signed over its `txID`, which
 * is sha256 of the protobuf `raw_data` (Tron docs, "Transactions"); the signature is r ‖ s ‖ v with
 * v = 27 + recovery id, 65 bytes in hex without 0x, as java-tron and TronLink write it.
 */

/** A Tron transaction as the node's HTTP API and TronLink hand it over for signing. */
export type UnsignedTronTransaction = {
  readonly txID: string;
  /** The protobuf `raw_data` in hex; its sha256 must be `txID`. */
  readonly raw_data_hex: string;
  readonly raw_data?: unknown;
  readonly visible?: boolean;
};

export type SignedTronTransaction = UnsignedTronTransaction & { readonly signature: readonly string[] };

/** The signer's refusal: the transaction's `txID` is not the hash of what it claims to carry. */
export class TronSigningError extends Error {
  override name = 'TronSigningError';
}

export type TronPayerSigner = {
  readonly address: TronAddress;
  /** A 32-byte hash (hex, with or without 0x) signed as is: r ‖ s ‖ v, 130 lowercase hex digits, no 0x. */
  signHash(hash: string): string;
  /** The transaction with its signature appended, after checking txID = sha256(raw_data_hex). */
  signTransaction(transaction: UnsignedTronTransaction): SignedTronTransaction;
  /** TronWeb's `signMessageV2`: keccak256("\x19TRON Signed Message:\n" ‖ length ‖ message), 0x-hex. */
  signMessage(message: string): Hex;
};

const hash32 = /^(?:0x)?[0-9a-fA-F]{64}$/;

type TronUtils = typeof import('tronweb')['utils'];
let loaded: TronUtils | null = null;
/** tronweb takes over half a second to load: it is loaded at the first signature, not on every start. */
const tronUtils = (): TronUtils => {
  loaded ??= (createRequire(import.meta.url)('tronweb') as typeof import('tronweb')).utils;
  return loaded;
};

/** A payer that signs with `privateKey` (32 bytes of hex, with or without 0x). */
export function tronPayerSigner(privateKey: string): TronPayerSigner {
  const key = privateKey.replace(/^0x/, '');
  if (!hash32.test(key)) throw new TronSigningError('the private key must be 32 bytes of hex');
  const address = evmToTron(privateKeyToAccount(`0x${key}`).address);
  const signHash = (hash: string): string => {
    if (!hash32.test(hash))
      throw new TronSigningError(`a hash to sign is 32 bytes of hex, got ${JSON.stringify(hash)}`);
    const utils = tronUtils();
    const bytes = (hex: string) => utils.code.hexStr2byteArray(hex.replace(/^0x/, ''));
    // tronweb writes v in upper case ("1C"); lower case throughout, as the node answers.
    return utils.crypto.ECKeySign(bytes(hash), bytes(key)).toLowerCase();
  };
  return {
    address,
    signHash,
    signTransaction(transaction) {
      const id = transaction.txID.replace(/^0x/, '').toLowerCase();
      const raw = transaction.raw_data_hex.replace(/^0x/, '');
      if (!/^(?:[0-9a-fA-F]{2})+$/.test(raw)) throw new TronSigningError('raw_data_hex is not hex');
      const digest = createHash('sha256').update(Buffer.from(raw, 'hex')).digest('hex');
      if (digest !== id)
        throw new TronSigningError(
          `txID ${transaction.txID} is not sha256(raw_data_hex) (${digest}): refusing to sign`,
        );
      return { ...transaction, signature: [signHash(id)] };
    },
    signMessage(message) {
      return tronUtils().message.signMessage(message, key) as Hex;
    },
  };
}
