import { join } from 'node:path';
import test from 'ava';
import { launchChromium, screenshotFolder } from '../support/chromium.ts';
import { SUPPORT_LINK } from '../support/hosted-pages.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';

test("a payer fills a payment link's form in a browser, is told what is wrong, corrects it and lands on the checkout page", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const created = await api.post<{ id: string; url: string }>('/api/v1/payment-links', {
    ...SUPPORT_LINK,
    emailCollection: true,
    customFields: {
      fields: [
        {
          key: 'beans',
          type: 'dropdown',
          label: 'Favourite beans',
          dropdown: {
            options: [
              { label: 'Ethiopia', value: 'et' },
              { label: 'Colombia', value: 'co' },
            ],
          },
        },
      ],
    },
  });
  t.is(created.status, 200, JSON.stringify(created.body));
  const link = created.body;

  const browser = await launchChromium(t);
  const page = await browser.newPage();
  await page.goto(link.url);
  t.is(await page.locator('h1').textContent(), 'Support the roastery');
  t.is(await page.locator('header strong').textContent(), 'Corner Coffee');
  t.is(await page.locator('#bounds').textContent(), 'Between 1.00 USDC and 100.00 USDC');

  // Bad input: an amount over the maximum, an email without a domain, no beans chosen.
  await page.getByLabel('Amount (USDC)').fill('250');
  await page.getByLabel('Name').fill('Grace Hopper');
  await page.getByLabel('Email').fill('grace@');
  await page.getByRole('button', { name: 'Pay' }).click();
  await page.locator('#problems').waitFor();
  const problems = await page.locator('#problems li').allTextContents();
  t.deepEqual(problems, [
    'Amount: must be at most 100.00 USDC',
    'Email: must be an email address, such as payer@example.com',
    'Favourite beans: is required',
  ]);
  t.is(await page.getByLabel('Email').getAttribute('aria-invalid'), 'true');
  t.is(await page.getByLabel('Name').inputValue(), 'Grace Hopper', 'what the payer typed is kept');
  const shots = await screenshotFolder(t, 'weir-payment-link-');
  await page.screenshot({ path: join(shots, 'refused.png') });

  // A suggested amount fills the amount; good input goes to the checkout page of a new session.
  await page.getByRole('button', { name: '15.00 USDC' }).click();
  t.is(await page.getByLabel('Amount (USDC)').inputValue(), '15');
  await page.getByLabel('Email').fill('grace@example.com');
  await page.getByLabel('Favourite beans').selectOption('co');
  await page.getByRole('button', { name: 'Pay' }).click();
  await page.waitForURL(new RegExp(`^${weir.url}/checkout/[0-9a-f-]{36}$`));
  t.is(await page.locator('#amount').textContent(), '15.00');
  t.regex((await page.locator('main').textContent()) ?? '', /Support the roastery × 1/);
  await page.screenshot({ path: join(shots, 'checkout.png') });

  const sessionId = page.url().split('/').pop()!;
  const session = (
    await api.get<{
      paymentLinkId: string;
      customerDetails: { name: string; email: string };
      customFields: { fields: { dropdown: { value: string } }[] };
    }>(`/api/v1/checkout/sessions/${sessionId}`)
  ).body;
  t.is(session.paymentLinkId, link.id);
  t.like(session.customerDetails, { name: 'Grace Hopper', email: 'grace@example.com' });
  t.is(session.customFields.fields[0]!.dropdown.value, 'co');
});
