import test, { type ExecutionContext } from 'ava';
import { invoiceAggregate } from '../../machines/invoice.aggregate.ts';
import { messageOf } from '../../src/dashboard/pages/invoices/invoice-form.ts';
import { INVOICES, type InvoiceDoc } from '../../src/projections/invoices.projection.ts';
import { createMerchant, MERCHANT_WALLET, startTestWeir } from '../support/weir-harness.ts';
import {
  type Api,
  assertError,
  assertRejectedWithoutWrite,
  createCustomer,
  logLength,
  type Session,
} from './helpers.ts';

/**
 * The reference's `paymentSetting.allowedChains` on invoices: the same restriction as
 * `paymentMethods.chainIds`, shown in the answer's `paymentSetting` and honoured by the pay page.
 */

const TEST_CHAIN = 7357;
const BASE_SEPOLIA = 84_532;
const TEST_USDC = 'weir-testnet:usdc';
const BASE_USDC = 'base-sepolia:usdc';
const TEST_DAI = 'weir-testnet:dai';
const FACTORY = '0x00000000000000000000000000000000000fac70';

type Invoice = {
  id: string;
  paymentMethods: { chainIds: number[]; assetIds: string[] };
  paymentSetting: { allowedChains: { chainId: number }[]; preferredChainId: number | null } | null;
};
type InvoiceSession = Session & {
  paymentSetting: { allowedChains: { chainId: number }[]; preferredChainId: number | null };
};

/** A Weir offering Base Sepolia besides the test network (no follower runs), a merchant paid on both, and a customer. */
async function merchantOnTwoChains(t: ExecutionContext) {
  const weir = await startTestWeir(
    t,
    { chainEnv: { [`WEIR_RPC_${BASE_SEPOLIA}`]: 'http://127.0.0.1:9', [`WEIR_FACTORY_${BASE_SEPOLIA}`]: FACTORY } },
    { evmFollowers: false },
  );
  const { api } = await createMerchant(weir.url);
  const wallet = await api.post('/api/v1/organization/withdrawal-addresses', {
    chainId: BASE_SEPOLIA,
    address: MERCHANT_WALLET,
  });
  if (wallet.status !== 200) throw new Error(`payment method failed: ${JSON.stringify(wallet.body)}`);
  return { weir, api, customerId: await createCustomer(api) };
}

