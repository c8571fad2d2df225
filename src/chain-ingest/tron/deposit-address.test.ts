import test from 'ava';
import { utils } from 'tronweb';
import { getContractAddress, hexToBytes, keccak256, type Hex } from 'viem';
import {
  deriveDepositAddress,
  forwarderCloneInitCode,
  forwarderCreate2Salt,
  sessionSaltOf,
} from '../evm/contracts/deposit-address.ts';
import { evmToTron, tronToEvm, tronToHex } from './address.ts';
import { TronDepositAddressInputError, tronCreate2Address, tronDepositAddress } from './deposit-address.ts';

/*
 * No Tron document gives a CREATE2 example with concrete numbers (TIP-26 and "TVM vs EVM" state
 * the formula only). So the examples are EIP-1014's own worked examples, recomputed by hand with
 * the TVM's prefix: the hand-built preimage is first checked to reproduce EIP-1014's documented
 * answers with 0xff (so its layout is right), then hashed with 0x41. tronweb's own
 * `getCreate2Address` (Tron's SDK, a separate implementation) must agree.
 */

/** The 85-byte preimage TIP-26 describes, assembled byte by byte. */
function preimage(prefix: number, deployer: Hex, salt: Hex, initCode: Hex): Uint8Array {
  const out = new Uint8Array(85);
  out[0] = prefix;
  out.set(hexToBytes(deployer), 1);
  out.set(hexToBytes(salt), 21);
  out.set(hexToBytes(keccak256(initCode)), 53);
  return out;
}

const lastTwentyBytes = (digest: Hex): Hex => `0x${digest.slice(-40)}`;

// EIP-1014, "Examples" 0, 2 and 5 (address, salt, init_code → documented EVM result).
const eip1014: [string, Hex, Hex, Hex, string][] = [
  [
    'example 0',
    '0x0000000000000000000000000000000000000000',
    '0x0000000000000000000000000000000000000000000000000000000000000000',
    '0x00',
    '0x4D1A2e2bB4F88F0250f26Ffff098B0b30B26BF38',
  ],
  [
    'example 2',
    '0xdeadbeef00000000000000000000000000000000',
    '0x000000000000000000000000feed000000000000000000000000000000000000',
    '0x00',
    '0xD04116cDd17beBE565EB2422F2497E06cC1C9833',
  ],
  [
    'example 5',
    '0x00000000000000000000000000000000deadbeef',
    '0x00000000000000000000000000000000000000000000000000000000cafebabe',
    '0xdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeef',
    '0x1d8bfDC5D46DC4f61D6b6115972536eBE6A8854C',
  ],
];

// The TVM answers for the same inputs, computed with the hand-built 0x41 preimage and pinned.
const tvm: Record<string, string> = {
  'example 0': 'TKEerhofQTEicnAHg9HWdsMzm1mA6dBDwM',
  'example 2': 'TFjCm4KNXvmtWqnAXgnxjciJ6neMYBJPKm',
};

for (const [name, deployer, salt, initCode, evmResult] of eip1014) {
  test(`EIP-1014 ${name} with the TVM's 0x41 prefix`, (t) => {
    // The hand-built layout reproduces EIP-1014's documented answer with 0xff ...
    t.is<string, string>(lastTwentyBytes(keccak256(preimage(0xff, deployer, salt, initCode))), evmResult.toLowerCase());
    t.is<string, string>(
      getContractAddress({ opcode: 'CREATE2', from: deployer, salt, bytecode: initCode }),
      evmResult,
    );
    // ... and with 0x41 gives the TVM's address, which differs.
    const expected = evmToTron(lastTwentyBytes(keccak256(preimage(0x41, deployer, salt, initCode))));
    const derived = tronCreate2Address(deployer, salt, keccak256(initCode));
    t.is<string, string>(derived, expected);
    t.not(tronToEvm(derived), evmResult);
    // Deployer as T… or as 21-byte hex: the same address.
    t.is<string, string>(tronCreate2Address(evmToTron(deployer), salt, keccak256(initCode)), expected);
    t.is<string, string>(tronCreate2Address(tronToHex(evmToTron(deployer)), salt, keccak256(initCode)), expected);
    // tronweb hashes the deployer's 21 bytes (0x41 first), as TIP-26 words it: the same preimage.
    t.is(utils.address.getCreate2Address({ from: evmToTron(deployer), salt, initCode }), expected);
    if (tvm[name] !== undefined) t.is<string, string>(derived, tvm[name]);
  });
}

