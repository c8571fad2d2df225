import test from 'ava';
import { getAddress } from 'viem';
import { organizationAggregate, organizationRecordId } from '../../src/actors/organization.ts';
import { forwarderImplementationAddress } from '../../src/chain-ingest/evm/contracts/deposit-address.ts';
import { apiClient } from '../support/api-client.ts';
import {
  ADMIN_TOKEN,
  MERCHANT_WALLET,
  createMerchant,
  sessionRequest,
  startTestWeir,
} from '../support/weir-harness.ts';
import {
  appendOldWallet,
  assertError,
  BASE_SEPOLIA,
  BASE_SEPOLIA_FACTORY,
  assertRejectedWithoutWrite,
  startWeirWithBaseSepolia,
  type Page,
  type Session,
} from './helpers.ts';

type WithdrawalAddress = { id: string; name: string; address: string; chainId: number; isDefault: boolean };
type Organization = {
  id: string;
  name: string;
  email: string | null;
  supportEmail: string | null;
  websiteUrl: string | null;
  supportUrl: string | null;
  privacyUrl: string | null;
  termsUrl: string | null;
  phone: string | null;
  taxIdentificationNumber: string | null;
  brandColor: string | null;
  brandLogo: string | null;
  addressDetails: { line1: string | null; city: string | null; country: string | null };
  addresses: WithdrawalAddress[];
};
type PaymentSetting = {
  preferredChainId: number | null;
  preferredCurrency: string | null;
  allowSwap: boolean;
  applyGasFee: boolean;
  slippagePercentage: number;
  allowedChains?: { chainId: number; withdrawalAddress: string | null }[];
};

const SECOND_WALLET = '0x00000000000000000000000000000000c0ffee01';
const THIRD_WALLET = '0x00000000000000000000000000000000c0ffee02';

/** An organization made over the admin API, without any payment method. */
async function bareOrganization(baseUrl: string, name = 'Bare Shop') {
  const created = await apiClient(baseUrl, ADMIN_TOKEN).post<{ organizationId: string; testSecretKey: string }>(
    '/admin/organizations',
    { name },
  );
  if (created.status !== 200) throw new Error(JSON.stringify(created.body));
  return Object.assign(apiClient(baseUrl, created.body.testSecretKey), { organizationId: created.body.organizationId });
}

test('a session needs a payment method first; adding a wallet makes it work', async (t) => {
  const weir = await startTestWeir(t);
  const api = await bareOrganization(weir.url);

  const body = await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/checkout/sessions', sessionRequest()),
    { code: 'payment_method_not_available' },
  );
  t.regex(body.message, /payment method/);
  t.regex(body.message, /withdrawal-addresses/, 'the message says how to fix it');
  t.deepEqual((await api.get<WithdrawalAddress[]>('/api/v1/organization/withdrawal-addresses')).body, []);

  const wallet = await api.post<WithdrawalAddress>('/api/v1/organization/withdrawal-addresses', {
    chainId: 7357,
    address: MERCHANT_WALLET,
    name: 'treasury',
  });
  t.is(wallet.status, 200, JSON.stringify(wallet.body));
  t.is((await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).status, 200);

  // Removing the only wallet makes sessions impossible again.
  t.is((await api.delete(`/api/v1/organization/withdrawal-addresses/${wallet.body.id}`)).status, 200);
  assertError(t, await api.post('/api/v1/checkout/sessions', sessionRequest()), 400, {
    code: 'payment_method_not_available',
  });
});

