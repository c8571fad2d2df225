import test from 'ava';
import type { Page } from 'playwright-core';
import { apiClient, eventually } from '../support/api-client.ts';
import {
  chromiumPerFile,
  expectAccessible,
  PASSWORD,
  screenshot,
  startDashboard,
  watchPage,
} from '../support/dashboard.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

const browser = chromiumPerFile(test);

type Page_<T> = { data: T[]; count: number };

/** Answers the re-authentication page (the form as posted is carried through it). */
async function confirmWithPassword(page: Page): Promise<void> {
  await page.getByRole('heading', { name: "Confirm it's you" }).waitFor();
  await page.getByLabel('Your password').fill(PASSWORD);
  await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Confirm' }).click()]);
}

test('Developers: API keys are created and regenerated after the password, shown once, work against /api/v1, and deleted after a confirmation; a viewer is refused', async (t) => {
  const dash = await startDashboard(t);
  const merchant = await dash.organization();
  const developer = await dash.user({ role: 'developer' });
  const page = await dash.signedIn(browser(), developer);
  const problems = await watchPage(page);
  await page.goto(`${dash.url}/dashboard/developers`);
  const keysBefore = (await merchant.api.get<Page_<{ id: string }>>('/api/v1/api-keys')).body.count;

  // Bad input: a name over 100 characters is refused at the field, the form kept, nothing written.
  const tooLong = 'k'.repeat(101);
  await page.getByLabel('Key name').fill(tooLong);
  await page.getByLabel('Your password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.locator('#field-name-error').waitFor();
  t.regex((await page.locator('#field-name-error').textContent()) ?? '', /100/);
  t.is(await page.getByLabel('Key name').inputValue(), tooLong);
  t.is((await merchant.api.get<Page_<{ id: string }>>('/api/v1/api-keys')).body.count, keysBefore);

  // Create: the password is asked in the same form; the secret is shown this once and works.
  await page.getByLabel('Key name').fill('shop backend');
  await page.getByLabel('Your password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create key' }).click();
  const secretInput = page.locator('#secret-key');
  await secretInput.waitFor();
  const secret = await secretInput.inputValue();
  t.regex(secret, /^sk_test_/);
  t.true(await page.getByRole('button', { name: 'Copy' }).isVisible(), 'the copy button is shown with JavaScript');
  t.is((await apiClient(dash.url, secret).get('/api/v1/api-keys')).status, 200, 'the new secret works');
  await expectAccessible(t, page, 'developers-key-created');
  await screenshot(t, page, 'developers-key-created');
  // The address is the page's (history holds no form post): a reload creates no second key.
  t.is(new URL(page.url()).pathname, '/dashboard/developers');
  await page.reload();
  t.false((await page.content()).includes(secret), 'never shown again');
  t.is((await merchant.api.get<Page_<{ id: string }>>('/api/v1/api-keys')).body.count, keysBefore + 1);
  const row = page.locator('#api-keys tbody tr', { hasText: 'shop backend' });
  t.is(await row.locator('code').textContent(), `sk_test_…${secret.slice(-4)}`);
  t.is((await row.locator('td').nth(2).textContent())?.trim(), 'Full', 'a key is full by default');
  // It was used once above: the row says when (a key never used says Never).
  t.truthy(await row.locator('td').nth(4).locator('time').count(), 'its last use is shown');
  t.notRegex((await row.locator('td').nth(4).textContent()) ?? '', /Never/);

  // Regenerate: the password again, then the new secret once; the old one stops working.
  await row.getByRole('button', { name: 'Regenerate shop backend' }).click();
  await confirmWithPassword(page);
  const renewed = await page.locator('#secret-key').inputValue();
  t.not(renewed, secret);
  t.is((await apiClient(dash.url, secret).get('/api/v1/api-keys')).status, 401);
  t.is((await apiClient(dash.url, renewed).get('/api/v1/api-keys')).status, 200);

  // Delete: a confirmation page, then gone.
  await page.goto(`${dash.url}/dashboard/developers`);
  await page
    .locator('#api-keys tbody tr', { hasText: 'shop backend' })
    .getByRole('link', { name: 'Delete shop backend' })
    .click();
  await page.getByRole('button', { name: 'Delete key' }).click();
  await page.getByText('API key deleted.').waitFor();
  t.is(await page.locator('#api-keys tbody tr', { hasText: 'shop backend' }).count(), 0);
  t.is((await apiClient(dash.url, renewed).get('/api/v1/api-keys')).status, 401);

  // A read key, chosen on the form: the table says Read, and the API lets it read but not write.
  await page.getByLabel('Key name').fill('analyst');
  await page.getByLabel('Scope').selectOption('read');
  await page.getByLabel('Your password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Create key' }).click();
  const readSecret = await page.locator('#secret-key').inputValue();
  const readRow = page.locator('#api-keys tbody tr', { hasText: 'analyst' });
  t.is((await readRow.locator('td').nth(2).textContent())?.trim(), 'Read');
  const reader = apiClient(dash.url, readSecret);
  t.is((await reader.get('/api/v1/api-keys')).status, 200, 'a read key reads');
  const write = await reader.post<{ code: string }>('/api/v1/customers', { email: 'ada@example.com' });
  t.is(write.status, 403, 'a read key may not write');
  t.is(write.body.code, 'api_key_scope');
  t.deepEqual(problems(), []);
  await expectAccessible(t, page, 'developers');
  await screenshot(t, page, 'developers');

  // A viewer is refused the screen and its actions.
  const viewer = await dash.user({ role: 'viewer' });
  const viewing = await dash.signedIn(browser(), viewer);
  t.is((await viewing.goto(`${dash.url}/dashboard/developers`))?.status(), 403);
  const csrf = await viewing.locator('input[name=_csrf]').first().inputValue();
  const refused = await viewing.request.post(`${dash.url}/dashboard/developers/api-keys`, {
    form: { _csrf: csrf, name: 'sneaky', reauth_password: PASSWORD },
  });
  t.is(refused.status(), 403);
  t.is((await merchant.api.get<Page_<{ id: string }>>('/api/v1/api-keys')).body.count, keysBefore + 1, 'the read key');
});