const lineItems = {
  data: [{ priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Setup' } }, quantity: 1 }],
};

/** The checkout session the invoice's pay link opens. */
async function payPageSession(weir: { url: string }, api: Api, invoiceId: string): Promise<InvoiceSession> {
  const pay = await fetch(`${weir.url}/invoices/${invoiceId}/pay`, { redirect: 'manual' });
  if (pay.status !== 302) throw new Error(`pay link answered ${pay.status}`);
  return (await api.get<InvoiceSession>(`/api/v1/checkout/sessions/${pay.headers.get('location')!.split('/').pop()!}`))
    .body;
}

/** The assets the invoice's pay link offers: those of the checkout session's addresses. */
const offeredAssets = async (weir: { url: string }, api: Api, invoiceId: string): Promise<string[]> =>
  (await payPageSession(weir, api, invoiceId)).addresses.map((a) => a.asset.id).sort();

/** The networks the invoice's pay link offers: those of the checkout session it opens. */
async function offeredChains(weir: { url: string }, api: Api, invoiceId: string) {
  const session = await payPageSession(weir, api, invoiceId);
  return {
    addresses: [...new Set(session.addresses.map((a) => a.asset.chainId))].sort(),
    allowedChains: session.paymentSetting.allowedChains.map((c) => c.chainId).sort(),
    preferredChainId: session.paymentSetting.preferredChainId,
  };
}

/** A draft preferring Base Sepolia, without restricting its networks. */
const draftPreferringBase = async (api: Api, customerId: string): Promise<Invoice> =>
  (
    await api.post<Invoice>('/api/v1/invoices', {
      customerId,
      lineItems,
      paymentSetting: { preferredChainId: BASE_SEPOLIA },
    })
  ).body;

/** The merchant's payment method on Base Sepolia removed. */
async function removeBaseWallet(t: ExecutionContext, api: Api): Promise<void> {
  const wallets = await api.get<{ id: string; chainId: number }[]>('/api/v1/organization/withdrawal-addresses');
  const base = wallets.body.find((w) => w.chainId === BASE_SEPOLIA)!;
  t.is((await api.delete(`/api/v1/organization/withdrawal-addresses/${base.id}`)).status, 200);
}

/** Finalize and send both refuse the draft as `expected` says, writing nothing: it stays a draft. */
async function assertFinalizeRefused(
  t: ExecutionContext,
  weir: Parameters<typeof assertRejectedWithoutWrite>[1],
  api: Api,
  id: string,
  expected: Parameters<typeof assertRejectedWithoutWrite>[3],
): Promise<void> {
  await assertRejectedWithoutWrite(t, weir, () => api.post(`/api/v1/invoices/${id}/finalize`), expected);
  const send = () => api.post(`/api/v1/invoices/${id}/send`, { to: 'payer@example.com' });
  await assertRejectedWithoutWrite(t, weir, send, expected);
  t.is((await api.get<{ status: string }>(`/api/v1/invoices/${id}`)).body.status, 'draft');
}

test('paymentSetting.allowedChains restricts a new invoice, shows in its answer, and its pay page offers only those networks', async (t) => {
  const { weir, api, customerId } = await merchantOnTwoChains(t);
  const created = await api.post<Invoice>('/api/v1/invoices', {
    customerId,
    lineItems,
    paymentSetting: { allowedChains: [{ chainId: BASE_SEPOLIA, blacklistCurrencies: ['usdt'] }], allowSwap: false },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  t.deepEqual(created.body.paymentMethods, { chainIds: [BASE_SEPOLIA], assetIds: [] });
  t.deepEqual(created.body.paymentSetting?.allowedChains, [{ chainId: BASE_SEPOLIA }]);
  t.deepEqual((await api.get<Invoice>(`/api/v1/invoices/${created.body.id}`)).body, created.body);

  // Without a restriction the answer's list is empty (every network with a payment method) and the page offers both.
  const open = await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems });
  t.deepEqual(open.body.paymentSetting?.allowedChains, []);

  for (const id of [created.body.id, open.body.id])
    t.is((await api.post(`/api/v1/invoices/${id}/finalize`)).status, 200);
  t.deepEqual(await offeredChains(weir, api, created.body.id), {
    addresses: [BASE_SEPOLIA],
    allowedChains: [BASE_SEPOLIA],
    preferredChainId: null,
  });
  t.deepEqual(await offeredChains(weir, api, open.body.id), {
    addresses: [TEST_CHAIN, BASE_SEPOLIA],
    allowedChains: [TEST_CHAIN, BASE_SEPOLIA],
    preferredChainId: null,
  });
});

test("paymentSetting.allowedChains on update replaces a draft's networks and keeps its assets; an empty list lifts the restriction", async (t) => {
  const { weir, api, customerId } = await merchantOnTwoChains(t);
  const draft = (
    await api.post<Invoice>('/api/v1/invoices', {
      customerId,
      lineItems,
      paymentMethods: { chainIds: [BASE_SEPOLIA, TEST_CHAIN], assetIds: [TEST_USDC] },
    })
  ).body;
  const moved = await api.put<Invoice>(`/api/v1/invoices/${draft.id}`, {
    paymentSetting: { allowedChains: [{ chainId: TEST_CHAIN }] },
  });
  t.is(moved.status, 200, JSON.stringify(moved.body));
  t.deepEqual(moved.body.paymentMethods, { chainIds: [TEST_CHAIN], assetIds: [TEST_USDC] });
  t.deepEqual(moved.body.paymentSetting?.allowedChains, [{ chainId: TEST_CHAIN }]);

  t.is((await api.post(`/api/v1/invoices/${draft.id}/finalize`)).status, 200);
  t.deepEqual(await offeredChains(weir, api, draft.id), {
    addresses: [TEST_CHAIN],
    allowedChains: [TEST_CHAIN],
    preferredChainId: null,
  });

  const other = (await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems })).body;
  await api.put(`/api/v1/invoices/${other.id}`, { paymentSetting: { allowedChains: [{ chainId: TEST_CHAIN }] } });
  const lifted = await api.put<Invoice>(`/api/v1/invoices/${other.id}`, { paymentSetting: { allowedChains: [] } });
  t.is(lifted.status, 200, JSON.stringify(lifted.body));
  t.deepEqual(lifted.body.paymentMethods.chainIds, []);
  t.deepEqual(lifted.body.paymentSetting?.allowedChains, []);
});

