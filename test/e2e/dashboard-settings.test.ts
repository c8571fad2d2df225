import test from 'ava';
import type { Page } from 'playwright-core';
import { getAddress } from 'viem';
import {
  chromiumPerFile,
  expectAccessible,
  PASSWORD,
  screenshot,
  startDashboard,
  watchPage,
} from '../support/dashboard.ts';
import { MERCHANT_WALLET } from '../support/weir-harness.ts';
import { totpCode, totpStepAt } from '../../src/dashboard/auth/totp.ts';

const browser = chromiumPerFile(test);

type Wallet = { id: string; name: string; address: string; chainId: number; isDefault: boolean };
type Organization = {
  name: string;
  phone: string | null;
  websiteUrl: string | null;
  supportEmail: string | null;
  addressDetails: { city: string | null; line1: string | null };
  brandColor: string | null;
  brandLogo: string | null;
};

/** What the test reads of the browser's window (the project's types have no DOM). */
type DomWindow = { getComputedStyle(element: unknown): { backgroundColor: string } };

/** A 1×1 PNG: the smallest logo a browser draws. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
// Typed in lower case; the API answers each in its EIP-55 checksum.
const COLD_WALLET = '0x52908400098527886e0f7030069857d2e4169ee7';
const OTHER_WALLET = '0x8617e340b3d01fa5f11f306f4090fd50e238070d';

/** Answers the re-authentication page (the form as posted is carried through it). */
async function confirmWithPassword(page: Page): Promise<void> {
  await page.getByRole('heading', { name: "Confirm it's you" }).waitFor();
  await page.getByLabel('Your password').fill(PASSWORD);
  await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Confirm' }).click()]);
}

/** Submits a form by its button and waits for the page it leads to. */
async function submit(page: Page, button: string): Promise<void> {
  await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: button }).click()]);
}

