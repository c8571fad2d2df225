import test, { type ExecutionContext } from 'ava';
import type { ProjectionRunner } from '../../src/projections/projection-runner.ts';
import { ConflictError } from '../../src/shared/errors.ts';
import { assertNoticePage, pageAnswer } from '../support/notice-page.ts';
import { createMerchant, sessionRequest, startTestWeir } from '../support/weir-harness.ts';
import { teaLink } from './helpers.ts';

/**
 * A Weir whose next wait for the read models, once `busy.armed`, fails with a busy record's conflict:
 * a plain `ConflictError` without Retry-After, as a record written by another request at the same moment.
 */
async function busyWeir(t: ExecutionContext) {
  const busy = { armed: false };
  const weir = await startTestWeir(
    t,
    {},
    {
      wrapProjections: (runner: ProjectionRunner): ProjectionRunner => ({
        ...runner,
        waitFor(position, timeoutMs) {
          if (!busy.armed) return runner.waitFor(position, timeoutMs);
          busy.armed = false;
          return Promise.reject(new ConflictError('stream checkout_session-x was being written by another request'));
        },
      }),
    },
  );
  const merchant = await createMerchant(weir.url, 'Corner Coffee');
  return { weir, busy, ...merchant };
}

const postForm = (url: string, form: Record<string, string>) =>
  fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });

test("a busy record behind the payment link's form is the 503 page to try again (was the 409 page blaming the seller's settings), with a way back to the form", async (t) => {
  const { busy, api } = await busyWeir(t);
  const link = await teaLink(api);
  busy.armed = true;
  const answer = await pageAnswer(await postForm(link.url, {}));
  assertNoticePage(t, answer, {
    status: 503,
    heading: 'Payment could not be started',
    says: /Your payment could not be started just now\. Nothing has been charged\. Please try again in a moment\./,
    testMode: true,
    back: `<a id="back" href="/pay/${link.id}">`,
  });
  t.notRegex(answer.html, /seller&#39;s settings|stream|another request/);
  t.is((await postForm(link.url, {})).status, 303, 'trying again opens the session');
});

test("a busy record behind the checkout page's form and the invoice's pay link is their 503 page to try again, as on the link's page (were the 400 page saying the conflict's own words, and the API's JSON 409)", async (t) => {
  const { weir, busy, api } = await busyWeir(t);
  const session = (await api.post<{ id: string; url: string }>('/api/v1/checkout/sessions', sessionRequest())).body;
  busy.armed = true;
  const form = await pageAnswer(await postForm(session.url, { assetId: 'weir-testnet:usdc' }));
  assertNoticePage(t, form, {
    status: 503,
    heading: 'Checkout not available just now',
    says: /This checkout cannot be reached just now\. Please try again in a moment\./,
    testMode: true,
    back: `<a id="back" href="/checkout/${session.id}">Back to the checkout</a>`,
  });
  t.notRegex(form.html, /stream|another request/);

  const customer = (await api.post<{ id: string }>('/api/v1/customers', { email: 'ada@example.com' })).body;
  const product = (
    await api.post<{ defaultPrice: { id: string } }>('/api/v1/products', {
      name: 'Design retainer',
      defaultPriceData: { currency: 'usdc', unitAmount: '120000000' },
    })
  ).body;
  const draft = (
    await api.post<{ id: string }>('/api/v1/invoices', {
      customerId: customer.id,
      lineItems: { data: [{ priceId: product.defaultPrice.id }] },
    })
  ).body;
  const invoice = (await api.post<{ id: string }>(`/api/v1/invoices/${draft.id}/finalize`)).body;
  busy.armed = true;
  const pay = await pageAnswer(await fetch(`${weir.url}/invoices/${invoice.id}/pay`, { redirect: 'manual' }));
  assertNoticePage(t, pay, {
    status: 503,
    heading: 'Invoice not available just now',
    says: /This invoice cannot be shown or paid just now\. Nothing has been charged\. Please try again in a moment\./,
    testMode: true,
    back: `<a id="back" href="/invoices/${invoice.id}">Back to the invoice</a>`,
  });
});