test('allowedChains naming a chain without a payment method, or other networks than paymentMethods.chainIds, is a 400 naming the field, with nothing written', async (t) => {
  const { weir, api, customerId } = await merchantOnTwoChains(t);
  const draft = (await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems })).body;
  const noMethod = { paymentSetting: { allowedChains: [{ chainId: TEST_CHAIN }, { chainId: 11_155_111 }] } };
  const refusedChain = {
    field: 'paymentSetting.allowedChains[1].chainId',
    code: 'payment_method_not_available',
    message: /chain 11155111 has no payment method .*withdrawal-addresses, or use one of 7357, 84532/,
  };
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/invoices', { customerId, lineItems, ...noMethod }),
    refusedChain,
  );
  await assertRejectedWithoutWrite(t, weir, () => api.put(`/api/v1/invoices/${draft.id}`, noMethod), refusedChain);

  const both = {
    paymentMethods: { chainIds: [TEST_CHAIN] },
    paymentSetting: { allowedChains: [{ chainId: BASE_SEPOLIA }] },
  };
  const disagree = { field: 'paymentSetting.allowedChains', message: /paymentMethods\.chainIds names 7357/ };
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/invoices', { customerId, lineItems, ...both }),
    disagree,
  );
  await assertRejectedWithoutWrite(t, weir, () => api.put(`/api/v1/invoices/${draft.id}`, both), disagree);

  // The same networks in both, or one list empty, are one restriction.
  const agreed = await api.post<Invoice>('/api/v1/invoices', {
    customerId,
    lineItems,
    paymentMethods: { chainIds: [BASE_SEPOLIA, TEST_CHAIN] },
    paymentSetting: { allowedChains: [{ chainId: TEST_CHAIN }, { chainId: BASE_SEPOLIA }] },
  });
  t.is(agreed.status, 200, JSON.stringify(agreed.body));
  const emptyOne = await api.put<Invoice>(`/api/v1/invoices/${draft.id}`, {
    paymentMethods: { chainIds: [BASE_SEPOLIA] },
    paymentSetting: { allowedChains: [] },
  });
  t.deepEqual(emptyOne.body.paymentMethods.chainIds, [BASE_SEPOLIA]);

  // A per-invoice withdrawal address would send the money elsewhere: refused, not ignored.
  assertError(
    t,
    await api.post('/api/v1/invoices', {
      customerId,
      lineItems,
      paymentSetting: { allowedChains: [{ chainId: TEST_CHAIN, withdrawalAddress: MERCHANT_WALLET }] },
    }),
    400,
    { field: 'paymentSetting.allowedChains[0].withdrawalAddress' },
  );
});

test("paymentSetting.preferredChainId, one of the invoice's networks, shows in its answer and is the pay page session's preferred chain", async (t) => {
  const { weir, api, customerId } = await merchantOnTwoChains(t);
  const created = await api.post<Invoice>('/api/v1/invoices', {
    customerId,
    lineItems,
    paymentSetting: {
      allowedChains: [{ chainId: TEST_CHAIN }, { chainId: BASE_SEPOLIA }],
      preferredChainId: BASE_SEPOLIA,
    },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  t.like(created.body.paymentSetting, { preferredChainId: BASE_SEPOLIA });
  t.false('preferredChainId' in created.body, 'shown in its payment setting only');
  const copy = await api.post<Invoice>(`/api/v1/invoices/${created.body.id}/duplicate`);
  t.like(copy.body.paymentSetting, {
    preferredChainId: BASE_SEPOLIA,
    allowedChains: created.body.paymentSetting?.allowedChains,
  });

  // Without a restriction, any network with a payment method may be preferred; an update changes it.
  const open = (await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems })).body;
  t.is(open.paymentSetting?.preferredChainId, null, "the organization's, which has none");
  const preferred = await api.put<Invoice>(`/api/v1/invoices/${open.id}`, {
    paymentSetting: { preferredChainId: TEST_CHAIN },
  });
  t.is(preferred.status, 200, JSON.stringify(preferred.body));
  t.like(preferred.body.paymentSetting, { preferredChainId: TEST_CHAIN, allowedChains: [] });

  for (const id of [created.body.id, open.id]) t.is((await api.post(`/api/v1/invoices/${id}/finalize`)).status, 200);
  t.deepEqual(await offeredChains(weir, api, created.body.id), {
    addresses: [TEST_CHAIN, BASE_SEPOLIA],
    allowedChains: [TEST_CHAIN, BASE_SEPOLIA],
    preferredChainId: BASE_SEPOLIA,
  });
  t.is((await offeredChains(weir, api, open.id)).preferredChainId, TEST_CHAIN);
});