test('Settings: wallets are added, made default, changed and removed only after the password (or, with two-factor, a code); a bad address is named; the audit trail has each change; a developer is refused', async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  const wallets = async () =>
    (await merchant.api.get<Wallet[]>('/api/v1/organization/withdrawal-addresses')).body.sort((a, b) =>
      a.name.localeCompare(b.name),
    );

  // The screen is in the nav; its overview links every part, Team and Security among them.
  await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
  t.regex((await page.locator('.settings-index').textContent()) ?? '', /1 wallet on 1 network/);
  for (const name of ['Team', 'Security'])
    t.true(await page.locator('.settings-index').getByRole('link', { name }).isVisible());
  await expectAccessible(t, page, 'settings');
  await screenshot(t, page, 'settings');

  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Payment methods' }).click();
  await page.locator('#network-7357').getByText('treasury').waitFor();

  // Bad input: an address that is none, named at its field; the form kept, nothing written.
  await page.getByLabel('Name').fill('Cold storage');
  await page.getByLabel('Wallet address').fill('0x1234');
  await page.getByLabel('Your password').fill(PASSWORD);
  await submit(page, 'Add wallet');
  t.regex((await page.locator('#field-address-error').textContent()) ?? '', /EVM address/);
  t.is(await page.getByLabel('Wallet address').inputValue(), '0x1234');
  t.is(await page.getByLabel('Name').inputValue(), 'Cold storage');
  t.is((await wallets()).length, 1);
  await expectAccessible(t, page, 'settings-wallet-error');
  await screenshot(t, page, 'settings-wallet-error');

  // A wrong password writes nothing either.
  await page.getByLabel('Wallet address').fill(COLD_WALLET);
  await page.getByLabel('Your password').fill('not my password');
  await submit(page, 'Add wallet');
  await page.getByText('That password is not right.').waitFor();
  t.is((await wallets()).length, 1);

  // Added with the password (carried through the confirmation page).
  await confirmWithPassword(page);
  await page.getByText('Wallet added.').waitFor();
  let [cold, treasury] = await wallets();
  t.like(cold, { name: 'Cold storage', address: getAddress(COLD_WALLET), chainId: 7357, isDefault: false });
  t.like(treasury, { name: 'treasury', isDefault: true });

  // Made the default: the password first.
  await page.getByRole('button', { name: 'Make Cold storage the default' }).click();
  await confirmWithPassword(page);
  await page.getByText('Default wallet changed.').waitFor();
  [cold, treasury] = await wallets();
  t.true(cold!.isDefault);
  t.false(treasury!.isDefault);
  t.true(await page.locator(`#wallet-${cold!.id}`).getByText('Default').isVisible());

  // Renamed without the password; a new address asks for it.
  await page.getByRole('link', { name: 'Edit Cold storage' }).click();
  await expectAccessible(t, page, 'settings-wallet-edit');
  await screenshot(t, page, 'settings-wallet-edit');
  await page.getByLabel('Name').fill('Cold vault');
  await submit(page, 'Save wallet');
  await page.getByText('Wallet saved.').waitFor();
  t.is((await wallets())[0]!.name, 'Cold vault');
  await page.getByRole('link', { name: 'Edit Cold vault' }).click();
  await page.getByLabel('Wallet address').fill(OTHER_WALLET);
  await submit(page, 'Save wallet');
  await confirmWithPassword(page);
  await page.getByText('Wallet saved.').waitFor();
  t.is((await wallets())[0]!.address, getAddress(OTHER_WALLET));

  // Removed after a confirmation with the password; the other wallet is the default again.
  await page.getByRole('link', { name: 'Remove Cold vault' }).click();
  await expectAccessible(t, page, 'settings-wallet-remove');
  await screenshot(t, page, 'settings-wallet-remove');
  await page.getByLabel('Your password').fill(PASSWORD);
  await submit(page, 'Remove wallet');
  await page.getByText('Wallet removed.').waitFor();
  t.like(await wallets(), [{ address: MERCHANT_WALLET, isDefault: true }]);
  t.deepEqual(problems(), []);
  await expectAccessible(t, page, 'settings-payment-methods');
  await screenshot(t, page, 'settings-payment-methods');

  // With two-factor on, a code from the authenticator app is asked instead of the password.
  await page.goto(`${dash.url}/dashboard/settings/security/two-factor`);
  const key = ((await page.locator('#totp-secret').textContent()) ?? '').replace(/\s/g, '');
  await page.getByLabel('Code the app shows').fill(totpCode(key, totpStepAt(dash.clock.now())));
  await page.getByLabel('Your password').fill(PASSWORD);
  await submit(page, 'Turn on two-factor');
  dash.clock.advanceBy(30_000); // a code counts once: the next one
  await page.goto(`${dash.url}/dashboard/settings/payment-methods`);
  await page.getByLabel('Wallet address').fill(COLD_WALLET);
  await page.getByLabel('Code from your authenticator app').fill(totpCode(key, totpStepAt(dash.clock.now())));
  await submit(page, 'Add wallet');
  await page.getByText('Wallet added.').waitFor();
  t.is((await wallets()).length, 2);

  // The audit trail has each wallet change, by the owner from their address; the new address beside the old.
  await page.goto(`${dash.url}/dashboard/audit-trail?actor=${encodeURIComponent(`user:${owner.userId}`)}`);
  const changes = page.locator('#audit-trail tbody tr');
  const titles = await changes.locator('td:nth-child(3) strong').allTextContents();
  for (const title of [
    'Withdrawal address added',
    'Withdrawal address marked default',
    'Withdrawal address updated',
    'Withdrawal address removed',
  ])
    t.true(titles.includes(title), `${title} in ${titles.join(', ')}`);
  for (const text of await changes.allTextContents()) t.true(text.includes('from 127.0.0.1'), text);
  const moved = changes.filter({ hasText: 'Withdrawal address updated' }).filter({ has: page.locator('ins') });
  t.true(
    (await moved.locator('ins').allTextContents()).some((v) => v.toLowerCase() === OTHER_WALLET),
    'the new address',
  );
  t.true(
    (await moved.locator('del').allTextContents()).some((v) => v.toLowerCase() === COLD_WALLET),
    'the old one',
  );

  // A developer reads the wallets but cannot change them, even by posting the form by hand.
  const developer = await dash.user({ role: 'developer' });
  const dev = await dash.signedIn(browser(), developer);
  await dev.goto(`${dash.url}/dashboard/settings/payment-methods`);
  await dev.getByText('only an admin or owner can change them').waitFor();
  t.is(await dev.getByRole('button', { name: 'Add wallet' }).count(), 0);
  t.is(await dev.getByRole('button', { name: /Make .* the default/ }).count(), 0);
  const csrf = await dev.locator('input[name=_csrf]').first().inputValue();
  const refused = await dev.request.post(`${dash.url}/dashboard/settings/payment-methods`, {
    form: { _csrf: csrf, chainId: '7357', address: COLD_WALLET, reauth_password: PASSWORD },
  });
  t.is(refused.status(), 403);
  const [added] = await wallets();
  const refusedRemoval = await dev.request.post(`${dash.url}/dashboard/settings/payment-methods/${added!.id}/remove`, {
    form: { _csrf: csrf, reauth_password: PASSWORD },
  });
  t.is(refusedRemoval.status(), 403);
  t.is((await wallets()).length, 2, 'nothing written');
});

