import { concat, keccak256, type Hex } from 'viem';
import { DepositAddressInputError } from '../evm/contracts/errors.ts';
import { forwarderCloneInitCode, forwarderCreate2Salt, sessionSaltOf } from '../evm/contracts/deposit-address.ts';
import {
  hexToTron,
  tronAddressBytes,
  tronAddressProblem,
  tronWalletAddressProblem,
  type TronAddress,
} from './address.ts';

/*
 * CREATE2 on the TVM (TIP-26; Tron docs "TVM vs EVM"): the new address is
 *   0x41 ‖ keccak256(0x41 ‖ deployer(20 bytes) ‖ salt ‖ keccak256(init_code))[12:]
 * where the EVM (EIP-1014) hashes 0xff. TIP-26 writes it as the deployer's 21-byte address, whose
 * first byte is the 0x41 version byte: an 85-byte preimage either way. Everything else of the
 * EVM scheme (`deposit-address.ts` under evm/) carries over: the salt binds the merchant, the
 * init code is the EIP-1167 clone of the Forwarder.
 *
 * What does not carry over: CREATE on the TVM derives from the transaction id and an internal
 * nonce (keccak256(txId ‖ nonce)), not from the creator's nonce, so the Forwarder implementation
 * that the factory's constructor deploys cannot be derived from the factory's address. It is
 * read once from `factory.implementation()` on chain and configured with the factory.
 */

const bytes32Pattern = /^0x[0-9a-fA-F]{64}$/;
const hexAddressPattern = /^(?:0x|0x41|41)[0-9a-fA-F]{40}$/;

/** An input to the Tron deposit-address derivation is malformed; `field` names it. */
export class TronDepositAddressInputError extends Error {
  override readonly name = 'TronDepositAddressInputError';
  constructor(
    readonly field:
      | 'factoryAddress'
      | 'implementationAddress'
      | 'merchantAddress'
      | 'sessionId'
      | 'sessionSalt'
      | 'salt'
      | 'initCodeHash',
    readonly value: string,
    readonly reason: string,
  ) {
    super(`${field} ${JSON.stringify(value)}: ${reason}`);
  }
}

/** `value` as 20 bytes of hex when it is a T… address or a 20- or 21-byte hex one; else a field error. */
function addressBytes(field: 'factoryAddress' | 'implementationAddress', value: string): Hex {
  if (hexAddressPattern.test(value)) return tronAddressBytes(value);
  const problem = tronAddressProblem(value);
  if (problem !== null) throw new TronDepositAddressInputError(field, value, problem);
  return tronAddressBytes(value);
}

/**
 * The TVM's CREATE2 address of (`deployer`, `salt`, keccak256 of the init code). `deployer` is a
 * T… address or its hex (0x + 20 bytes, or 41 + 20 bytes).
 */
export function tronCreate2Address(deployer: string, salt: Hex, initCodeHash: Hex): TronAddress {
  const from = addressBytes('factoryAddress', deployer);
  if (!bytes32Pattern.test(salt)) throw new TronDepositAddressInputError('salt', salt, 'must be 32 bytes of hex');
  if (!bytes32Pattern.test(initCodeHash))
    throw new TronDepositAddressInputError('initCodeHash', initCodeHash, 'must be 32 bytes of hex');
  const digest = keccak256(concat(['0x41', from, salt, initCodeHash]));
  return hexToTron(`41${digest.slice(-40)}`);
}

export type TronDepositAddressParameters = {
  /** The ForwarderFactory on the network (T…). */
  factoryAddress: string;
  /** `factory.implementation()`, read from the chain once (T… or 0x… 20 bytes). */
  implementationAddress: string;
  /** The merchant's Tron wallet (T…) the address forwards to. */
  merchantAddress: string;
} & ({ sessionId: string; sessionSalt?: never } | { sessionSalt: Hex; sessionId?: never });

/**
 * A checkout session's Tron deposit address: the TVM CREATE2 address of the session's forwarder,
 * from the same inputs as the EVM derivation (factory, merchant, session) plus the implementation
 * the factory deployed. Pure and offline. Throws {@link TronDepositAddressInputError} naming the field.
 */
export function tronDepositAddress(parameters: TronDepositAddressParameters): TronAddress {
  const factory = addressBytes('factoryAddress', parameters.factoryAddress);
  // The merchant is given in T… form only: that is how Weir's API takes a Tron wallet.
  const merchantProblem = tronWalletAddressProblem(parameters.merchantAddress);
  if (merchantProblem !== null)
    throw new TronDepositAddressInputError('merchantAddress', parameters.merchantAddress, merchantProblem);
  const implementation = addressBytes('implementationAddress', parameters.implementationAddress);
  try {
    const sessionSalt =
      parameters.sessionId !== undefined ? sessionSaltOf(parameters.sessionId) : parameters.sessionSalt;
    // The TVM's ABI encodes an address as its 20 bytes, so the salt is the EVM one for the same wallet.
    const salt = forwarderCreate2Salt(tronAddressBytes(parameters.merchantAddress), sessionSalt);
    return tronCreate2Address(factory, salt, keccak256(forwarderCloneInitCode(implementation)));
  } catch (error) {
    if (error instanceof DepositAddressInputError && (error.field === 'sessionId' || error.field === 'sessionSalt'))
      throw new TronDepositAddressInputError(
        error.field,
        error.value,
        error.message.slice(`${error.field} ${JSON.stringify(error.value)}: `.length),
      );
    throw error;
  }
}