test('business details: GET and PUT /api/v1/organization, with email and URL fields validated', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Acme');
  const initial = await api.get<Organization>('/api/v1/organization');
  t.is(initial.status, 200);
  t.is(initial.body.name, 'Acme');
  t.is(initial.body.email, null);
  t.is(initial.body.addresses.length, 1, 'the payment methods come along');

  const updated = await api.put<Organization>('/api/v1/organization', {
    name: 'Acme Corp',
    email: 'billing@acme.example',
    supportEmail: 'help@acme.example',
    websiteUrl: 'https://acme.example',
    privacyUrl: 'https://acme.example/privacy',
    termsUrl: 'https://acme.example/terms',
    phone: '+1 555 0100',
    taxIdentificationNumber: 'DE123',
    addressDetails: { line1: '1 Main St', city: 'Springfield' },
  });
  t.is(updated.status, 200, JSON.stringify(updated.body));
  t.is(updated.body.name, 'Acme Corp');
  t.is(updated.body.email, 'billing@acme.example');
  t.is(updated.body.websiteUrl, 'https://acme.example');
  t.is(updated.body.addressDetails.city, 'Springfield');

  // A partial update keeps what it does not mention, including the other address lines.
  const partial = await api.put<Organization>('/api/v1/organization', { addressDetails: { country: 'US' } });
  t.is(partial.body.name, 'Acme Corp');
  t.is(partial.body.addressDetails.line1, '1 Main St');
  t.is(partial.body.addressDetails.country, 'US');
  t.deepEqual((await api.get<Organization>('/api/v1/organization')).body, partial.body);

  // null clears a field (and an address part); the name cannot be cleared.
  const cleared = await api.put<Organization>('/api/v1/organization', {
    phone: null,
    websiteUrl: null,
    addressDetails: { line1: null },
  });
  t.is(cleared.status, 200, JSON.stringify(cleared.body));
  t.is(cleared.body.phone, null);
  t.is(cleared.body.websiteUrl, null);
  t.is(cleared.body.addressDetails.line1, null);
  t.is(cleared.body.addressDetails.city, 'Springfield');
  t.is(cleared.body.email, 'billing@acme.example', 'what was not sent is unchanged');
  await assertRejectedWithoutWrite(t, weir, () => api.put('/api/v1/organization', { name: null }), {
    message: /nothing to update/,
  });

  for (const [field, value] of [
    ['email', 'not-an-email'],
    ['email', 'a@b'],
    ['supportEmail', 'two words@x.example'],
    ['websiteUrl', 'acme.example'],
    ['supportUrl', 'ftp://acme.example'],
    ['privacyUrl', 'javascript:alert(1)'],
    ['termsUrl', 12],
    ['name', ''],
    ['phone', 'x'.repeat(65)],
  ] as const) {
    await assertRejectedWithoutWrite(t, weir, () => api.put('/api/v1/organization', { [field]: value }), { field });
  }
  await assertRejectedWithoutWrite(t, weir, () => api.put('/api/v1/organization', {}), {
    message: /nothing to update/,
  });
  await assertRejectedWithoutWrite(t, weir, () => api.put('/api/v1/organization', { addressDetails: { city: 5 } }), {
    field: 'addressDetails.city',
  });
  t.is(
    (await api.get<Organization>('/api/v1/organization')).body.email,
    'billing@acme.example',
    'refused updates changed nothing',
  );
});

test("the organization has the reference's type, owner, size bands and feature requests; the size bands are settable", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Acme');
  t.like((await api.get('/api/v1/organization')).body, {
    type: 'business',
    ownerId: null,
    noOfEmployees: null,
    monthlyPaymentVolume: null,
    featureAccessRequests: [],
  });
  const updated = await api.put('/api/v1/organization', { noOfEmployees: '11-50', monthlyPaymentVolume: '10k-50k' });
  t.like(updated.body, { noOfEmployees: '11-50', monthlyPaymentVolume: '10k-50k' });
  t.like((await api.get('/api/v1/organization')).body, { noOfEmployees: '11-50', monthlyPaymentVolume: '10k-50k' });
  await assertRejectedWithoutWrite(t, weir, () => api.put('/api/v1/organization', { noOfEmployees: 12 }), {
    field: 'noOfEmployees',
  });
  // Deleting the logo answers as the reference does, and leaves the colour.
  await api.put('/api/v1/organization/brand', { brandColor: '#abc', brandLogo: 'https://cdn.example/logo.png' });
  t.deepEqual((await api.delete('/api/v1/organization/brand-logo')).body, {
    message: 'brand logo deleted',
    statusCode: 200,
  });
  t.like((await api.get('/api/v1/organization')).body, { brandLogo: null, brandColor: '#abc' });
});