test("a preferredChainId that is not one of the invoice's networks is a 400 naming it, with nothing written", async (t) => {
  const { weir, api, customerId } = await merchantOnTwoChains(t);
  const notAllowed = (by: string) => ({
    field: 'paymentSetting.preferredChainId',
    message: new RegExp(
      `chain 84532 is not one of the invoice's networks \\(7357: those of ${by} with a payment method of this organization and an asset in USDC\\)`,
    ),
  });
  for (const [networks, by] of [
    [
      { paymentSetting: { allowedChains: [{ chainId: TEST_CHAIN }], preferredChainId: BASE_SEPOLIA } },
      'paymentSetting\\.allowedChains',
    ],
    [
      { paymentMethods: { chainIds: [TEST_CHAIN] }, paymentSetting: { preferredChainId: BASE_SEPOLIA } },
      'paymentMethods\\.chainIds',
    ],
  ] as const)
    await assertRejectedWithoutWrite(
      t,
      weir,
      () => api.post('/api/v1/invoices', { customerId, lineItems, ...networks }),
      notAllowed(by),
    );
  // Without a restriction, a network without a payment method.
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/invoices', { customerId, lineItems, paymentSetting: { preferredChainId: 11_155_111 } }),
    {
      field: 'paymentSetting.preferredChainId',
      message:
        /chain 11155111 is not one of the invoice's networks \(7357, 84532: every network with a payment method of this organization and an asset in USDC\)/,
    },
  );

  // Narrowing a draft's networks away from its preferred chain.
  const draft = await draftPreferringBase(api, customerId);
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.put(`/api/v1/invoices/${draft.id}`, { paymentSetting: { allowedChains: [{ chainId: TEST_CHAIN }] } }),
    { ...notAllowed('paymentSetting\\.allowedChains'), message: /sending it with the new networks/ },
  );
  const moved = await api.put<Invoice>(`/api/v1/invoices/${draft.id}`, {
    paymentSetting: { allowedChains: [{ chainId: TEST_CHAIN }], preferredChainId: TEST_CHAIN },
  });
  t.like(moved.body.paymentSetting, { allowedChains: [{ chainId: TEST_CHAIN }], preferredChainId: TEST_CHAIN });
});

