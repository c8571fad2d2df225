import test from 'ava';
import { createMerchant, MERCHANT_WALLET, sessionRequest } from '../support/weir-harness.ts';
import {
  type Api,
  appendOldWallet,
  assertRejectedWithoutWrite,
  BASE_SEPOLIA,
  appendAsEarlierWeir,
  createCustomer,
  linkPageSession,
  type Session,
  startWeirWithBaseSepolia,
} from './helpers.ts';

/**
 * One rule of the networks a session offers and can pay to (`sessionNetworks`), for a wallet the rail
 * cannot pay, stored before Weir refused such addresses: a session never prefers its network, and
 * it fails no session that would not use that network.
 */

const SESSIONS = '/api/v1/checkout/sessions';
const TEST_CHAIN = 7357;
const FIELD = 'paymentSetting.preferredChainId';
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
/** MERCHANT_WALLET with one letter's case changed: its EIP-55 checksum fails. */
const MISTYPED = '0x5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1f';

type WithSetting = Session & {
  paymentSetting: { allowedChains: { chainId: number }[]; preferredChainId: number | null };
};

const linesIn = (currency: string) => ({
  data: [{ priceData: { currency, unitAmount: '100000000', productData: { name: 'Mug' } }, quantity: 1 }],
});
const daiLines = linesIn('dai');

/** A merchant paid on the test network, whose default wallet on Base Sepolia is `address`, stored by an earlier Weir. */
async function merchantWithOldBaseWallet(t: Parameters<typeof startWeirWithBaseSepolia>[0], address: string) {
  const weir = await startWeirWithBaseSepolia(t);
  const { api, organizationId } = await createMerchant(weir.url);
  await appendOldWallet(weir, organizationId, { id: 'old-wallet', address, chainId: BASE_SEPOLIA, isDefault: true });
  return { weir, api, organizationId };
}

const chainsOf = (session: Session): number[] => [...new Set(session.addresses.map((a) => a.asset.chainId))];

/** The session a payment link's page opens for a fixed-price link (nothing collected). */
async function linkSession(api: Api, link: object): Promise<WithSetting> {
  const created = await api.post<{ url: string }>('/api/v1/payment-links', { title: 'Mug', ...link });
  if (created.status !== 200) throw new Error(`link create failed: ${JSON.stringify(created.body)}`);
  return linkPageSession<WithSetting>(api, created.body.url);
}

