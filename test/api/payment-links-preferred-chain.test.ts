import test, { type ExecutionContext } from 'ava';
import { createMerchant, MERCHANT_WALLET } from '../support/weir-harness.ts';
import {
  type Api,
  assertRejectedWithoutWrite,
  BASE_SEPOLIA,
  linkPageSession,
  type Session,
  startWeirWithBaseSepolia,
} from './helpers.ts';

/**
 * A payment link's preferred chain (`allowedChains[].isPreferred`) is checked as a session's and an
 * invoice's `paymentSetting.preferredChainId` are: one its sessions cannot pay on is refused when a
 * request sets it; a link keeping the preference it has keeps working, its sessions dropping it.
 */

const LINKS = '/api/v1/payment-links';
const TEST_CHAIN = 7357;
const FIELD = 'allowedChains[1].isPreferred';
const usdcLink = { title: 'Mug', amount: '100000000', currency: 'usdc' };
const preferring = (chainId: number) =>
  [TEST_CHAIN, BASE_SEPOLIA].map((id) => ({ chainId: id, isPreferred: id === chainId }));

type Link = { id: string; url: string; title: string; allowedChains: { chainId: number; isPreferred: boolean }[] };
type WithSetting = Session & { paymentSetting: { preferredChainId: number | null } };

/** The refusal of Base Sepolia for a link in `currency`, which the test network alone can be paid in. */
const refusal = (currency = 'USDC') =>
  new RegExp(
    `^allowedChains\\[1\\]\\.isPreferred: chain ${BASE_SEPOLIA} is not one of the payment link's networks \\(${TEST_CHAIN}: those of allowedChains with a payment method of this organization and an asset in ${currency}\\): prefer one of them, or prefer none$`,
  );

async function createLink(t: ExecutionContext, api: Api, body: object): Promise<Link> {
  const created = await api.post<Link>(LINKS, { ...usdcLink, ...body });
  t.is(created.status, 200, JSON.stringify(created.body));
  return created.body;
}

test('creating or updating a payment link to prefer a chain with no payment method of the organization, or none in its currency, is a 400 naming the field; nothing is written', async (t) => {
  const weir = await startWeirWithBaseSepolia(t);
  const { api } = await createMerchant(weir.url);

  // No wallet on Base Sepolia: its sessions could never be paid there.
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(LINKS, { ...usdcLink, allowedChains: preferring(BASE_SEPOLIA) }),
    {
      field: FIELD,
      message: refusal(),
    },
  );
  const link = await createLink(t, api, { allowedChains: preferring(TEST_CHAIN) });
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.put(`${LINKS}/${link.id}`, { allowedChains: preferring(BASE_SEPOLIA) }),
    {
      field: FIELD,
      message: refusal(),
    },
  );

  // With a wallet there, a USDC link may prefer it; a DAI link may not (Base Sepolia has no DAI).
  const wallet = await api.post('/api/v1/organization/withdrawal-addresses', {
    chainId: BASE_SEPOLIA,
    address: MERCHANT_WALLET,
  });
  t.is(wallet.status, 200, JSON.stringify(wallet.body));
  const updated = await api.put<Link>(`${LINKS}/${link.id}`, { allowedChains: preferring(BASE_SEPOLIA) });
  t.is(updated.status, 200, JSON.stringify(updated.body));
  t.deepEqual(updated.body.allowedChains, preferring(BASE_SEPOLIA));
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(LINKS, { ...usdcLink, currency: 'dai', allowedChains: preferring(BASE_SEPOLIA) }),
    { field: FIELD, message: refusal('DAI') },
  );
});