test('paymentMethods.chainIds and assetIds naming a network or asset without a payment method, an unknown asset, or one off the networks, are a 400 naming the field, with nothing written', async (t) => {
  const { weir, api, customerId } = await merchantOnTwoChains(t);
  const draft = (await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems })).body;
  const SEPOLIA = 11_155_111;
  const refusals: [Record<string, unknown>, { field: string; code?: string; message: RegExp }][] = [
    [
      { paymentMethods: { chainIds: [TEST_CHAIN, SEPOLIA] } },
      {
        field: 'paymentMethods.chainIds[1]',
        code: 'payment_method_not_available',
        message: /chain 11155111 has no payment method .*withdrawal-addresses, or use one of 7357, 84532/,
      },
    ],
    [
      { paymentMethods: { assetIds: [TEST_USDC, 'sepolia:usdc'] } },
      {
        field: 'paymentMethods.assetIds[1]',
        code: 'parameter_invalid',
        message:
          /sepolia:usdc is not an asset of Weir's test networks \(GET \/api\/v1\/assets lists them\); use one of .*weir-testnet:usdc.*base-sepolia:usdc/,
      },
    ],
    [
      { paymentMethods: { chainIds: [TEST_CHAIN], assetIds: [TEST_USDC, BASE_USDC] } },
      {
        field: 'paymentMethods.assetIds[1]',
        message: /asset base-sepolia:usdc is on chain 84532, not one of the invoice's networks \(7357\)/,
      },
    ],
  ];
  for (const [body, expected] of refusals) {
    await assertRejectedWithoutWrite(
      t,
      weir,
      () => api.post('/api/v1/invoices', { customerId, lineItems, ...body }),
      expected,
    );
    await assertRejectedWithoutWrite(t, weir, () => api.put(`/api/v1/invoices/${draft.id}`, body), expected);
  }
  // Narrowing the networks away from the assets a draft keeps names those assets, saying they were kept.
  const withAssets = await api.put<Invoice>(`/api/v1/invoices/${draft.id}`, {
    paymentMethods: { chainIds: [], assetIds: [BASE_USDC] },
  });
  t.is(withAssets.status, 200, JSON.stringify(withAssets.body));
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.put(`/api/v1/invoices/${draft.id}`, { paymentSetting: { allowedChains: [{ chainId: TEST_CHAIN }] } }),
    { field: 'paymentMethods.assetIds[0]', message: /not one of the invoice's networks \(7357\).*kept from the draft/ },
  );

  // A network Weir offers whose payment method was removed: its chain and its assets are refused until it is added back.
  await removeBaseWallet(t, api);
  const onBase = { paymentMethods: { chainIds: [BASE_SEPOLIA], assetIds: [BASE_USDC] } };
  await assertRejectedWithoutWrite(t, weir, () => api.put(`/api/v1/invoices/${draft.id}`, onBase), {
    field: 'paymentMethods.chainIds[0]',
    code: 'payment_method_not_available',
    message: /chain 84532 has no payment method .*or use one of 7357$/,
  });
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.put(`/api/v1/invoices/${draft.id}`, { paymentMethods: { assetIds: [BASE_USDC] } }),
    {
      field: 'paymentMethods.assetIds[0]',
      code: 'payment_method_not_available',
      message: /asset base-sepolia:usdc is on chain 84532, which has no payment method/,
    },
  );
  const added = await api.post('/api/v1/organization/withdrawal-addresses', {
    chainId: BASE_SEPOLIA,
    address: MERCHANT_WALLET,
  });
  t.is(added.status, 200, JSON.stringify(added.body));
  const ok = await api.put<Invoice>(`/api/v1/invoices/${draft.id}`, onBase);
  t.is(ok.status, 200, JSON.stringify(ok.body));
  t.deepEqual(ok.body.paymentMethods, onBase.paymentMethods);
});

test("finalize and send refuse a draft whose network's payment method was removed since it was written, naming the field; it finalizes once the draft is changed", async (t) => {
  const { weir, api, customerId } = await merchantOnTwoChains(t);
  const draft = (
    await api.post<Invoice>('/api/v1/invoices', {
      customerId,
      lineItems,
      paymentMethods: { chainIds: [TEST_CHAIN, BASE_SEPOLIA], assetIds: [BASE_USDC] },
    })
  ).body;
  await removeBaseWallet(t, api);

  const removed = {
    field: 'paymentMethods.chainIds[1]',
    code: 'payment_method_not_available',
    message: new RegExp(
      `chain 84532 has no payment method .*change the draft's paymentMethods \\(PUT /api/v1/invoices/${draft.id}\\) before finalizing`,
    ),
  };
  await assertFinalizeRefused(t, weir, api, draft.id, removed);

  const changed = await api.put<Invoice>(`/api/v1/invoices/${draft.id}`, {
    paymentMethods: { chainIds: [TEST_CHAIN], assetIds: [TEST_USDC] },
  });
  t.is(changed.status, 200, JSON.stringify(changed.body));
  const finalized = await api.post(`/api/v1/invoices/${draft.id}/finalize`);
  t.is(finalized.status, 200, JSON.stringify(finalized.body));
});