test('Developers: a webhook endpoint is added after the password and its signing secret shown this once (never in an address or the log); its test event is delivered, logged with status, duration and answer, and resent as a new attempt; its events edited; a new URL asks for the password and a bad one is named; its secret revealed and regenerated after the password', async (t) => {
  const hooks = await startWebhookReceiver();
  t.teardown(() => hooks.close());
  const logLines: string[] = [];
  const dash = await startDashboard(t, { config: { logLevel: 'debug' }, log: (line) => logLines.push(line) });
  const merchant = await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const page = await dash.signedIn(browser(), owner);
  const problems = await watchPage(page);
  // Every address the browser asks for (and its referrer): what history and request logs hold.
  const addresses: string[] = [];
  page.on('request', (request) => addresses.push(request.url(), request.headers().referer ?? ''));
  await page.goto(`${dash.url}/dashboard/developers`);
  await page.getByRole('link', { name: 'Add endpoint' }).click();

  // A URL the API refuses: named at the field, the form kept as typed, nothing written.
  await page.getByLabel('Endpoint URL').fill('ftp://shop.example/hooks');
  await page.getByLabel('Description').fill('order fulfilment');
  await page.getByLabel('checkout_session.completed').check();
  await page.getByLabel('invoice.paid').check();
  // A failed payment intent offered once, by the name `*` sends, the specification's name beside it.
  t.regex(
    await page.getByLabel('payment_intent.payment_failed').evaluate((box) => box.closest('label')!.textContent!),
    /the spec's payment_intent\.failed/,
  );
  t.is(await page.locator('input[name="events"][value="payment_intent.failed"]').count(), 0);
  await page.getByLabel('Your password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  await page.locator('#field-url-error').waitFor();
  t.is(await page.getByLabel('Endpoint URL').inputValue(), 'ftp://shop.example/hooks');
  t.is(await page.getByLabel('Description').inputValue(), 'order fulfilment');
  t.true(await page.getByLabel('invoice.paid').isChecked());
  t.is((await merchant.api.get<Page_<{ id: string }>>('/api/v1/webhook-endpoints')).body.count, 0);
  await expectAccessible(t, page, 'webhook-endpoint-new-error');
  await screenshot(t, page, 'webhook-endpoint-new-error');

  await page.getByLabel('Endpoint URL').fill(hooks.url);
  await page.getByLabel('Your password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  await page.getByText('Endpoint added.').waitFor();
  const [endpoint] = (
    await merchant.api.get<Page_<{ id: string; url: string; secret: string; enabledEvents: { events: string[] } }>>(
      '/api/v1/webhook-endpoints',
    )
  ).body.data;
  t.is(endpoint?.url, hooks.url);
  t.deepEqual(endpoint?.enabledEvents.events, ['checkout_session.completed', 'invoice.paid']);

  // The signing secret, shown this once on the new endpoint's page, says so and how to see it later.
  t.is(await page.locator('#new-signing-secret').inputValue(), endpoint!.secret);
  t.regex((await page.locator('#issued-secret').textContent()) ?? '', /shown this once.*Reveal secret.*password/s);
  // The address is the endpoint's (history holds no form post), so a reload neither posts again nor shows it.
  await page.waitForURL(`${dash.url}/dashboard/developers/webhooks/${endpoint!.id}`);
  await expectAccessible(t, page, 'webhook-endpoint-created');
  await screenshot(t, page, 'webhook-endpoint-created');
  await page.reload();
  await page.getByRole('heading', { name: 'Webhook endpoint' }).waitFor();
  t.false((await page.content()).includes(endpoint!.secret), 'not shown again');
  t.is((await merchant.api.get<Page_<{ id: string }>>('/api/v1/webhook-endpoints')).body.count, 1);

  // Send a test event: the receiver gets it and the log (refreshed live) shows the attempt.
  await page.getByRole('button', { name: 'Send test event' }).click();
  await page.getByText('Test event (webhook_endpoint.test) sent').waitFor();
  await hooks.waitFor((all) => all.length >= 1);
  t.is(JSON.parse(hooks.received[0]!.body).type, 'webhook_endpoint.test');
  const delivery = page.locator('.delivery').first();
  // Refreshed live once the attempt is recorded (unless it was recorded before the page connected).
  await page.locator('body[data-live="on"]').waitFor();
  await eventually(async () => {
    const d = (
      await merchant.api.get<Page_<{ status: string }>>(`/api/v1/webhook-endpoints/${endpoint!.id}/deliveries`)
    ).body.data[0];
    return d?.status === 'succeeded' ? d : undefined;
  }, 'the test delivery to be recorded');
  const testDelivery = (
    await merchant.api.get<Page_<{ id: string }>>(`/api/v1/webhook-endpoints/${endpoint!.id}/deliveries`)
  ).body.data[0]!;
  // The message links to that delivery in the log; following the link opens it.
  t.is(await page.locator('#test-delivery-link').getAttribute('href'), `#delivery-${testDelivery.id}`);
  const shown = page.locator(`#delivery-${testDelivery.id} summary`, { hasText: 'Delivered' });
  if ((await shown.count()) === 0) await page.reload();
  await shown.waitFor();
  await page.locator('#test-delivery-link').click();
  await page.locator(`#delivery-${testDelivery.id}[open]`).waitFor();
  await screenshot(t, page, 'webhook-test-delivery-linked');
  const attempts = delivery.locator('table.attempts tbody tr');
  t.is(await attempts.count(), 1);
  t.regex((await attempts.first().textContent()) ?? '', /HTTP 200.*\d+ ms.*ok/s);

  // Resend: a new attempt of the same event, recorded in the log.
  await delivery.getByRole('button', { name: 'Resend' }).click();
  await page.getByText('Sent again').waitFor();
  await hooks.waitFor((all) => all.length >= 2);
  t.is(JSON.parse(hooks.received[1]!.body).id, JSON.parse(hooks.received[0]!.body).id);
  await eventually(async () => {
    const d = (
      await merchant.api.get<Page_<{ attempts: number }>>(`/api/v1/webhook-endpoints/${endpoint!.id}/deliveries`)
    ).body.data[0];
    return d?.attempts === 2 ? d : undefined;
  }, 'the second attempt in the log');
  await page.reload();
  await page.locator('.delivery summary').first().click();
  t.is(await page.locator('.delivery').first().locator('table.attempts tbody tr').count(), 2);
  t.regex((await page.locator('.delivery table.attempts tbody tr').nth(1).textContent()) ?? '', /2 \(resent\)/);

  // Edit the events (the URL unchanged: no password asked). Subscribed through the API by the
  // specification's name for a failed payment intent: the form shows it, and saving keeps it.
  await merchant.api.put(`/api/v1/webhook-endpoints/${endpoint!.id}`, {
    enabledEvents: ['checkout_session.completed', 'invoice.paid', 'payment_intent.failed'],
  });
  await page.reload();
  t.true(await page.locator('input[name="events"][value="payment_intent.failed"]').isChecked());
  t.false(await page.locator('input[name="events"][value="payment_intent.payment_failed"]').isChecked());
  await page.getByLabel('invoice.paid').uncheck();
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByText('Endpoint saved.').waitFor();
  t.deepEqual(
    (await merchant.api.get<{ enabledEvents: { events: string[] } }>(`/api/v1/webhook-endpoints/${endpoint!.id}`)).body
      .enabledEvents.events,
    ['checkout_session.completed', 'payment_intent.failed'],
  );

  // A new URL asks for the password; one the API refuses is then named at its field, kept as typed, nothing saved.
  await page.getByLabel('Endpoint URL').fill('ftp://shop.example/other');
  await page.getByRole('button', { name: 'Save' }).click();
  await confirmWithPassword(page);
  await page.locator('#field-url-error').waitFor();
  t.is(await page.getByLabel('Endpoint URL').inputValue(), 'ftp://shop.example/other');
  t.is((await merchant.api.get<{ url: string }>(`/api/v1/webhook-endpoints/${endpoint!.id}`)).body.url, hooks.url);

  // Reveal the signing secret: the password first.
  await page.getByRole('button', { name: 'Reveal secret' }).click();
  await confirmWithPassword(page);
  t.is(await page.locator('#signing-secret-value').inputValue(), endpoint!.secret);
  t.deepEqual(problems(), []);
  await expectAccessible(t, page, 'webhook-endpoint');
  await screenshot(t, page, 'webhook-endpoint');

  // Regenerate it: the password again, then the new secret, shown this once; the old one is gone.
  await page.goto(`${dash.url}/dashboard/developers/webhooks/${endpoint!.id}`);
  await page.getByRole('button', { name: 'Regenerate secret' }).click();
  await confirmWithPassword(page);
  await page.getByText('New secret made: deliveries are signed with it from now on.').waitFor();
  const regenerated = await page.locator('#signing-secret-value').inputValue();
  t.not(regenerated, endpoint!.secret);
  t.is(
    (await merchant.api.get<{ secret: string }>(`/api/v1/webhook-endpoints/${endpoint!.id}`)).body.secret,
    regenerated,
  );
  await page.goto(`${dash.url}/dashboard/developers/webhooks/${endpoint!.id}`);
  t.false((await page.content()).includes(regenerated), 'hidden again on the next visit');
  t.deepEqual(problems(), []);
  t.true(
    logLines.some((line) => line.includes('POST /dashboard/developers/webhooks 200')),
    'the log of the creation is read',
  );
  for (const secret of [endpoint!.secret, regenerated]) {
    t.deepEqual(
      addresses.filter((address) => address.includes(secret)),
      [],
      'no address or referrer holds a secret',
    );
    t.deepEqual(
      logLines.filter((line) => line.includes(secret)),
      [],
      'no log line holds a secret',
    );
  }
});

test('Developers: a canceled delivery resent after the endpoint is enabled again, and delivered, shows Delivered, saying it was canceled before and which attempt was the resend', async (t) => {
  const receiver = { answer: 503 };
  const hooks = await startWebhookReceiver(() => receiver.answer);
  t.teardown(() => hooks.close());
  const dash = await startDashboard(t);
  const { api } = await dash.organization();
  const page = await dash.signedIn(browser(), await dash.user({ role: 'owner' }));
  const endpoints = '/api/v1/webhook-endpoints';
  const endpoint = (
    await api.post<{ id: string }>(endpoints, { description: 'shop', url: hooks.url, enabledEvents: { events: ['*'] } })
  ).body;
  type Delivery = { id: string; status: string; attempts: number };
  const deliveryWhen = (ok: (d: Delivery) => boolean, what: string) =>
    eventually(async () => {
      const [d] = (await api.get<Page_<Delivery>>(`${endpoints}/${endpoint.id}/deliveries`)).body.data;
      return d && ok(d) ? d : undefined;
    }, what);
  await api.post('/api/v1/organization/withdrawal-addresses', {
    chainId: 7357,
    address: '0x1111111111111111111111111111111111111111',
    name: 'second',
  });
  const failed = await deliveryWhen((d) => d.attempts === 1, 'the first attempt to fail');
  await api.put(`${endpoints}/${endpoint.id}`, { isDisabled: true });
  await deliveryWhen((d) => d.status === 'canceled', 'the delivery to be canceled');
  await api.put(`${endpoints}/${endpoint.id}`, { isDisabled: false });
  receiver.answer = 200;
  t.is((await api.post(`${endpoints}/${endpoint.id}/deliveries/${failed.id}/resend`)).status, 200);
  await deliveryWhen((d) => d.status === 'succeeded', 'the resent attempt to succeed');

  await page.goto(`${dash.url}/dashboard/developers/webhooks/${endpoint.id}`);
  const delivery = page.locator(`#delivery-${failed.id}`);
  await delivery.locator('summary', { hasText: 'Delivered' }).click();
  t.false(await delivery.locator('summary', { hasText: 'Canceled' }).isVisible());
  t.regex(
    (await delivery.locator('.delivery-facts').textContent()) ?? '',
    /Was canceled \(the endpoint was disabled, .+\), then resent\./,
  );
  t.regex((await delivery.locator('table.attempts tbody tr').nth(1).textContent()) ?? '', /2 \(resent\).*HTTP 200/s);
  await expectAccessible(t, page, 'webhook-delivery-resent-after-cancel');
  await screenshot(t, page, 'webhook-delivery-resent-after-cancel');
});

test('Developers: every checkbox of the webhook form keeps its size at 390 and 1280 px (the All events one, beside a long label, was squeezed to a sliver)', async (t) => {
  const dash = await startDashboard(t);
  await dash.organization();
  const owner = await dash.user({ role: 'owner' });
  const page = await dash.signedIn(browser(), owner);
  await page.goto(`${dash.url}/dashboard/developers/webhooks/new`);
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    const widths = await page
      .locator('#field-events input[type="checkbox"]')
      .evaluateAll((inputs) =>
        inputs.map((input) => [input.getAttribute('value'), input.getBoundingClientRect().width] as const),
      );
    const [, natural = 0] = widths.find(([value]) => value === 'checkout_session.completed') ?? [];
    t.true(natural >= 12, `${width}: a checkbox is ${natural}px wide`);
    for (const [value, w] of widths) t.is(w, natural, `${width}: the ${value} checkbox is as wide as the others`);
  }
});

test('Recovery and faucet: with the local EVM chain alone, the faucet offers its tokens only; test tokens are sent on it, and recovering that transaction says Wrong Claim; an unknown hash and a bad hash are answered at the form', async (t) => {
  // The local EVM chain alone: the faucet offers its tokens and names it, not the local Tron that does not run.
  const dash = await startDashboard(t, { config: { localChain: ['evm'] } });
  const admin = await dash.user({ role: 'admin' });
  const page = await dash.signedIn(browser(), admin);
  const problems = await watchPage(page);

  await page.goto(`${dash.url}/dashboard/faucet`);
  t.deepEqual(await page.locator('#field-asset option').allTextContents(), [
    'USDC (test)',
    'USDT (test)',
    'DAI (test)',
    'ETH (gas)',
  ]);
  t.false(((await page.locator('main').textContent()) ?? '').includes('Tron'));
  const wallet = '0x52908400098527886E0F7030069857D2E4169EE7';
  await page.getByLabel('Wallet address').fill('0x1234');
  await page.getByRole('button', { name: 'Send tokens' }).click();
  await page.locator('#field-address-error').waitFor();
  t.is(await page.getByLabel('Wallet address').inputValue(), '0x1234');
  await page.getByLabel('Wallet address').fill(wallet);
  await page.getByLabel('Amount').fill('25.5');
  await page.getByRole('button', { name: 'Send tokens' }).click();
  const sent = page.locator('.alert-success');
  await sent.waitFor();
  t.regex((await sent.textContent()) ?? '', /Sent 25\.5 USDC/);
  const hash = ((await sent.locator('code').textContent()) ?? '').trim();
  t.regex(hash, /^0x[0-9a-f]{64}$/);
  await expectAccessible(t, page, 'faucet');
  await screenshot(t, page, 'faucet');

  // Live mode: the faucet says it is for test only, its form is off, and a post anyway sends nothing.
  await page.getByRole('button', { name: 'Live', exact: true }).click();
  await page.getByText('The faucet gives test tokens only: switch to Test to use it.').waitFor();
  t.true(await page.getByRole('button', { name: 'Send tokens' }).isDisabled());
  await screenshot(t, page, 'faucet-live');
  const csrf = await page.locator('input[name=_csrf]').first().inputValue();
  const refusedLive = await page.request.post(`${dash.url}/dashboard/faucet`, {
    form: { _csrf: csrf, address: wallet, asset: 'usdc', amount: '1' },
  });
  t.true(refusedLive.status() >= 400 && refusedLive.status() < 500, `refused: ${refusedLive.status()}`);
  t.false((await refusedLive.text()).includes('Sent 1 USDC'));
  await page.getByRole('button', { name: 'Test', exact: true }).click();
  await page.locator('.test-band').waitFor();

  await page.goto(`${dash.url}/dashboard/recovery`);
  await page.getByLabel('Network').selectOption('31337');
  await page.getByLabel('Transaction hash').fill('0x12');
  await page.getByRole('button', { name: 'Check transaction' }).click();
  await page.locator('#field-transactionHash-error').waitFor();
  t.is(await page.getByLabel('Transaction hash').inputValue(), '0x12');

  await page.getByLabel('Transaction hash').fill(`0x${'ab'.repeat(32)}`);
  await page.getByRole('button', { name: 'Check transaction' }).click();
  await page.getByRole('alert').filter({ hasText: 'not found' }).waitFor();

  await page.getByLabel('Transaction hash').fill(hash);
  await page.getByRole('button', { name: 'Check transaction' }).click();
  const outcome = page.locator('#recovery-outcome');
  await outcome.waitFor();
  t.regex(
    (await outcome.textContent()) ?? '',
    /Outcome: Wrong Claim.*matches no session.*Use the correct payment link/s,
  );
  t.deepEqual(problems(), []);
  await expectAccessible(t, page, 'recovery');
  await screenshot(t, page, 'recovery');
});

test('Faucet without a local chain says so plainly', async (t) => {
  const dash = await startDashboard(t);
  const developer = await dash.user({ role: 'developer' });
  const page = await dash.signedIn(browser(), developer);
  await page.goto(`${dash.url}/dashboard/faucet`);
  await page.getByText('No faucet on this server').waitFor();
  // The operator learns both forms of WEIR_LOCAL_CHAIN: on, or a list naming a chain the faucet gives on.
  t.is(
    (await page.locator('#faucet-card .alert-info').first().textContent())?.trim(),
    'No faucet on this server: it runs neither the local chain nor the local Tron. Start Weir with its local chains (WEIR_LOCAL_CHAIN=on, the default, or a list naming evm or tron, such as evm,solana) or with --devnet FILE to send test tokens.',
  );
  t.true(await page.getByRole('button', { name: 'Send tokens' }).isDisabled());
});

test('Faucet on a server offering the local Solana alone says that chain is not a faucet chain, as the API does', async (t) => {
  const dash = await startDashboard(t, { config: { localChain: ['solana'] } });
  const { api } = await dash.organization();
  const developer = await dash.user({ role: 'developer' });
  const page = await dash.signedIn(browser(), developer);
  await page.goto(`${dash.url}/dashboard/faucet`);
  const said = (await page.locator('#faucet-card .alert-info').first().textContent())?.trim() ?? '';
  t.regex(
    said,
    // The dashboard's test server also runs the simulated Weir Testnet, which the message names.
    /^No faucet on this server: it offers the local Solana \(beside Weir Testnet\), and the faucet gives on the local chain and the local Tron, neither of which runs \(a Solana wallet is funded through the local Solana's RPC, .*requestAirdrop.*weir_mintTo.*\)\. Start Weir/,
  );
  t.true(await page.getByRole('button', { name: 'Send tokens' }).isDisabled());
  await screenshot(t, page, 'faucet-solana-only');
  const refused = await api.post<{ code: string; message: string }>('/api/v1/faucet', {
    address: '0x52908400098527886E0F7030069857D2E4169EE7',
  });
  t.is(refused.status, 400);
  t.regex(
    refused.body.message,
    /^no faucet on this server: it offers the local Solana \(beside Weir Testnet\), and the faucet gives on/,
  );
});

test('Faucet on the local Tron alone starts on the token the API gives there by default (USDT), and sends it', async (t) => {
  const dash = await startDashboard(t, { config: { localChain: ['tron'] } });
  const developer = await dash.user({ role: 'developer' });
  const page = await dash.signedIn(browser(), developer);
  await page.goto(`${dash.url}/dashboard/faucet`);
  t.is(await page.locator('#field-asset').inputValue(), 'usdt');
  await page.getByLabel('Wallet address').fill('TJRabPrwbZy45sbavfcjinPJC18kjpRTv8');
  await page.getByRole('button', { name: 'Send tokens' }).click();
  const sent = page.locator('.alert-success');
  await sent.waitFor();
  t.regex((await sent.textContent()) ?? '', /Sent 100 USDT to TJRabPrwbZy45sbavfcjinPJC18kjpRTv8/);
  await screenshot(t, page, 'faucet-tron-only');
});

test("Faucet on both the local chain and the local Tron starts on the API's default for the address: USDC to a 0x address, USDT to a T… one", async (t) => {
  const dash = await startDashboard(t, { config: { localChain: ['evm', 'tron'] } });
  const developer = await dash.user({ role: 'developer' });
  const page = await dash.signedIn(browser(), developer);
  await page.goto(`${dash.url}/dashboard/faucet`);
  const token = page.locator('#field-asset');
  t.is(await token.inputValue(), '');
  t.is((await token.locator('option:checked').textContent())?.trim(), 'Default (USDC; USDT on Tron)');
  for (const [address, asset] of [
    ['TJRabPrwbZy45sbavfcjinPJC18kjpRTv8', 'USDT'],
    ['0x52908400098527886E0F7030069857D2E4169EE7', 'USDC'],
  ] as const) {
    await page.getByLabel('Wallet address').fill(address);
    await page.getByRole('button', { name: 'Send tokens' }).click();
    await page.locator('.alert-success').filter({ hasText: address }).waitFor();
    t.regex((await page.locator('.alert-success').textContent()) ?? '', new RegExp(`Sent 100 ${asset} to ${address}`));
    t.is(await token.inputValue(), '', 'the form keeps the default');
  }
  await screenshot(t, page, 'faucet-both');
});
