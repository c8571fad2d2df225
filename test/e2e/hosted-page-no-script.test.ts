import { join } from 'node:path';
import test from 'ava';
import { eventually } from '../support/api-client.ts';
import { chainPublisher, randomHash } from '../support/chain-publisher.ts';
import { launchChromium, screenshotFolder } from '../support/chromium.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';

test('with JavaScript off the payer chooses the asset by a plain form, sees the amount, address, QR and time left, pays, and a reload shows it paid', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const session = (
    await api.post<{ id: string; url: string; addresses: { paymentAddress: string }[] }>(
      '/api/v1/checkout/sessions',
      sessionRequest('250000000', 1),
    )
  ).body;
  const browser = await launchChromium(t);
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 390, height: 900 } });
  t.teardown(() => context.close());
  const page = await context.newPage();
  await page.goto(session.url);
  t.true(await page.locator('#reveal').isHidden());
  await Promise.all([page.waitForURL(session.url), page.getByRole('button', { name: /USDC/ }).click()]);

  await page.locator('#reveal').waitFor({ state: 'visible' });
  t.is(await page.locator('#due').textContent(), '2.5');
  t.is(await page.locator('#symbol').textContent(), 'USDC');
  t.is(
    (await page.locator('#address').textContent())?.toLowerCase(),
    session.addresses[0]!.paymentAddress.toLowerCase(),
  );
  t.is(await page.locator('#qr svg').count(), 1);
  t.regex((await page.locator('#countdown').textContent()) ?? '', /^Expires in \d+ (h \d+ )?min \(at \d\d:\d\d UTC\)$/);
  t.true(await page.getByRole('link', { name: 'reload it' }).isVisible());
  const shots = await screenshotFolder(t, 'weir-hosted-no-script-');
  await page.screenshot({ path: join(shots, '390.png'), fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path: join(shots, '1280.png'), fullPage: true });

  const chain = chainPublisher(weir.bus);
  const block = randomHash();
  await chain.transfer({
    to: session.addresses[0]!.paymentAddress,
    amount: '2500000',
    blockNumber: 1,
    blockHash: block,
  });
  await chain.final(1, block);
  await eventually(
    async () =>
      (await api.get<{ status: string }>(`/api/v1/checkout/sessions/${session.id}`)).body.status === 'complete' ||
      undefined,
    'the session paid',
  );
  await page.reload();
  t.is(await page.locator('#status-title').textContent(), 'Paid');
});
