import test from 'ava';
import { TronWeb, utils } from 'tronweb';
import { recoverAddress, type Hex } from 'viem';
import { hardhatAccounts } from '../evm/devnet/hardhat-accounts.ts';
import { evmToTron, tronToHex } from './address.ts';
import { TronSigningError, tronPayerSigner } from './payer-signer.ts';

// A key and its address as a public Tron SDK's test prints them (jasonthinks/tron-sdk AddressTest).
const sdkKey = '7a2195d52c42c34a8de11633de7fdfbbf6883d2e95918ccd845230629fd95768';
const sdkAddress = 'TA1gLs6FS8eik5NJqjvm73L4qRqWDmLwmh';

test('a private key gives the T… address Tron wallets show for it', (t) => {
  const signer = tronPayerSigner(sdkKey);
  t.is<string, string>(signer.address, sdkAddress);
  t.is(tronToHex(signer.address), '0x410077a7caa7efe71a5e8ef1fe9ee697c8e755eff6');
  t.is(TronWeb.address.fromPrivateKey(sdkKey), sdkAddress);
  t.is<string, string>(tronPayerSigner(`0x${sdkKey}`).address, sdkAddress);
  // The same key holds the same 20 bytes on the EVM: a devnet payer is a Tron payer too.
  const account = hardhatAccounts[1];
  t.is<string, string>(tronPayerSigner(account.privateKey).address, evmToTron(account.address));
});

/** An unsigned TRX transfer built offline with tronweb's protobuf codec, as a node would hand it out. */
function unsignedTransfer(from: string, to: string, sun: number) {
  const json = {
    visible: false,
    raw_data: {
      contract: [
        {
          parameter: {
            value: { owner_address: TronWeb.address.toHex(from), to_address: TronWeb.address.toHex(to), amount: sun },
            type_url: 'type.googleapis.com/protocol.TransferContract',
          },
          type: 'TransferContract',
        },
      ],
      ref_block_bytes: '0f1e',
      ref_block_hash: '2c3b4a5968778695',
      expiration: 1_790_000_060_000,
      timestamp: 1_790_000_000_000,
    },
  };
  const pb = utils.transaction.txJsonToPb(json);
  return {
    ...json,
    txID: utils.transaction.txPbToTxID(pb).replace(/^0x/, ''),
    raw_data_hex: utils.transaction.txPbToRawDataHex(pb),
  };
}

test('a transaction is signed over its txID, and the signature recovers the payer', async (t) => {
  const signer = tronPayerSigner(sdkKey);
  const unsigned = unsignedTransfer(signer.address, 'TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL', 1_500_000);
  const signed = signer.signTransaction(unsigned);
  t.is(signed.signature.length, 1);
  const signature = signed.signature[0]!;
  t.regex(signature, /^[0-9a-f]{128}(1b|1c)$/);
  // viem, an independent secp256k1 implementation, recovers the payer's 20 bytes.
  const recovered = await recoverAddress({ hash: `0x${unsigned.txID}`, signature: `0x${signature}` });
  t.is<string, string>(evmToTron(recovered), sdkAddress);
  // tronweb's own signer gives the same (deterministic, RFC 6979) signature.
  const theirs: unknown = utils.crypto.signTransaction(sdkKey, { ...unsigned }).signature;
  t.deepEqual(Array.isArray(theirs) ? theirs.map((s) => String(s).toLowerCase()) : theirs, [signature]);
});

test('a transaction whose txID is not the hash of its raw data is refused', (t) => {
  const signer = tronPayerSigner(sdkKey);
  const unsigned = unsignedTransfer(signer.address, 'TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL', 1_500_000);
  const forged = { ...unsigned, txID: `${'00'.repeat(31)}01` };
  t.throws(() => signer.signTransaction(forged), { instanceOf: TronSigningError, message: /refusing to sign/ });
});

test('a message is signed as TronWeb signMessageV2 does, and verifies to the payer', (t) => {
  const signer = tronPayerSigner(sdkKey);
  const signature: Hex = signer.signMessage('Pay 12.50 USDT to Weir session 42');
  t.is(utils.message.verifyMessage('Pay 12.50 USDT to Weir session 42', signature), sdkAddress);
  t.not(utils.message.verifyMessage('Pay 99.00 USDT to Weir session 42', signature), sdkAddress);
});

test('a key or hash of the wrong size is refused', (t) => {
  t.throws(() => tronPayerSigner('abcd'), { instanceOf: TronSigningError });
  t.throws(() => tronPayerSigner(sdkKey).signHash('0x12'), { instanceOf: TronSigningError });
});