test('branding: PUT /api/v1/organization/brand validates the hex color', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const brand = await api.put<Organization>('/api/v1/organization/brand', {
    brandColor: '#1A2b3c',
    brandLogo: 'https://cdn.example/logo.png',
  });
  t.is(brand.status, 200, JSON.stringify(brand.body));
  t.is(brand.body.brandColor, '#1A2b3c');
  t.is(brand.body.brandLogo, 'https://cdn.example/logo.png');
  t.is((await api.put<Organization>('/api/v1/organization/brand', { brandColor: '#abc' })).body.brandColor, '#abc');
  t.is(
    (await api.get<Organization>('/api/v1/organization')).body.brandLogo,
    'https://cdn.example/logo.png',
    'a color-only update keeps the logo',
  );

  for (const brandColor of [
    'red',
    '#12345',
    '#gggggg',
    '123456',
    '#1234567',
    'url(javascript:x)',
    '#fff;background:url(x)',
    7,
  ]) {
    await assertRejectedWithoutWrite(t, weir, () => api.put('/api/v1/organization/brand', { brandColor }), {
      field: 'brandColor',
    });
  }
  await assertRejectedWithoutWrite(t, weir, () => api.put('/api/v1/organization/brand', {}), {
    field: 'brandColor',
    code: 'parameter_missing',
  });
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.put('/api/v1/organization/brand', { brandLogo: 'data:image/png;base64,AAAA' }),
    { field: 'brandLogo' },
  );
  t.is((await api.get<Organization>('/api/v1/organization')).body.brandColor, '#abc');
});

test('payment settings: GET and PUT /api/v1/organization/payment-setting', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const initial = await api.get<PaymentSetting>('/api/v1/organization/payment-setting');
  t.is(initial.status, 200);
  t.is(initial.body.preferredChainId, null);
  t.false(initial.body.allowSwap);
  t.deepEqual(initial.body.allowedChains, [{ chainId: 7357, withdrawalAddress: MERCHANT_WALLET }]);

  const updated = await api.put<PaymentSetting>('/api/v1/organization/payment-setting', {
    preferredChainId: 7357,
    preferredCurrency: 'usdc',
    allowSwap: true,
    slippagePercentage: 2.5,
  });
  t.is(updated.status, 200, JSON.stringify(updated.body));
  t.is(updated.body.preferredChainId, 7357);
  t.is(updated.body.preferredCurrency, 'usdc');
  t.true(updated.body.allowSwap);
  t.is(updated.body.slippagePercentage, 2.5);
  const read = (await api.get<PaymentSetting>('/api/v1/organization/payment-setting')).body;
  t.is(read.preferredChainId, 7357);
  t.true(read.allowSwap);
  // A new session takes the organization's preferred chain.
  const session = (
    await api.post<Session & { paymentSetting: { preferredChainId: number | null } }>(
      '/api/v1/checkout/sessions',
      sessionRequest(),
    )
  ).body;
  t.is(session.paymentSetting.preferredChainId, 7357);

  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.put('/api/v1/organization/payment-setting', { preferredChainId: 1 }),
    { field: 'preferredChainId', message: /not offered/ },
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.put('/api/v1/organization/payment-setting', { preferredChainId: '7357' }),
    { field: 'preferredChainId' },
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.put('/api/v1/organization/payment-setting', { preferredCurrency: 'doge' }),
    { field: 'preferredCurrency' },
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.put('/api/v1/organization/payment-setting', { allowSwap: 'yes' }),
    { field: 'allowSwap' },
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.put('/api/v1/organization/payment-setting', { slippagePercentage: 101 }),
    { field: 'slippagePercentage' },
  );
  await assertRejectedWithoutWrite(t, weir, () => api.put('/api/v1/organization/payment-setting', { applyFee: true }), {
    field: 'applyFee',
  });
  await assertRejectedWithoutWrite(t, weir, () => api.put('/api/v1/organization/payment-setting', {}), {
    message: /nothing to update/,
  });
});

