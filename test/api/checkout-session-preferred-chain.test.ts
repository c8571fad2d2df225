import test from 'ava';
import { createMerchant, MERCHANT_WALLET, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { assertRejectedWithoutWrite, type Session } from './helpers.ts';

/**
 * `paymentSetting.preferredChainId` on a new session: one of the networks the session offers (those of
 * `allowedChains`, or every one the organization can be paid on), else a 400 naming it and nothing written.
 */

const SESSIONS = '/api/v1/checkout/sessions';
const TEST_CHAIN = 7357;
const BASE_SEPOLIA = 84_532;
const UNKNOWN_CHAIN = 1;
const FACTORY = '0x00000000000000000000000000000000000fac70';
const FIELD = 'paymentSetting.preferredChainId';

type WithSetting = Session & {
  paymentSetting: { allowedChains: { chainId: number }[]; preferredChainId: number | null };
};

test('a preferred network the session does not offer is refused naming paymentSetting.preferredChainId, and nothing is written; one it offers is kept', async (t) => {
  // Base Sepolia is one of Weir's networks; the merchant is paid on the test network only, at first.
  const weir = await startTestWeir(
    t,
    { chainEnv: { [`WEIR_RPC_${BASE_SEPOLIA}`]: 'http://127.0.0.1:9', [`WEIR_FACTORY_${BASE_SEPOLIA}`]: FACTORY } },
    { evmFollowers: false },
  );
  const { api } = await createMerchant(weir.url);
  const create = (paymentSetting: object) => api.post<WithSetting>(SESSIONS, { ...sessionRequest(), paymentSetting });

  // No allowedChains: the networks the organization can be paid on (no payment method on Base Sepolia yet).
  for (const chainId of [BASE_SEPOLIA, UNKNOWN_CHAIN])
    await assertRejectedWithoutWrite(t, weir, () => create({ preferredChainId: chainId }), {
      field: FIELD,
      message: new RegExp(`chain ${chainId} is not one of the session's networks \\(${TEST_CHAIN}: every network`),
    });

  const wallet = await api.post('/api/v1/organization/withdrawal-addresses', {
    chainId: BASE_SEPOLIA,
    address: MERCHANT_WALLET,
  });
  t.is(wallet.status, 200, JSON.stringify(wallet.body));
  // With allowedChains: only those, though the organization can be paid on the other too.
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => create({ allowedChains: [{ chainId: TEST_CHAIN }], preferredChainId: BASE_SEPOLIA }),
    { field: FIELD, message: /those of paymentSetting\.allowedChains/ },
  );

  // A network with a payment method but no asset in the session's currency (Base Sepolia has no DAI) is not offered.
  const daiLines = {
    data: [{ priceData: { currency: 'dai', unitAmount: '100000000', productData: { name: 'Mug' } }, quantity: 1 }],
  };
  await assertRejectedWithoutWrite(
    t,
    weir,
    () =>
      api.post(SESSIONS, {
        ...sessionRequest(),
        lineItems: daiLines,
        paymentSetting: { preferredChainId: BASE_SEPOLIA },
      }),
    {
      field: FIELD,
      message: new RegExp(
        `chain ${BASE_SEPOLIA} is not one of the session's networks \\(${TEST_CHAIN}: every network with a payment method of this organization and an asset in DAI\\)`,
      ),
    },
  );

  const kept = await create({
    allowedChains: [{ chainId: TEST_CHAIN }, { chainId: BASE_SEPOLIA }],
    preferredChainId: BASE_SEPOLIA,
  });
  t.is(kept.status, 200, JSON.stringify(kept.body));
  t.is(kept.body.paymentSetting.preferredChainId, BASE_SEPOLIA);
  const paidOnBoth = await create({ preferredChainId: BASE_SEPOLIA });
  t.is(paidOnBoth.status, 200, JSON.stringify(paidOnBoth.body));
  t.is(paidOnBoth.body.paymentSetting.preferredChainId, BASE_SEPOLIA);
});