test('a preferred chain whose default wallet the rail cannot pay is not preferred: a session, invoice or payment link naming it is a 400 saying why, the organization’s and a stored link’s are dropped', async (t) => {
  const { weir, api, organizationId } = await merchantWithOldBaseWallet(t, ZERO_ADDRESS);
  const leftOut =
    /^paymentSetting\.preferredChainId: chain 84532 is not one of the (session|invoice)'s networks \(7357: every network with a payment method of this organization and an asset in USDC\): prefer one of them.*; chain 84532 is left out because the payment method old-wallet on chain 84532 has the address 0x0{40}, which is the zero address: funds sent there are burnt; correct it with PUT \/api\/v1\/organization\/withdrawal-addresses\/old-wallet$/;

  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(SESSIONS, { ...sessionRequest(), paymentSetting: { preferredChainId: BASE_SEPOLIA } }),
    { field: FIELD, message: leftOut },
  );
  const customerId = await createCustomer(api);
  await assertRejectedWithoutWrite(
    t,
    weir,
    () =>
      api.post('/api/v1/invoices', {
        customerId,
        lineItems: sessionRequest().lineItems,
        paymentSetting: { preferredChainId: BASE_SEPOLIA },
      }),
    { field: FIELD, message: leftOut },
  );

  // The organization's preferred chain, and a payment link's, go to sessions no request named them in: dropped there.
  const setting = await api.put('/api/v1/organization/payment-setting', { preferredChainId: BASE_SEPOLIA });
  t.is(setting.status, 200, JSON.stringify(setting.body));
  const session = await api.post<WithSetting>(SESSIONS, sessionRequest());
  t.is(session.status, 200, JSON.stringify(session.body));
  t.deepEqual(chainsOf(session.body), [TEST_CHAIN]);
  t.is(session.body.paymentSetting.preferredChainId, null, 'no address on the chain it would prefer');
  const preferringBase = [{ chainId: TEST_CHAIN }, { chainId: BASE_SEPOLIA, isPreferred: true }];
  const usdcLink = { title: 'Mug', amount: '100000000', currency: 'usdc' };
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/payment-links', { ...usdcLink, allowedChains: preferringBase }),
    {
      field: 'allowedChains[1].isPreferred',
      message:
        /^allowedChains\[1\]\.isPreferred: chain 84532 is not one of the payment link's networks \(7357: those of allowedChains with a payment method of this organization and an asset in USDC\): prefer one of them, or prefer none; chain 84532 is left out because the payment method old-wallet on chain 84532 has the address 0x0{40}, which is the zero address/,
    },
  );
  // A link that came to prefer it before links were checked (as an earlier Weir stored it): its sessions drop it.
  const stored = await api.post<{ id: string; url: string }>('/api/v1/payment-links', {
    ...usdcLink,
    allowedChains: [{ chainId: TEST_CHAIN }, { chainId: BASE_SEPOLIA }],
  });
  t.is(stored.status, 200, JSON.stringify(stored.body));
  await appendAsEarlierWeir(weir, organizationId, `payment_link-${stored.body.id}`, 'PaymentLinkUpdated', {
    changes: { allowedChains: preferringBase.map((c) => ({ isPreferred: false, ...c })) },
  });
  const fromLink = await linkPageSession<WithSetting>(api, stored.body.url);
  t.deepEqual(chainsOf(fromLink), [TEST_CHAIN]);
  t.is(fromLink.paymentSetting.preferredChainId, null);

  // Corrected, the chain is paid on and preferred again.
  const fixed = await api.put('/api/v1/organization/withdrawal-addresses/old-wallet', { address: MERCHANT_WALLET });
  t.is(fixed.status, 200, JSON.stringify(fixed.body));
  const preferred = await api.post<WithSetting>(SESSIONS, sessionRequest());
  t.is(preferred.body.paymentSetting.preferredChainId, BASE_SEPOLIA);
  t.deepEqual(chainsOf(preferred.body).sort(), [TEST_CHAIN, BASE_SEPOLIA]);
});

test('a wallet failing its checksum on a network with no asset in the currency fails no session; where the session would pay it keeps its 422, and an invoice whose pay page would is not finalized', async (t) => {
  const { weir, api } = await merchantWithOldBaseWallet(t, MISTYPED);

  // Base Sepolia has no DAI: a DAI session never uses it, by the API, an invoice's pay link or a payment link.
  const dai = await api.post<Session>(SESSIONS, { ...sessionRequest(), lineItems: daiLines });
  t.is(dai.status, 200, JSON.stringify(dai.body));
  t.deepEqual(chainsOf(dai.body), [TEST_CHAIN]);
  const customerId = await createCustomer(api);
  const invoice = await api.post<{ id: string }>('/api/v1/invoices', { customerId, lineItems: daiLines });
  t.is((await api.post(`/api/v1/invoices/${invoice.body.id}/finalize`)).status, 200);
  const pay = await fetch(`${weir.url}/invoices/${invoice.body.id}/pay`, { redirect: 'manual' });
  t.is(pay.status, 302, await pay.text());
  t.deepEqual(chainsOf(await linkSession(api, { amount: '100000000', currency: 'dai' })), [TEST_CHAIN]);

  // A USDC session would pay there: the wallet is refused, naming it and how to correct it.
  const body = await assertRejectedWithoutWrite(t, weir, () => api.post(SESSIONS, sessionRequest()), {
    status: 422,
    code: 'payment_method_invalid',
  });
  t.regex(
    body.message,
    /^the payment method old-wallet on chain 84532 has the address 0x5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1f, which fails its EIP-55 checksum: check it for a typo and correct it with PUT \/api\/v1\/organization\/withdrawal-addresses\/old-wallet$/,
  );
  const elsewhere = await api.post(SESSIONS, {
    ...sessionRequest(),
    paymentSetting: { allowedChains: [{ chainId: TEST_CHAIN }] },
  });
  t.is(elsewhere.status, 200, 'a session not allowed on its network');

  // A USDC invoice's pay page would make that session: it is not finalized into a page nobody can
  // pay, refused with that session's 422, as the organization's wallet is what is wrong.
  const usdc = await api.post<{ id: string }>('/api/v1/invoices', { customerId, lineItems: linesIn('usdc') });
  for (const action of ['finalize', 'send']) {
    const refused = await assertRejectedWithoutWrite(
      t,
      weir,
      () => api.post(`/api/v1/invoices/${usdc.body.id}/${action}`),
      { status: 422, code: 'payment_method_invalid' },
    );
    t.regex(
      refused.message,
      /^cannot be finalized: the payment method old-wallet on chain 84532 .* fails its EIP-55 checksum: check it for a typo and correct it with PUT \/api\/v1\/organization\/withdrawal-addresses\/old-wallet$/,
    );
  }
});