test('withdrawal addresses: create, list, get, update, mark as default, delete', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const [first] = (await api.get<WithdrawalAddress[]>('/api/v1/organization/withdrawal-addresses')).body;
  t.like(first, { chainId: 7357, address: MERCHANT_WALLET, name: 'treasury', isDefault: true });

  const second = await api.post<WithdrawalAddress>('/api/v1/organization/withdrawal-addresses', {
    chainId: 7357,
    address: SECOND_WALLET,
    name: 'cold',
  });
  t.is(second.status, 200, JSON.stringify(second.body));
  t.like(second.body, { chainId: 7357, address: getAddress(SECOND_WALLET), name: 'cold', isDefault: false });
  t.regex(second.body.id, /^[0-9a-f-]{36}$/);
  t.is((await api.get<WithdrawalAddress[]>('/api/v1/organization/withdrawal-addresses')).body.length, 2);
  t.deepEqual(
    (await api.get<WithdrawalAddress>(`/api/v1/organization/withdrawal-addresses/${second.body.id}`)).body,
    second.body,
  );
  // Shown in its EIP-55 checksum, as typed or not. The same address twice on one chain is refused (in any letter case).
  await assertRejectedWithoutWrite(
    t,
    weir,
    () =>
      api.post('/api/v1/organization/withdrawal-addresses', {
        chainId: 7357,
        address: SECOND_WALLET.toUpperCase().replace('0X', '0x'),
      }),
    { field: 'address', code: 'resource_already_exists' },
  );

  const renamed = await api.put<WithdrawalAddress>(`/api/v1/organization/withdrawal-addresses/${second.body.id}`, {
    name: 'cold storage',
    address: THIRD_WALLET,
  });
  t.is(renamed.status, 200, JSON.stringify(renamed.body));
  t.like(renamed.body, { name: 'cold storage', address: getAddress(THIRD_WALLET), isDefault: false });
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.put(`/api/v1/organization/withdrawal-addresses/${second.body.id}`, { address: 'nope' }),
    { field: 'address', code: 'incorrect_address' },
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () =>
      api.put(`/api/v1/organization/withdrawal-addresses/${second.body.id}`, {
        address: '0x5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1f',
      }),
    { field: 'address', code: 'incorrect_address', message: /EIP-55 checksum/ },
  );

  // Sessions pay into the default wallet of the chain; marking another default moves new sessions there.
  // The reference answers an action with `{message, statusCode}`; the record shows the change.
  const marked = await api.post(`/api/v1/organization/withdrawal-addresses/${second.body.id}/mark-as-default`);
  t.deepEqual(marked.body, { message: 'withdrawal address marked as default', statusCode: 200 });
  t.true(
    (await api.get<WithdrawalAddress>(`/api/v1/organization/withdrawal-addresses/${second.body.id}`)).body.isDefault,
  );
  const all = (await api.get<WithdrawalAddress[]>('/api/v1/organization/withdrawal-addresses')).body;
  t.deepEqual(
    all.filter((w) => w.isDefault).map((w) => w.id),
    [second.body.id],
    'exactly one default per chain',
  );
  t.is(
    (await api.get<PaymentSetting>('/api/v1/organization/payment-setting')).body.allowedChains![0]!.withdrawalAddress,
    getAddress(THIRD_WALLET),
  );
  // Marking the default again is harmless.
  t.is((await api.post(`/api/v1/organization/withdrawal-addresses/${second.body.id}/mark-as-default`)).status, 200);
  t.true(
    (await api.get<WithdrawalAddress>(`/api/v1/organization/withdrawal-addresses/${second.body.id}`)).body.isDefault,
  );

  // Deleting the default hands the role to the remaining wallet on that chain.
  t.deepEqual((await api.delete(`/api/v1/organization/withdrawal-addresses/${second.body.id}`)).body, {
    message: `withdrawal address ${second.body.id} deleted`,
    statusCode: 200,
  });
  assertError(t, await api.get(`/api/v1/organization/withdrawal-addresses/${second.body.id}`), 404, {
    code: 'resource_missing',
  });
  assertError(t, await api.delete(`/api/v1/organization/withdrawal-addresses/${second.body.id}`), 404);
  assertError(t, await api.post(`/api/v1/organization/withdrawal-addresses/${second.body.id}/mark-as-default`), 404);
  const left = (await api.get<WithdrawalAddress[]>('/api/v1/organization/withdrawal-addresses')).body;
  t.is(left.length, 1);
  t.true(left[0]!.isDefault);
  t.is((await api.get<Page<Session>>('/api/v1/checkout/sessions')).status, 200);
});

