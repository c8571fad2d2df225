import test from 'ava';
import { getAddress } from 'viem';
import { sessionFixture } from '../../../machines/checkout-session.fixture.ts';
import { evmPaymentRequest } from './payment-request.ts';

const words = { label: 'My Shop' };
const DEPOSIT = '0x307fb543c820d580f39a54c69b54c3733103760c';
const TOKEN = '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512';

test('EIP-681 request and payee name EVM addresses in their EIP-55 checksum, whatever case the log keeps them in', (t) => {
  const [stored] = sessionFixture().addresses;
  const address = { ...stored!, paymentAddress: DEPOSIT, asset: { ...stored!.asset, address: TOKEN, chainId: 31337 } };
  const token = evmPaymentRequest({ address, amountDue: 3000000n, words });
  t.is(token.uri, `ethereum:${getAddress(TOKEN)}@31337/transfer?address=${getAddress(DEPOSIT)}&uint256=3000000`);
  t.is(token.payee, '0x307FB543c820D580f39A54c69B54C3733103760C');
  const native = evmPaymentRequest({
    address: { ...address, asset: { ...address.asset, address: 'native', decimals: 18 } },
    amountDue: 10n ** 18n,
    words,
  });
  t.is(native.uri, `ethereum:${getAddress(DEPOSIT)}@31337?value=1000000000000000000`);
});
