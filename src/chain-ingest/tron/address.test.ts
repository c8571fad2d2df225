import test from 'ava';
import { utils } from 'tronweb';
import {
  base58Decode,
  base58Encode,
  evmToTron,
  hexToTron,
  parseTronAddress,
  TronAddressError,
  tronAddressBytes,
  tronAddressProblem,
  tronToEvm,
  tronToHex,
  tronWalletAddressProblem,
} from './address.ts';

// Documented pairs (Base58Check ⇄ 21-byte hex):
const documented: [string, string, string][] = [
  // developers.tron.network, "Accounts and keys", Address format.
  ['TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL', '0x418840e6c55b9ada326d211d818c34a994aeced808', 'docs: accounts'],
  // developers.tron.network, "Encoding addresses and data", Address formats.
  ['TJRabPrwbZy45sbavfcjinPJC18kjpRTv8', '0x415cbdd86a2fa8dc4bddd8a8f69dba48572eec07fb', 'docs: encoding'],
  // Mainnet USDT, as Tronscan shows it (hex 41a614f8…).
  ['TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', '0x41a614f803b6fd780986a42c78ec9c7f77e6ded13c', 'mainnet USDT'],
];

for (const [base58, hex, where] of documented) {
  test(`${where}: ${base58} ⇄ ${hex} ⇄ its 20-byte EVM form`, (t) => {
    t.is(tronAddressProblem(base58), null);
    t.is<string, string>(tronToHex(base58), hex);
    t.is<string, string>(hexToTron(hex), base58);
    t.is<string, string>(
      hexToTron(hex.slice(2).toUpperCase()),
      base58,
      'the node HTTP API form, 41… without 0x, any case',
    );
    const evm = tronToEvm(base58);
    t.is(evm.toLowerCase(), `0x${hex.slice(4)}`);
    t.is<string, string>(evmToTron(evm), base58);
    t.is<string, string>(evmToTron(evm.toLowerCase()), base58, 'the eth_ JSON-RPC answers lowercase');
    t.is(tronAddressBytes(base58), `0x${hex.slice(4)}`);
    t.is(tronAddressBytes(hex), `0x${hex.slice(4)}`);
    // tronweb, Tron's own SDK, agrees both ways.
    t.is(`0x${utils.address.toHex(base58)}`, hex);
    t.is(utils.address.fromHex(hex.slice(2)), base58);
  });
}

test('round trips over random 20-byte addresses agree with tronweb', (t) => {
  for (let i = 0; i < 50; i++) {
    const bytes = crypto.getRandomValues(new Uint8Array(20));
    const evm = `0x${Buffer.from(bytes).toString('hex')}`;
    const tron = evmToTron(evm);
    t.true(tron.startsWith('T'));
    t.is(tron.length, 34);
    t.is<string, string>(tron, utils.address.fromHex(`41${evm.slice(2)}`));
    t.is(tronToEvm(tron).toLowerCase(), evm);
  }
});

test('base58 keeps leading zero bytes as leading 1s', (t) => {
  const bytes = Uint8Array.from([0, 0, 1, 2, 255]);
  const text = base58Encode(bytes);
  t.true(text.startsWith('11'));
  t.deepEqual(base58Decode(text), bytes);
  t.is(base58Encode(new Uint8Array()), '');
});

// One character changed in TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t: still base58 and 25 bytes, wrong checksum.
const mistyped = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u';

test('a mistyped address fails its checksum, and the reason says so', (t) => {
  t.is(tronAddressProblem(mistyped), 'fails its Base58Check checksum: a character is mistyped or missing');
  t.false(utils.crypto.isAddressValid(mistyped), 'tronweb rejects it too');
  const error = t.throws(() => parseTronAddress(mistyped), { instanceOf: TronAddressError });
  t.is(error.reason, 'fails its Base58Check checksum: a character is mistyped or missing');
  t.throws(() => tronToHex(mistyped), { instanceOf: TronAddressError });
});

test('every single-character substitution of a documented address is caught', (t) => {
  const valid = 'TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL';
  let caught = 0;
  for (let i = 1; i < valid.length; i++) {
    const replacement = valid[i] === 'a' ? 'b' : 'a';
    const changed = valid.slice(0, i) + replacement + valid.slice(i + 1);
    if (tronAddressProblem(changed) !== null) caught++;
  }
  t.is(caught, valid.length - 1);
});

const malformed: [string, string, RegExp][] = [
  ['empty', '', /^is empty/],
  ['a character outside base58', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj60', /contains "0", which is not a base58 character/],
  [
    'a hex address',
    '0x41a614f803b6fd780986a42c78ec9c7f77e6ded13c',
    /contains "0", which is not a base58 character \(a hex address: give its T… form\)/,
  ],
  ['too short', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzg', /decodes to \d+ bytes, not 25/],
  // A Bitcoin P2PKH address: Base58Check with version byte 0x00 (bitcoin.it, "Technical background of version 1 Bitcoin addresses").
  [
    'a Bitcoin address',
    '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2',
    /has version byte 0x00, not 0x41: it is not a Tron address/,
  ],
];

for (const [what, value, reason] of malformed) {
  test(`${what} is refused with a reason`, (t) => {
    t.regex(tronAddressProblem(value) ?? '', reason);
  });
}

test('a merchant wallet must not be the zero address', (t) => {
  t.is<string, string>(hexToTron(`41${'00'.repeat(20)}`), 'T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb');
  t.regex(tronWalletAddressProblem('T9yD14Nj9j7xAB4dbGeiX9h8unkKHxuWwb') ?? '', /zero address/);
  t.is(tronWalletAddressProblem('TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL'), null);
  t.regex(tronWalletAddressProblem(mistyped) ?? '', /checksum/);
});

test('hex converters refuse what is not 20 or 21 bytes', (t) => {
  t.throws(() => evmToTron('0x1234'), { message: /not a 20-byte hex address/ });
  t.throws(() => hexToTron('42a614f803b6fd780986a42c78ec9c7f77e6ded13c'), {
    message: /not a 21-byte Tron hex address/,
  });
});