test('withdrawal addresses are checked against the chain: bad EVM address or a chain not offered is a 400', async (t) => {
  const weir = await startTestWeir(t);
  const api = await bareOrganization(weir.url);
  for (const address of [
    '0x1234',
    'not an address',
    `${MERCHANT_WALLET}00`,
    MERCHANT_WALLET.slice(2),
    '0xZZZZ5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1fEE5',
    'So11111111111111111111111111111111111111112',
  ]) {
    await assertRejectedWithoutWrite(
      t,
      weir,
      () => api.post('/api/v1/organization/withdrawal-addresses', { chainId: 7357, address }),
      { field: 'address', code: 'incorrect_address' },
    );
  }
  // Mixed case is an EIP-55 checksum: one that fails is a typo, and money sent there is lost.
  const mistyped = `${MERCHANT_WALLET.slice(0, -1)}${MERCHANT_WALLET.endsWith('F') ? 'f' : 'F'}`;
  for (const address of [mistyped, '0x5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1f']) {
    await assertRejectedWithoutWrite(
      t,
      weir,
      () => api.post('/api/v1/organization/withdrawal-addresses', { chainId: 7357, address }),
      { field: 'address', code: 'incorrect_address', message: /EIP-55 checksum/ },
    );
  }
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/organization/withdrawal-addresses', { chainId: 7357 }),
    { field: 'address', code: 'parameter_missing' },
  );
  for (const chainId of [1, 137, 999999]) {
    await assertRejectedWithoutWrite(
      t,
      weir,
      () => api.post('/api/v1/organization/withdrawal-addresses', { chainId, address: MERCHANT_WALLET }),
      { field: 'chainId', message: /not offered/ },
    );
  }
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/organization/withdrawal-addresses', { address: MERCHANT_WALLET }),
    { field: 'chainId', code: 'parameter_missing' },
  );
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/organization/withdrawal-addresses', { chainId: '7357', address: MERCHANT_WALLET }),
    { field: 'chainId' },
  );
  // The test network is not offered to live keys.
  const { live } = await createMerchant(weir.url, 'Live Shop');
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => live.post('/api/v1/organization/withdrawal-addresses', { chainId: 7357, address: MERCHANT_WALLET }),
    { field: 'chainId', message: /not offered in the live environment/ },
  );
  t.deepEqual((await api.get<WithdrawalAddress[]>('/api/v1/organization/withdrawal-addresses')).body, []);
});

test('business name and brand color appear on the hosted checkout page, safely escaped', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  t.is((await api.put('/api/v1/organization', { name: 'Zed & Co <Shop>' })).status, 200);
  t.is((await api.put('/api/v1/organization/brand', { brandColor: '#c0ffee' })).status, 200);
  const session = (await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).body;

  const page = await fetch(session.url);
  t.is(page.status, 200);
  t.regex(page.headers.get('content-type') ?? '', /text\/html/);
  const html = await page.text();
  t.true(html.includes('Zed &amp; Co &lt;Shop&gt;'), 'the business name is on the page');
  t.false(html.includes('<Shop>'), 'and it is escaped');
  // The color comes in a stylesheet of its own (the pages run no inline style).
  t.true(html.includes('/assets/brand/c0ffee.css'), 'the brand color is on the page');
  const brandCss = await fetch(`${weir.url}/assets/brand/c0ffee.css`);
  t.is(brandCss.status, 200);
  t.true((await brandCss.text()).includes('#c0ffee'));

  // A later change shows on the page of an existing session.
  t.is((await api.put('/api/v1/organization/brand', { brandColor: '#123456' })).status, 200);
  t.is((await api.put('/api/v1/organization', { name: 'Renamed Shop' })).status, 200);
  const again = await (await fetch(session.url)).text();
  t.true(again.includes('/assets/brand/123456.css'));
  t.false(again.includes('c0ffee'));
  t.true(again.includes('Renamed Shop'));
});