test('an invoice whose pay page could only pay into wallets the rail cannot pay is refused at finalize with the 422 a session gets, naming the wallet', async (t) => {
  const { weir, api } = await merchantWithOldBaseWallet(t, ZERO_ADDRESS);
  const onBase = { paymentSetting: { allowedChains: [{ chainId: BASE_SEPOLIA }] } };
  const session = await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(SESSIONS, { ...sessionRequest(), ...onBase }),
    {
      status: 422,
      code: 'payment_method_invalid',
    },
  );
  const customerId = await createCustomer(api);
  const invoice = await api.post<{ id: string }>('/api/v1/invoices', {
    customerId,
    lineItems: linesIn('usdc'),
    paymentMethods: { chainIds: [BASE_SEPOLIA], assetIds: [] },
  });
  t.is(invoice.status, 200, JSON.stringify(invoice.body));
  const finalize = await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(`/api/v1/invoices/${invoice.body.id}/finalize`),
    { status: 422, code: 'payment_method_invalid' },
  );
  t.is(finalize.message, `cannot be finalized: ${session.message}`);
  t.regex(finalize.message, /old-wallet on chain 84532 .*zero address/);
});

/** Posts a payment link's page as the payer's browser does (nothing collected). */
const postLinkPage = async (url: string) => {
  const answer = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: '',
  });
  return { status: answer.status, type: answer.headers.get('content-type') ?? '', html: await answer.text() };
};

test('a payment link newly allowing a chain whose wallet fails its checksum is refused with the 422 its sessions would get; a link keeping it, or allowing every chain, is told to its payer as not payable now, never naming the wallet', async (t) => {
  const weir = await startWeirWithBaseSepolia(t);
  const { api, organizationId } = await createMerchant(weir.url);
  const usdcLink = { title: 'Mug', amount: '100000000', currency: 'usdc' };
  const bothChains = [{ chainId: TEST_CHAIN }, { chainId: BASE_SEPOLIA }];
  // Made before the wallet on Base Sepolia was added: its chains were payable (the test network) then.
  const kept = await api.post<{ id: string; url: string; allowedChains: object[] }>('/api/v1/payment-links', {
    ...usdcLink,
    allowedChains: bothChains,
  });
  t.is(kept.status, 200, JSON.stringify(kept.body));
  const everywhere = await api.post<{ id: string; url: string }>('/api/v1/payment-links', usdcLink);
  t.is(everywhere.status, 200, JSON.stringify(everywhere.body));
  await appendOldWallet(weir, organizationId, {
    id: 'old-wallet',
    address: MISTYPED,
    chainId: BASE_SEPOLIA,
    isDefault: true,
  });

  const refused =
    /^allowedChains: the link's sessions would pay into a wallet that is broken: the payment method old-wallet on chain 84532 has the address 0x5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1f, which fails its EIP-55 checksum: check it for a typo and correct it with PUT \/api\/v1\/organization\/withdrawal-addresses\/old-wallet$/;
  const invalid = { status: 422, code: 'payment_method_invalid', message: refused };
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/payment-links', { ...usdcLink, allowedChains: bothChains }),
    invalid,
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.put(`/api/v1/payment-links/${everywhere.body.id}`, { allowedChains: bothChains }),
    invalid,
  );
  // The link that already allowed it, sent back whole with a new title, keeps working.
  const renamed = await api.put(`/api/v1/payment-links/${kept.body.id}`, {
    title: 'Big mug',
    allowedChains: kept.body.allowedChains,
  });
  t.is(renamed.status, 200, JSON.stringify(renamed.body));

  // Its payer, and the payer of a link allowing every chain, get a page saying it cannot be paid now:
  // not the API's JSON refusal, nor the merchant's wallet, address or the route that corrects it.
  for (const url of [kept.body.url, everywhere.body.url]) {
    const page = await postLinkPage(url);
    t.is(page.status, 409, page.html.slice(0, 500));
    t.regex(page.type, /^text\/html/);
    t.regex(page.html, /<h1>Payment link cannot be paid right now<\/h1>/);
    t.regex(page.html, /the seller has no way set up to take this payment\. Please contact them\./);
    t.notRegex(page.html, /old-wallet|0x5ea1fee5|withdrawal-addresses|payment_method_invalid|checksum/i);
  }

  // Corrected, the link is paid on both chains.
  t.is(
    (await api.put('/api/v1/organization/withdrawal-addresses/old-wallet', { address: MERCHANT_WALLET })).status,
    200,
  );
  t.deepEqual(chainsOf(await linkPageSession(api, kept.body.url)).sort(), [TEST_CHAIN, BASE_SEPOLIA]);
});