// The EVM rail's pinned session (evm/contracts/deposit-address.test.ts), on the TVM.
const sessionId = '0b9e4a8c-1f6d-4c2a-9e57-3d1b2f8a6c40';
const evmFactory = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const evmMerchant = '0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc';
const evmImplementation = '0xa16E02E87b7454126E5E10d957A927A7F5B5d2be';
const factory = evmToTron(evmFactory);
const merchant = evmToTron(evmMerchant);
const pinned = 'TRaeduMtpyLgekTKzSWrB4XnGGehnm3mBU';

test('a session deposit address on the TVM takes the EVM inputs and the 0x41 prefix', (t) => {
  const derived = tronDepositAddress({
    factoryAddress: factory,
    implementationAddress: evmImplementation,
    merchantAddress: merchant,
    sessionId,
  });
  t.is<string, string>(derived, pinned);
  const salt = forwarderCreate2Salt(evmMerchant, sessionSaltOf(sessionId));
  const initCode = forwarderCloneInitCode(evmImplementation);
  t.is(utils.address.getCreate2Address({ from: factory, salt, initCode }), pinned);
  t.is<string, string>(evmToTron(lastTwentyBytes(keccak256(preimage(0x41, evmFactory, salt, initCode)))), pinned);
  // The EVM derivation of the same session (0xff) is another address.
  const onEvm = deriveDepositAddress({ factoryAddress: evmFactory, merchantAddress: evmMerchant, sessionId });
  t.not(tronToEvm(derived), onEvm);
  t.is(evmToTron(lastTwentyBytes(keccak256(preimage(0xff, evmFactory, salt, initCode)))), evmToTron(onEvm));
  // The implementation may be given in either form; the session by its salt.
  t.is<string, string>(
    tronDepositAddress({
      factoryAddress: factory,
      implementationAddress: evmToTron(evmImplementation),
      merchantAddress: merchant,
      sessionSalt: sessionSaltOf(sessionId),
    }),
    pinned,
  );
});

test('another merchant or session gives another address', (t) => {
  const base = { factoryAddress: factory, implementationAddress: evmImplementation, merchantAddress: merchant };
  const other = evmToTron('0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
  t.not(tronDepositAddress({ ...base, merchantAddress: other, sessionId }), pinned);
  t.not(tronDepositAddress({ ...base, sessionId: '0b9e4a8c-1f6d-4c2a-9e57-3d1b2f8a6c41' }), pinned);
});

const refusals: [string, Partial<Parameters<typeof tronDepositAddress>[0]>, string, RegExp][] = [
  ['a merchant in hex', { merchantAddress: evmMerchant }, 'merchantAddress', /not a base58 character/],
  ['a mistyped merchant', { merchantAddress: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u' }, 'merchantAddress', /checksum/],
  ['the zero merchant', { merchantAddress: 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb' }, 'merchantAddress', /zero address/],
  ['a mistyped factory', { factoryAddress: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u' }, 'factoryAddress', /checksum/],
  ['a bad implementation', { implementationAddress: 'nope' }, 'implementationAddress', /decodes to|base58/],
  ['a session id that is no uuid', { sessionId: 'abc' }, 'sessionId', /^is not a uuid/],
];

for (const [what, change, field, reason] of refusals) {
  test(`${what} is refused naming ${field}`, (t) => {
    const error = t.throws(
      () =>
        tronDepositAddress({
          factoryAddress: factory,
          implementationAddress: evmImplementation,
          merchantAddress: merchant,
          sessionId,
          ...change,
        } as Parameters<typeof tronDepositAddress>[0]),
      { instanceOf: TronDepositAddressInputError },
    );
    t.is<string, string>(error.field, field);
    t.regex(error.reason, reason);
  });
}

test('tronCreate2Address refuses a salt or hash that is not 32 bytes', (t) => {
  t.throws(() => tronCreate2Address(factory, '0x00', keccak256('0x00')), { message: /salt "0x00": must be 32 bytes/ });
  t.throws(() => tronCreate2Address(factory, keccak256('0x00'), '0x12'), { message: /initCodeHash/ });
});