test('a wallet address cannot be added or updated to one the chain already has', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  assertError(
    t,
    await api.post('/api/v1/organization/withdrawal-addresses', { chainId: 7357, address: MERCHANT_WALLET }),
    400,
    { field: 'address', code: 'resource_already_exists' },
  );
  const second = await api.post<WithdrawalAddress>('/api/v1/organization/withdrawal-addresses', {
    chainId: 7357,
    address: SECOND_WALLET,
  });
  t.is(second.status, 200);
  await assertRejectedWithoutWrite(
    t,
    weir,
    () =>
      api.put(`/api/v1/organization/withdrawal-addresses/${second.body.id}`, {
        address: MERCHANT_WALLET.toLowerCase(),
      }),
    { field: 'address' },
  );
});

test('a session whose total exceeds int64 is refused', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post<Session>('/api/v1/checkout/sessions', sessionRequest('9223372036854775800', 1000)),
    { field: 'lineItems', code: 'amount_too_large' },
  );
});

test('a payment method stored before checksums were checked, failing its checksum, refuses sessions with a 422 naming it, not a 500', async (t) => {
  const weir = await startTestWeir(t);
  const api = await bareOrganization(weir.url);
  // As an earlier Weir stored it: the command itself does not check the address format.
  const mistyped = '0x5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1f';
  const ctx = { organizationId: api.organizationId, environment: 'test' as const, actor: 'cli' };
  await weir.commands.handle(
    organizationAggregate,
    organizationRecordId(api.organizationId, 'test'),
    { type: 'AddWithdrawalAddress', id: 'legacy-wallet', name: 'legacy', address: mistyped, chainId: 7357 },
    ctx,
  );
  await weir.projections.waitFor((await weir.eventStore.headPosition())!);

  const body = await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/checkout/sessions', sessionRequest()),
    { status: 422, code: 'payment_method_invalid' },
  );
  t.regex(
    body.message,
    /legacy-wallet.*fails its EIP-55 checksum.*PUT \/api\/v1\/organization\/withdrawal-addresses\/legacy-wallet/,
  );

  const fixed = await api.put<WithdrawalAddress>('/api/v1/organization/withdrawal-addresses/legacy-wallet', {
    address: mistyped.toLowerCase(),
  });
  t.is(fixed.status, 200, JSON.stringify(fixed.body));
  t.is((await api.post<Session>('/api/v1/checkout/sessions', sessionRequest())).status, 200);
});

// --- wallets the rail cannot pay out to ---------------------------------------------------------

const BASE_SEPOLIA_USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const FACTORY = BASE_SEPOLIA_FACTORY;
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