test("finalize and send refuse a draft limited to an asset whose network's payment method was removed; the dashboard words it for the finalize or send, and an update fixes it", async (t) => {
  const { weir, api, customerId } = await merchantOnTwoChains(t);
  const draft = (
    await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems, paymentMethods: { assetIds: [BASE_USDC] } })
  ).body;
  await removeBaseWallet(t, api);

  const field = 'paymentMethods.assetIds[0]';
  const refusal = {
    field,
    code: 'payment_method_not_available',
    message: new RegExp(
      `^${field.replace(/[.[\]]/g, '\\$&')}: asset base-sepolia:usdc is on chain 84532, which has no payment method of this organization in the test environment; .*change the draft's paymentMethods \\(PUT /api/v1/invoices/${draft.id}\\) before finalizing$`,
    ),
  };
  await assertFinalizeRefused(t, weir, api, draft.id, refusal);
  for (const action of ['finalize', 'send'] as const) {
    const answer = await api.post<{ message: string }>(`/api/v1/invoices/${draft.id}/${action}`);
    const shown = messageOf(answer.body.message, field, action);
    t.is(
      shown,
      `This draft was not ${action === 'send' ? 'sent' : 'finalized'}: it is limited to assets set through the API, and asset base-sepolia:usdc is on chain 84532, which has no payment method of this organization in the test environment. Update the draft's paymentMethods.assetIds through the API (PUT /api/v1/invoices/${draft.id}) to assets it can be paid in, or to an empty list (every asset of its networks), or add a wallet for chain 84532 again; then ${action} it again.`,
    );
    t.notRegex(shown, /tick/i, 'the finalize or send request ticked no network');
  }

  // The update the message names, with an empty list: every asset of its networks.
  const updated = await api.put<Invoice>(`/api/v1/invoices/${draft.id}`, { paymentMethods: { assetIds: [] } });
  t.is(updated.status, 200, JSON.stringify(updated.body));
  t.is((await api.post(`/api/v1/invoices/${draft.id}/finalize`)).status, 200);
  t.deepEqual(await offeredAssets(weir, api, draft.id), [TEST_USDC]);
});

test("paymentMethods.assetIds restricts the pay page's session to those assets; without them it offers every asset of the invoice's currency on its networks", async (t) => {
  const { weir, api, customerId } = await merchantOnTwoChains(t);
  const onlyTestUsdc = await api.post<Invoice>('/api/v1/invoices', {
    customerId,
    lineItems,
    paymentMethods: { assetIds: [TEST_USDC] },
  });
  t.is(onlyTestUsdc.status, 200, JSON.stringify(onlyTestUsdc.body));
  const onlyBaseUsdc = await api.post<Invoice>('/api/v1/invoices', {
    customerId,
    lineItems,
    paymentSetting: { allowedChains: [{ chainId: TEST_CHAIN }, { chainId: BASE_SEPOLIA }] },
    paymentMethods: { assetIds: [BASE_USDC] },
  });
  t.is(onlyBaseUsdc.status, 200, JSON.stringify(onlyBaseUsdc.body));
  const open = (await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems })).body;
  for (const id of [onlyTestUsdc.body.id, onlyBaseUsdc.body.id, open.id])
    t.is((await api.post(`/api/v1/invoices/${id}/finalize`)).status, 200);

  t.deepEqual(await offeredAssets(weir, api, onlyTestUsdc.body.id), [TEST_USDC]);
  t.deepEqual(await offeredChains(weir, api, onlyTestUsdc.body.id), {
    addresses: [TEST_CHAIN],
    allowedChains: [TEST_CHAIN],
    preferredChainId: null,
  });
  t.deepEqual(await offeredAssets(weir, api, onlyBaseUsdc.body.id), [BASE_USDC]);
  t.deepEqual(await offeredAssets(weir, api, open.id), [BASE_USDC, TEST_USDC]);
});