test("a payment link allowing only chains whose wallets the rail cannot pay is refused with the 422 its sessions would get; one of them beside a payable chain is fine, and a link whose merchant has no wallet for its currency tells its payer so without the API's refusal", async (t) => {
  const { weir, api } = await merchantWithOldBaseWallet(t, ZERO_ADDRESS);
  const usdcLink = { title: 'Mug', amount: '100000000', currency: 'usdc' };
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/payment-links', { ...usdcLink, allowedChains: [{ chainId: BASE_SEPOLIA }] }),
    {
      status: 422,
      code: 'payment_method_invalid',
      message:
        /^allowedChains: the link's sessions would pay into a wallet that is broken: the payment method old-wallet on chain 84532 has the address 0x0{40}, which is the zero address: funds sent there are burnt; correct it with PUT \/api\/v1\/organization\/withdrawal-addresses\/old-wallet$/,
    },
  );
  const beside = await api.post('/api/v1/payment-links', {
    ...usdcLink,
    allowedChains: [{ chainId: TEST_CHAIN }, { chainId: BASE_SEPOLIA }],
  });
  t.is(beside.status, 200, JSON.stringify(beside.body));
  const dai = await api.post<{ url: string }>('/api/v1/payment-links', { ...usdcLink, currency: 'dai' });
  t.is(dai.status, 200, JSON.stringify(dai.body));

  // No wallet left on the test network: the USDC link's session would pay only into the zero address (a
  // 422 from the API), the DAI one has no wallet on a network with DAI (a 400): both are told to the payer alike.
  const wallets = await api.get<{ id: string; chainId: number }[]>('/api/v1/organization/withdrawal-addresses');
  for (const wallet of wallets.body.filter((w) => w.chainId === TEST_CHAIN))
    t.is((await api.delete(`/api/v1/organization/withdrawal-addresses/${wallet.id}`)).status, 200);
  for (const url of [(beside.body as { url: string }).url, dai.body.url]) {
    const page = await postLinkPage(url);
    t.is(page.status, 409, page.html.slice(0, 500));
    t.regex(page.html, /<h1>Payment link cannot be paid right now<\/h1>/);
    t.notRegex(page.html, /old-wallet|withdrawal-addresses|payment_method|This payment cannot be started/);
  }
});

test('a price no asset of its currency can hold exactly is refused for the amount (400, naming it) by a session as by an invoice, whatever another network’s wallet is', async (t) => {
  const { weir, api } = await merchantWithOldBaseWallet(t, ZERO_ADDRESS);
  // 10^-8 USDC: every USDC here has 6 decimals. The test network can be paid but not this amount; Base Sepolia's wallet cannot be.
  const tiny = {
    data: [{ priceData: { currency: 'usdc', unitAmount: '1', productData: { name: 'Crumb' } }, quantity: 1 }],
  };
  const refusal = {
    field: 'lineItems.data[0].priceData.unitAmount',
    message:
      /^lineItems\.data\[0\]\.priceData\.unitAmount: 1 is 0\.00000001 USDC, more decimals than any USDC asset carries \(at most 6\)/,
  };
  const session = await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(SESSIONS, { ...sessionRequest(), lineItems: tiny }),
    refusal,
  );
  t.notRegex(session.message, /old-wallet/);
  const customerId = await createCustomer(api);
  const invoice = await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/invoices', { customerId, lineItems: tiny }),
    refusal,
  );
  t.notRegex(invoice.message, /old-wallet/);
});