test('Settings: checkout defaults, business details (saved, then a field cleared) and invoice numbering are saved; bad input is named with the form kept; live has its own', async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const admin = await dash.user({ role: 'admin' });
  const page = await dash.signedIn(browser(), admin);
  const problems = await watchPage(page);
  const organization = async () => (await merchant.api.get<Organization>('/api/v1/organization')).body;

  // Checkout defaults: a slippage over 100 is named, nothing saved; then saved.
  await page.goto(`${dash.url}/dashboard/settings/payments`);
  // Weir converts nothing: the switch says so rather than promise a swap.
  t.regex((await page.locator('#swap-note').textContent()) ?? '', /does not convert currencies/);
  await page.getByLabel('Default network').selectOption('7357');
  await page.getByLabel('Default currency').selectOption('dai');
  await page.getByLabel('Allow currency conversion (swap)').check();
  await page.getByLabel('Slippage allowed (%)').fill('150');
  await submit(page, 'Save checkout defaults');
  t.regex((await page.locator('#field-slippagePercentage-error').textContent()) ?? '', /at most 100/);
  t.is(await page.getByLabel('Slippage allowed (%)').inputValue(), '150');
  t.is(await page.getByLabel('Default currency').inputValue(), 'dai');
  t.true(await page.getByLabel('Allow currency conversion (swap)').isChecked());
  const before = (await merchant.api.get<{ allowSwap: boolean }>('/api/v1/organization/payment-setting')).body;
  t.false(before.allowSwap, 'nothing written');
  await page.getByLabel('Slippage allowed (%)').fill('2.5');
  await page.getByLabel("Add the network (gas) fee of paying out to the payer's total").check();
  await submit(page, 'Save checkout defaults');
  await page.getByText('Checkout defaults saved.').waitFor();
  t.like((await merchant.api.get('/api/v1/organization/payment-setting')).body, {
    preferredChainId: 7357,
    preferredCurrency: 'dai',
    allowSwap: true,
    applyGasFee: true,
    slippagePercentage: 2.5,
  });
  await expectAccessible(t, page, 'settings-payments');
  await screenshot(t, page, 'settings-payments');

  // Business details: a website that is no URL is named, the form kept; then saved; then a field cleared.
  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Business details' }).click();
  await page.getByLabel('Business name').fill('Harbour Coffee Ltd');
  await page.getByLabel('Phone', { exact: true }).fill('+44 20 7946 0000');
  await page.getByLabel('Support email').fill('help@harbour.example');
  await page.getByLabel('Website', { exact: true }).fill('harbour.example');
  await page.getByLabel('City').fill('Bristol');
  await submit(page, 'Save business details');
  t.regex((await page.locator('#field-websiteUrl-error').textContent()) ?? '', /absolute URL/);
  t.is(await page.getByLabel('City').inputValue(), 'Bristol');
  t.is((await organization()).name, 'Harbour Coffee Roasters', 'nothing written');
  await expectAccessible(t, page, 'settings-business-error');
  await screenshot(t, page, 'settings-business-error');
  await page.getByLabel('Website', { exact: true }).fill('https://harbour.example');
  await submit(page, 'Save business details');
  await page.getByText('Business details saved.').waitFor();
  t.like(await organization(), {
    name: 'Harbour Coffee Ltd',
    phone: '+44 20 7946 0000',
    supportEmail: 'help@harbour.example',
    websiteUrl: 'https://harbour.example',
    addressDetails: { city: 'Bristol' },
  });
  await page.getByLabel('Phone', { exact: true }).fill('');
  await page.getByLabel('Website', { exact: true }).fill('');
  await submit(page, 'Save business details');
  await page.getByText('Business details saved.').waitFor();
  t.like(await organization(), { phone: null, websiteUrl: null, supportEmail: 'help@harbour.example' });
  t.is(await page.getByLabel('Website', { exact: true }).inputValue(), '');
  await expectAccessible(t, page, 'settings-business');
  await screenshot(t, page, 'settings-business');

  // Invoice numbering: a prefix with a space is named; then saved.
  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Invoices' }).click();
  await page.getByLabel('Number prefix').fill('HC 26');
  await page.getByLabel('Default footer').fill('Thank you for your order.');
  await submit(page, 'Save invoice settings');
  await page.locator('#field-invoicePrefix-error').waitFor();
  t.is(await page.getByLabel('Default footer').inputValue(), 'Thank you for your order.');
  await page.getByLabel('Number prefix').fill('HC-');
  await page.getByLabel('Next number').fill('100');
  await submit(page, 'Save invoice settings');
  await page.getByText('Invoice settings saved.').waitFor();
  t.like((await merchant.api.get('/api/v1/organization/invoice-setting')).body, {
    invoicePrefix: 'HC-',
    nextInvoiceSequence: 100,
    footer: 'Thank you for your order.',
  });
  await expectAccessible(t, page, 'settings-invoices');
  await screenshot(t, page, 'settings-invoices');

  // Live mode has settings of its own: the test ones are not there, and a change there stays there.
  await page.getByRole('button', { name: 'Live', exact: true }).click();
  await page.getByLabel('Number prefix').waitFor();
  t.is(await page.getByLabel('Number prefix').inputValue(), 'INV-');
  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Business details' }).click();
  t.is(await page.getByLabel('Business name').inputValue(), 'Harbour Coffee Roasters');
  await page.getByLabel('Support email').fill('live@harbour.example');
  await submit(page, 'Save business details');
  await page.getByText('Business details saved.').waitFor();
  t.is((await merchant.live.get<Organization>('/api/v1/organization')).body.supportEmail, 'live@harbour.example');
  t.is((await organization()).supportEmail, 'help@harbour.example');
  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Payment methods' }).click();
  await page.getByText('This Weir offers no network in live mode').waitFor();
  t.deepEqual(problems(), []);
});