test("an asset that cannot pay the invoice's currency is a 400 naming paymentMethods.assetIds[i] at create, update and finalize, with nothing written", async (t) => {
  const { weir, api, customerId } = await merchantOnTwoChains(t);
  const dai = {
    field: 'paymentMethods.assetIds[1]',
    code: 'parameter_invalid',
    message:
      /asset weir-testnet:dai is DAI, which cannot pay an invoice in USDC: .*use an asset in USDC \(weir-testnet:usdc, base-sepolia:usdc\)/,
  };
  const withDai = { paymentMethods: { assetIds: [TEST_USDC, TEST_DAI] } };
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/invoices', { customerId, lineItems, ...withDai }),
    dai,
  );
  const draft = (
    await api.post<Invoice>('/api/v1/invoices', { customerId, lineItems, paymentMethods: { assetIds: [TEST_USDC] } })
  ).body;
  await assertRejectedWithoutWrite(t, weir, () => api.put(`/api/v1/invoices/${draft.id}`, withDai), dai);

  // New lines in another currency while the draft keeps its USDC asset: that asset is named, saying it was kept.
  const daiLines = {
    data: [{ priceData: { currency: 'dai', unitAmount: '100000000', productData: { name: 'Setup' } }, quantity: 1 }],
  };
  await assertRejectedWithoutWrite(t, weir, () => api.put(`/api/v1/invoices/${draft.id}`, { lineItems: daiLines }), {
    field: 'paymentMethods.assetIds[0]',
    message: /asset weir-testnet:usdc is USDC, which cannot pay an invoice in DAI.*kept from the draft/,
  });
  const both = await api.put<Invoice>(`/api/v1/invoices/${draft.id}`, {
    lineItems: daiLines,
    paymentMethods: { assetIds: [TEST_DAI] },
  });
  t.is(both.status, 200, JSON.stringify(both.body));

  // A draft an older Weir let keep an asset in another currency is refused at finalize, naming it.
  const doc = (await weir.readStore.collection<InvoiceDoc>(INVOICES).get(draft.id))!;
  const written = await weir.commands.handle(
    invoiceAggregate,
    draft.id,
    { type: 'UpdateInvoice', changes: { paymentMethods: { chainIds: [], assetIds: [TEST_DAI, TEST_USDC] } } },
    { organizationId: doc.organizationId, environment: doc.environment, actor: 'test' },
  );
  if (written.position !== null) await weir.projections.waitFor(written.position);
  await assertRejectedWithoutWrite(t, weir, () => api.post(`/api/v1/invoices/${draft.id}/finalize`), {
    field: 'paymentMethods.assetIds[1]',
    message: new RegExp(
      `asset weir-testnet:usdc is USDC, which cannot pay an invoice in DAI.*PUT /api/v1/invoices/${draft.id}\\) before finalizing`,
    ),
  });
  t.is((await api.get<{ status: string }>(`/api/v1/invoices/${draft.id}`)).body.status, 'draft');
});

