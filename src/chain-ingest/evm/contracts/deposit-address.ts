import {
  encodeAbiParameters,
  getContractAddress,
  isAddress,
  keccak256,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { DepositAddressInputError } from './errors.ts';

/*
 * How a checkout session's EVM deposit address is derived (offline, no RPC), exactly as
 * ForwarderFactory.predictAddress does it on chain:
 *
 *   sessionSalt    = keccak256(uuidBytes)            uuidBytes: the 16 bytes of the session id
 *                                                    (8-4-4-4-12 hex uuid, any case, hyphens
 *                                                    dropped, hex-decoded; NOT its UTF-8 text)
 *   create2Salt    = keccak256(abi.encode(address merchant, bytes32 sessionSalt))   (64 bytes in)
 *   implementation = CREATE address of the factory at nonce 1
 *                    (the Forwarder that the factory's constructor deploys; contracts start at nonce 1)
 *   initCode       = 0x3d602d80600a3d3981f3363d3d373d3d3d363d73 ‖ implementation ‖ 0x5af43d82803e903d91602b57fd5bf3
 *                    (the 55-byte EIP-1167 minimal-proxy creation code)
 *   depositAddress = last 20 bytes of keccak256(0xff ‖ factory ‖ create2Salt ‖ keccak256(initCode))
 *
 * The merchant is inside the CREATE2 salt, and the factory initializes the clone with that same
 * merchant in the deploying transaction, so the address can only ever forward to that wallet.
 */

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const bytes32Pattern = /^0x[0-9a-fA-F]{64}$/;
const eip1167Prefix = '3d602d80600a3d3981f3363d3d373d3d3d363d73';
const eip1167Suffix = '5af43d82803e903d91602b57fd5bf3';

/** The session salt of a checkout session: keccak256 of the 16 bytes of its uuid. */
export function sessionSaltOf(sessionId: string): Hex {
  if (!uuidPattern.test(sessionId)) {
    throw new DepositAddressInputError(
      'sessionId',
      sessionId,
      'is not a uuid (8-4-4-4-12 hex digits); pass the checkout session id',
    );
  }
  return keccak256(`0x${sessionId.replaceAll('-', '').toLowerCase()}`);
}

/** The Forwarder implementation a factory deployed in its constructor: its CREATE address at nonce 1. */
export function forwarderImplementationAddress(factoryAddress: Address): Address {
  return getContractAddress({ opcode: 'CREATE', from: checkedAddress('factoryAddress', factoryAddress), nonce: 1n });
}

/** The 55-byte EIP-1167 creation code of a clone of `implementation`. */
export function forwarderCloneInitCode(implementation: Address): Hex {
  return `0x${eip1167Prefix}${implementation.slice(2).toLowerCase()}${eip1167Suffix}`;
}

/** The CREATE2 salt the factory uses: keccak256(abi.encode(merchant, sessionSalt)). */
export function forwarderCreate2Salt(merchantAddress: Address, sessionSalt: Hex): Hex {
  if (!bytes32Pattern.test(sessionSalt)) {
    throw new DepositAddressInputError('sessionSalt', sessionSalt, 'must be 32 bytes of hex (0x + 64 digits)');
  }
  return keccak256(
    encodeAbiParameters([{ type: 'address' }, { type: 'bytes32' }], [checkedMerchant(merchantAddress), sessionSalt]),
  );
}

export type DeriveDepositAddressParameters = {
  /** The ForwarderFactory on the session's network. */
  factoryAddress: Address;
  /** The merchant wallet the address forwards to. Lower or upper case, or correctly checksummed. */
  merchantAddress: string;
} & ({ sessionId: string; sessionSalt?: never } | { sessionSalt: Hex; sessionId?: never });

/**
 * The deposit address (checksummed) of a checkout session on a network whose ForwarderFactory is
 * `factoryAddress`: the same as `factory.predictAddress(merchant, sessionSaltOf(sessionId))`.
 * Pure and offline. Throws {@link DepositAddressInputError} on a malformed input.
 */
export function deriveDepositAddress(parameters: DeriveDepositAddressParameters): Address {
  const factory = checkedAddress('factoryAddress', parameters.factoryAddress);
  const merchant = checkedMerchant(parameters.merchantAddress);
  const sessionSalt = parameters.sessionId !== undefined ? sessionSaltOf(parameters.sessionId) : parameters.sessionSalt;
  return getContractAddress({
    opcode: 'CREATE2',
    from: factory,
    salt: forwarderCreate2Salt(merchant, sessionSalt),
    bytecodeHash: keccak256(forwarderCloneInitCode(forwarderImplementationAddress(factory))),
  });
}

function checkedAddress(field: 'factoryAddress' | 'merchantAddress', raw: string): Address {
  // All upper case carries no checksum, like all lower case: the API takes both for a wallet, so both derive.
  const value = /^0x[0-9A-F]{40}$/.test(raw) ? raw.toLowerCase() : raw;
  if (!isAddress(value)) {
    throw new DepositAddressInputError(
      field,
      raw,
      'is not an EVM address (0x + 40 hex digits, in lower or upper case or with a valid EIP-55 checksum)',
    );
  }
  return value;
}

function checkedMerchant(value: string): Address {
  const address = checkedAddress('merchantAddress', value);
  if (address.toLowerCase() === zeroAddress) {
    throw new DepositAddressInputError(
      'merchantAddress',
      value,
      'is the zero address: funds sent there are burnt; use the merchant wallet',
    );
  }
  return address;
}