test('the zero address and other addresses the rail cannot pay out to are refused as wallets with a 400 naming address, on add and on update', async (t) => {
  const weir = await startWeirWithBaseSepolia(t);
  const api = await bareOrganization(weir.url);
  const refused: [number, string, RegExp][] = [
    [BASE_SEPOLIA, ZERO_ADDRESS, /zero address/],
    [7357, ZERO_ADDRESS, /zero address/],
    [BASE_SEPOLIA, '0x0000000000000000000000000000000000000001', /precompile/],
    [BASE_SEPOLIA, '0x000000000000000000000000000000000000dEaD', /precompile or system contract/],
    [BASE_SEPOLIA, '0x4200000000000000000000000000000000000016', /OP Stack predeploy/],
    [BASE_SEPOLIA, BASE_SEPOLIA_USDC, /USDC token contract on Base Sepolia/],
    [BASE_SEPOLIA, BASE_SEPOLIA_USDC.toLowerCase(), /USDC token contract/],
    [7357, '0x00000000000000000000000000000000000a11ce', /USDC token contract on Weir Testnet/],
    [BASE_SEPOLIA, FACTORY, /Weir's ForwarderFactory on Base Sepolia/],
    [BASE_SEPOLIA, forwarderImplementationAddress(FACTORY), /Forwarder contract of Weir's factory/],
  ];
  for (const [chainId, address, reason] of refused) {
    await assertRejectedWithoutWrite(
      t,
      weir,
      () => api.post('/api/v1/organization/withdrawal-addresses', { chainId, address }),
      { field: 'address', code: 'address_not_payable', message: reason },
    );
  }
  t.deepEqual((await api.get<WithdrawalAddress[]>('/api/v1/organization/withdrawal-addresses')).body, []);

  // A good wallet cannot be changed into one either.
  const wallet = await api.post<WithdrawalAddress>('/api/v1/organization/withdrawal-addresses', {
    chainId: BASE_SEPOLIA,
    address: MERCHANT_WALLET,
  });
  t.is(wallet.status, 200, JSON.stringify(wallet.body));
  for (const address of [ZERO_ADDRESS, FACTORY]) {
    await assertRejectedWithoutWrite(
      t,
      weir,
      () => api.put(`/api/v1/organization/withdrawal-addresses/${wallet.body.id}`, { address }),
      { field: 'address', code: 'address_not_payable' },
    );
  }
  const session = await api.post<Session>('/api/v1/checkout/sessions', sessionRequest());
  t.is(session.status, 200, JSON.stringify(session.body));
  t.true(session.body.addresses.some((a) => a.asset.chainId === BASE_SEPOLIA));
});

test('a zero-address wallet stored before it was refused makes no session answer 5xx: its network is left out, or a 422 names it when no other is left', async (t) => {
  const weir = await startWeirWithBaseSepolia(t);
  const api = await bareOrganization(weir.url);
  await appendOldWallet(weir, api.organizationId, {
    id: 'zero-wallet',
    address: ZERO_ADDRESS,
    chainId: BASE_SEPOLIA,
    isDefault: true,
  });

  const body = await assertRejectedWithoutWrite(
    t,
    weir,
    () => api.post('/api/v1/checkout/sessions', sessionRequest()),
    { status: 422, code: 'payment_method_invalid' },
  );
  t.regex(
    body.message,
    /zero-wallet on chain 84532 .*zero address.*PUT \/api\/v1\/organization\/withdrawal-addresses\/zero-wallet/,
  );

  // With a good wallet on another network, the payer pays there.
  t.is(
    (await api.post('/api/v1/organization/withdrawal-addresses', { chainId: 7357, address: MERCHANT_WALLET })).status,
    200,
  );
  const session = await api.post<Session>('/api/v1/checkout/sessions', sessionRequest());
  t.is(session.status, 200, JSON.stringify(session.body));
  t.deepEqual([...new Set(session.body.addresses.map((a) => a.asset.chainId))], [7357]);
  assertError(
    t,
    await api.post('/api/v1/checkout/sessions', {
      ...sessionRequest(),
      paymentSetting: { allowedChains: [{ chainId: BASE_SEPOLIA }] },
    }),
    422,
    { code: 'payment_method_invalid', message: /zero-wallet/ },
  );

  // Corrected, its network is offered again.
  const fixed = await api.put('/api/v1/organization/withdrawal-addresses/zero-wallet', { address: MERCHANT_WALLET });
  t.is(fixed.status, 200, JSON.stringify(fixed.body));
  const both = await api.post<Session>('/api/v1/checkout/sessions', sessionRequest());
  t.deepEqual([...new Set(both.body.addresses.map((a) => a.asset.chainId))].sort(), [7357, BASE_SEPOLIA]);
});