test('a payment link keeping a preferred chain whose payment method was removed since keeps working: the link sent back with its settings updates, its sessions drop the preference; preferring it anew is refused', async (t) => {
  const weir = await startWeirWithBaseSepolia(t);
  const { api } = await createMerchant(weir.url);
  const wallet = await api.post<{ id: string }>('/api/v1/organization/withdrawal-addresses', {
    chainId: BASE_SEPOLIA,
    address: MERCHANT_WALLET,
  });
  t.is(wallet.status, 200, JSON.stringify(wallet.body));
  const link = await createLink(t, api, { allowedChains: preferring(BASE_SEPOLIA) });
  t.is((await linkPageSession<WithSetting>(api, link.url)).paymentSetting.preferredChainId, BASE_SEPOLIA);
  t.is((await api.delete(`/api/v1/organization/withdrawal-addresses/${wallet.body.id}`)).status, 200);

  // A client that read the link sends its settings back with a new title: the preference it repeats is the link's own.
  const renamed = await api.put<Link>(`${LINKS}/${link.id}`, { title: 'Big mug', allowedChains: link.allowedChains });
  t.is(renamed.status, 200, JSON.stringify(renamed.body));
  t.is(renamed.body.title, 'Big mug');
  const session = await linkPageSession<WithSetting>(api, link.url);
  t.is(session.paymentSetting.preferredChainId, null);
  t.deepEqual([...new Set(session.addresses.map((a) => a.asset.chainId))], [TEST_CHAIN]);

  // Once it prefers another chain, preferring Base Sepolia again is a new setting, checked.
  t.is((await api.put(`${LINKS}/${link.id}`, { allowedChains: preferring(TEST_CHAIN) })).status, 200);
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.put(`${LINKS}/${link.id}`, { allowedChains: preferring(BASE_SEPOLIA) }),
    {
      field: FIELD,
      message: refusal(),
    },
  );
});

test('creating or updating a payment link to allow only chains it cannot be paid on (no payment method there, or none in its currency) is a 400 naming allowedChains; nothing is written, and a link keeping its chains keeps working', async (t) => {
  const weir = await startWeirWithBaseSepolia(t);
  const { api } = await createMerchant(weir.url);
  const onBase = [{ chainId: BASE_SEPOLIA }];
  const nowhere = (currency = 'USDC') =>
    new RegExp(
      `^allowedChains: none of chains ${BASE_SEPOLIA} can be paid on, so the link's page would offer nothing to pay with \\(a chain needs a payment method of this organization that can be paid and an asset in ${currency}\\): allow one of ${TEST_CHAIN}, add a wallet address on one with POST /api/v1/organization/withdrawal-addresses, or send no allowedChains \\(every network\\)$`,
    );
  const refused = { field: 'allowedChains', code: 'payment_method_not_available', message: nowhere() };

  // No wallet on Base Sepolia: a link allowing it alone could never be paid.
  await assertRejectedWithoutWrite(t, weir, () => api.post(LINKS, { ...usdcLink, allowedChains: onBase }), refused);
  const link = await createLink(t, api, { allowedChains: [{ chainId: TEST_CHAIN }] });
  await assertRejectedWithoutWrite(t, weir, () => api.put(`${LINKS}/${link.id}`, { allowedChains: onBase }), refused);
  // Allowing it beside a chain that can be paid, or every chain, is fine.
  const both = await api.put<Link>(`${LINKS}/${link.id}`, { allowedChains: preferring(TEST_CHAIN) });
  t.is(both.status, 200, JSON.stringify(both.body));
  t.is((await api.put<Link>(`${LINKS}/${link.id}`, { allowedChains: [] })).status, 200);

  // With a wallet there, a USDC link may allow it alone; a DAI link may not (Base Sepolia has no DAI).
  const wallet = await api.post<{ id: string }>('/api/v1/organization/withdrawal-addresses', {
    chainId: BASE_SEPOLIA,
    address: MERCHANT_WALLET,
  });
  t.is(wallet.status, 200, JSON.stringify(wallet.body));
  const based = await createLink(t, api, { allowedChains: onBase });
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(LINKS, { ...usdcLink, currency: 'dai', allowedChains: onBase }),
    { ...refused, message: nowhere('DAI') },
  );

  // Its wallet removed since, the link sent back whole with a new title keeps its chains.
  t.is((await api.delete(`/api/v1/organization/withdrawal-addresses/${wallet.body.id}`)).status, 200);
  const renamed = await api.put<Link>(`${LINKS}/${based.id}`, { title: 'Big mug', allowedChains: based.allowedChains });
  t.is(renamed.status, 200, JSON.stringify(renamed.body));
  t.is(renamed.body.title, 'Big mug');
});