test('Settings: a logo upload shows in the checkout preview and the colour changes it before saving; card processor keys are saved with only their last four shown, then removed', async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  const organization = async () => (await merchant.api.get<Organization>('/api/v1/organization')).body;

  await page.goto(`${dash.url}/dashboard/settings/branding`);
  const preview = page.frameLocator('#brand-preview iframe');
  await preview.getByRole('heading', { name: 'Pay Harbour Coffee Roasters' }).waitFor();
  t.is(await preview.locator('header img.logo').count(), 0);
  t.is(await preview.locator('script').count(), 0, 'the sample page runs no script');

  // A file that is no image is named at its field; the colour picked is kept; nothing written.
  await page.getByLabel('Brand colour').fill('#aa3366');
  await page
    .getByLabel('Logo', { exact: true })
    .setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: Buffer.from('not a png') });
  await submit(page, 'Save branding');
  t.regex((await page.locator('#field-brandLogo-error').textContent()) ?? '', /PNG, JPEG, WebP or GIF/);
  t.is(await page.getByLabel('Brand colour').inputValue(), '#aa3366');
  t.like(await organization(), { brandColor: null, brandLogo: null });
  await expectAccessible(t, page, 'settings-branding-error');
  await screenshot(t, page, 'settings-branding-error');

  // The logo uploaded (the API's multipart form): it shows in the preview.
  await page
    .getByLabel('Logo', { exact: true })
    .setInputFiles({ name: 'logo.png', mimeType: 'image/png', buffer: PNG });
  await submit(page, 'Save branding');
  await page.getByText('Branding saved.').waitFor();
  const saved = await organization();
  t.regex(saved.brandLogo ?? '', /\/assets\/logos\/[0-9a-f]{64}$/);
  t.is(saved.brandColor, '#aa3366');
  await preview.locator('header img.logo').waitFor();
  t.is(await preview.locator('header img.logo').getAttribute('src'), saved.brandLogo);
  t.true(await page.getByRole('img', { name: 'Your logo' }).isVisible());

  // Picking a colour redraws the preview in it, before anything is saved.
  await page.getByLabel('Brand colour').fill('#1166cc');
  await page.locator('#brand-preview iframe[src*="1166cc"]').waitFor();
  await preview.locator('link[href="/assets/brand/1166cc.css"]').waitFor({ state: 'attached' });
  t.is(
    await preview
      .locator('body > header')
      .evaluate((e) => (globalThis as unknown as DomWindow).getComputedStyle(e).backgroundColor),
    'rgb(17, 102, 204)',
  );
  t.is((await organization()).brandColor, '#aa3366', 'not saved until Save');
  t.deepEqual(problems(), []);
  // The preview frames a copy of the hosted page: not even a moderate finding there (landmarks named apart).
  await expectAccessible(t, page, 'settings-branding', { anyImpact: true });
  await screenshot(t, page, 'settings-branding');

  // Card processor: a live key in test mode is named; then test keys saved, the secret's last four only.
  await page.goto(`${dash.url}/dashboard/settings/card-processor`);
  const secret = 'sk_test_51HxSettingsSecret9876';
  await page.getByLabel('Publishable key').fill('pk_live_51HxSettingsPublic');
  await page.getByLabel('Secret key').fill(secret);
  await page.getByLabel('Your password').fill(PASSWORD);
  await submit(page, 'Save keys');
  t.regex((await page.locator('#field-publishableKey-error').textContent()) ?? '', /test key in the test environment/);
  t.is(await page.getByLabel('Publishable key').inputValue(), 'pk_live_51HxSettingsPublic');
  t.false((await merchant.api.get<{ connected: boolean }>('/api/v1/organization/card-processor')).body.connected);
  await page.getByLabel('Publishable key').fill('pk_test_51HxSettingsPublic');
  await page.getByLabel('Your password').fill(PASSWORD);
  await submit(page, 'Save keys');
  await page.getByText('Card processor keys saved.').waitFor();
  t.is(await page.locator('#secret-key-last4').textContent(), '…9876');
  t.false((await page.content()).includes(secret), 'the secret is never shown again');
  t.like((await merchant.api.get('/api/v1/organization/card-processor')).body, {
    connected: true,
    publishableKey: 'pk_test_51HxSettingsPublic',
    secretKeyLast4: '9876',
  });
  await expectAccessible(t, page, 'settings-card-processor');
  await screenshot(t, page, 'settings-card-processor');

  // Live keys are live's: the test keys are not there.
  await page.getByRole('button', { name: 'Live', exact: true }).click();
  await page.getByText('No card processor keys yet.').waitFor();
  await expectAccessible(t, page, 'settings-card-processor-live');
  await screenshot(t, page, 'settings-card-processor-live');
  await page.getByRole('button', { name: 'Test', exact: true }).click();

  await page.getByRole('link', { name: 'Remove keys' }).click();
  await submit(page, 'Remove keys');
  await page.getByText('Card processor keys removed.').waitFor();
  t.false((await merchant.api.get<{ connected: boolean }>('/api/v1/organization/card-processor')).body.connected);
  t.deepEqual(problems(), []);
});