test("an open invoice whose preferred network's payment method was removed after it was finalized still opens a session for the payer, preferring none", async (t) => {
  const { weir, api, customerId } = await merchantOnTwoChains(t);
  const created = await api.post<Invoice>('/api/v1/invoices', {
    customerId,
    lineItems,
    paymentSetting: { preferredChainId: BASE_SEPOLIA },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  t.is((await api.post(`/api/v1/invoices/${created.body.id}/finalize`)).status, 200);
  await removeBaseWallet(t, api);
  // The API refuses such a preference on a session it is asked for; the payer is not refused for a setting gone stale.
  t.deepEqual(await offeredChains(weir, api, created.body.id), {
    addresses: [TEST_CHAIN],
    allowedChains: [TEST_CHAIN],
    preferredChainId: null,
  });
});

test("paymentSetting.preferredChainId null on update clears a draft's preferred chain: the organization's applies again", async (t) => {
  const { weir, api, customerId } = await merchantOnTwoChains(t);
  const org = await api.put('/api/v1/organization/payment-setting', { preferredChainId: TEST_CHAIN });
  t.is(org.status, 200, JSON.stringify(org.body));
  const draft = await draftPreferringBase(api, customerId);
  t.is(draft.paymentSetting?.preferredChainId, BASE_SEPOLIA);

  const cleared = await api.put<Invoice>(`/api/v1/invoices/${draft.id}`, {
    paymentSetting: { preferredChainId: null },
  });
  t.is(cleared.status, 200, JSON.stringify(cleared.body));
  t.is(cleared.body.paymentSetting?.preferredChainId, TEST_CHAIN, "the organization's");
  t.false('preferredChainId' in (await weir.readStore.collection<InvoiceDoc>(INVOICES).get(draft.id))!, 'none stored');
  // Clearing what is already cleared changes nothing.
  const before = await logLength(weir);
  const again = await api.put(`/api/v1/invoices/${draft.id}`, { paymentSetting: { preferredChainId: null } });
  t.is(again.status, 200, JSON.stringify(again.body));
  t.is(await logLength(weir), before);

  t.is((await api.post(`/api/v1/invoices/${draft.id}/finalize`)).status, 200);
  t.is((await offeredChains(weir, api, draft.id)).preferredChainId, TEST_CHAIN);
});

test('finalize and send refuse a draft whose preferred chain is no longer one of its networks, naming paymentSetting.preferredChainId; clearing it lets it finalize', async (t) => {
  const { weir, api, customerId } = await merchantOnTwoChains(t);
  const draft = await draftPreferringBase(api, customerId);
  await removeBaseWallet(t, api);

  const stale = {
    field: 'paymentSetting.preferredChainId',
    message: new RegExp(
      `chain 84532 is not one of the invoice's networks \\(7357: every network with a payment method of this organization and an asset in USDC\\): prefer one of them, or clear it .*PUT /api/v1/invoices/${draft.id} before finalizing`,
    ),
  };
  await assertFinalizeRefused(t, weir, api, draft.id, stale);

  const cleared = await api.put(`/api/v1/invoices/${draft.id}`, { paymentSetting: { preferredChainId: null } });
  t.is(cleared.status, 200, JSON.stringify(cleared.body));
  const finalized = await api.post(`/api/v1/invoices/${draft.id}/finalize`);
  t.is(finalized.status, 200, JSON.stringify(finalized.body));
});

test("a preferredChainId on a network with no asset in the invoice's currency (or of its assets) is a 400 listing the networks that have one, on create, update and finalize", async (t) => {
  const { weir, api, customerId } = await merchantOnTwoChains(t);
  // The test network has DAI, Base Sepolia none.
  const daiLines = {
    data: [{ priceData: { currency: 'dai', unitAmount: '100000000', productData: { name: 'Mug' } }, quantity: 1 }],
  };
  const noDai = {
    field: 'paymentSetting.preferredChainId',
    message:
      /^paymentSetting\.preferredChainId: chain 84532 is not one of the invoice's networks \(7357: every network with a payment method of this organization and an asset in DAI\): prefer one of them$/,
  };
  const invoices = '/api/v1/invoices';
  const preferBase = { paymentSetting: { preferredChainId: BASE_SEPOLIA } };
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(invoices, { customerId, lineItems: daiLines, ...preferBase }),
    noDai,
  );
  const daiDraft = (await api.post<Invoice>(invoices, { customerId, lineItems: daiLines })).body;
  await assertRejectedWithoutWrite(t, weir, () => api.put(`${invoices}/${daiDraft.id}`, preferBase), noDai);

  // A draft preferring Base Sepolia whose lines move to DAI keeps a preference its pay page would drop.
  const draft = await draftPreferringBase(api, customerId);
  await assertRejectedWithoutWrite(t, weir, () => api.put(`${invoices}/${draft.id}`, { lineItems: daiLines }), {
    ...noDai,
    message: /chain 84532 .*an asset in DAI\): prefer one of them, sending it with the new lineItems$/,
  });
  // Assets it is limited to leave Base Sepolia with nothing to offer.
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post(invoices, { customerId, lineItems, paymentMethods: { assetIds: [TEST_USDC] }, ...preferBase }),
    {
      ...noDai,
      message:
        /chain 84532 is not one of the invoice's networks \(7357: every network with a payment method of this organization and an asset of paymentMethods\.assetIds in USDC\)/,
    },
  );

  // A draft an older Weir let prefer such a network is refused at finalize and send.
  const doc = (await weir.readStore.collection<InvoiceDoc>(INVOICES).get(daiDraft.id))!;
  const written = await weir.commands.handle(
    invoiceAggregate,
    daiDraft.id,
    { type: 'UpdateInvoice', changes: { preferredChainId: BASE_SEPOLIA } },
    { organizationId: doc.organizationId, environment: doc.environment, actor: 'test' },
  );
  if (written.position !== null) await weir.projections.waitFor(written.position);
  await assertFinalizeRefused(t, weir, api, daiDraft.id, {
    ...noDai,
    message: new RegExp(
      `chain 84532 .*an asset in DAI\\): prefer one of them, or clear it .*PUT /api/v1/invoices/${daiDraft.id} before finalizing`,
    ),
  });
  const preferTest = await api.put(`${invoices}/${daiDraft.id}`, { paymentSetting: { preferredChainId: TEST_CHAIN } });
  t.is(preferTest.status, 200, JSON.stringify(preferTest.body));
  t.is((await api.post(`${invoices}/${daiDraft.id}/finalize`)).status, 200);
});
