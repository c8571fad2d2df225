import test from 'ava';
import { ALL_PROJECTIONS } from '../../src/projections/all-projections.ts';
import {
  PAYMENT_LINKS,
  paymentLinksProjection,
  type PaymentLinkDoc,
} from '../../src/projections/payment-links.projection.ts';
import { createProjectionRunner } from '../../src/projections/projection-runner.ts';
import { createEmbeddedReadStore } from '../../src/read-store/embedded-read-store.ts';
import type { ReadStore } from '../../src/read-store/read-store.ts';
import { createManualClock } from '../../src/shared/clock.ts';
import { MAX_PUBLIC_BODY_BYTES } from '../../src/read-api/request-body.ts';
import { createMerchant, startTestWeir } from '../support/weir-harness.ts';
import {
  appendAsEarlierWeir,
  assertError,
  assertRejectedWithoutWrite,
  logLength,
  payInFull,
  type Api,
  type Page,
  type Session,
} from './helpers.ts';

/** The public page `/pay/{id}` over HTTP, as a browser without scripts uses it: GET the form, POST it. */

type Link = { id: string; url: string; productId: string; priceId: string | null; type: string; isActive: boolean };
type CollectedSession = Session & {
  mode: string;
  paymentLinkId: string | null;
  allowPromotionCodes: boolean;
  afterCompletion: string;
  afterCompletionConfirmMsg: string | null;
  submitType: string;
  customerDetails?: unknown;
  billingDetails?: unknown;
  shippingDetails?: unknown;
  customFields?: {
    fields: {
      key: string;
      type: string;
      text?: { value: string | null };
      numeric?: { value: string | null };
      dropdown?: { value: string | null };
    }[];
  } | null;
  paymentSetting: { allowedChains: { chainId: number }[]; preferredChainId: number | null };
};
type Answer = { status: number; location: string | null; html: string; headers: Headers };

async function createLink(api: Api, body: object): Promise<Link> {
  const created = await api.post<Link>('/api/v1/payment-links', body);
  if (created.status !== 200) throw new Error(`link create failed: ${JSON.stringify(created.body)}`);
  return created.body;
}

const open = async (url: string): Promise<Answer> => {
  const response = await fetch(url, { redirect: 'manual' });
  return {
    status: response.status,
    location: response.headers.get('location'),
    html: await response.text(),
    headers: response.headers,
  };
};

const submit = async (
  url: string,
  form: Record<string, string>,
  contentType = 'application/x-www-form-urlencoded',
): Promise<Answer> => {
  const response = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': contentType },
    body: new URLSearchParams(form).toString(),
  });
  return {
    status: response.status,
    location: response.headers.get('location'),
    html: await response.text(),
    headers: response.headers,
  };
};

/** The problems a refused submission lists, as text. */
const problemsOf = (html: string): string[] =>
  [...html.matchAll(/<li>([^<]*)<\/li>/g)].map((m) =>
    m[1]!
      .replace(/&#39;/g, "'")
      .replace(/&quot;/g, '"')
      .replace(/&amp;/g, '&'),
  );

async function sessionBehind(api: Api, answer: Answer): Promise<CollectedSession> {
  const id = /\/checkout\/([0-9a-f-]{36})$/.exec(answer.location ?? '')?.[1];
  if (answer.status !== 303 || !id)
    throw new Error(`expected a redirect to a checkout page, got ${answer.status}: ${answer.html.slice(0, 2000)}`);
  return (await api.get<CollectedSession>(`/api/v1/checkout/sessions/${id}`)).body;
}

const everything = {
  title: 'Workshop seat',
  amount: '2500000000',
  currency: 'usdc',
  description: 'A day of <b>TypeScript</b>',
  nameCollection: true,
  emailCollection: true,
  phoneNumberCollection: true,
  billingAddressCollection: true,
  shippingAddressCollection: true,
  allowPromotionCodes: true,
  afterCompletion: 'redirect',
  afterCompletionRedirectUrl: 'https://shop.example/thanks?session={CHECKOUT_SESSION_ID}',
  customFields: {
    fields: [
      { key: 'company', type: 'text', label: 'Company', text: { minimumLength: 2, maximumLength: 20 } },
      { key: 'seats', type: 'numeric', label: 'Seats', numeric: { minimum: 1, maximum: '10.5' } },
      {
        key: 'size',
        type: 'dropdown',
        label: 'T-shirt size',
        optional: true,
        dropdown: {
          options: [
            { label: 'Small', value: 's' },
            { label: 'Large', value: 'l' },
          ],
        },
      },
    ],
  },
};
const address = (kind: 'billing' | 'shipping') => ({
  [`${kind}.line1`]: '1 Main St',
  [`${kind}.line2`]: '',
  [`${kind}.city`]: 'Berlin',
  [`${kind}.state`]: '',
  [`${kind}.postalCode`]: '10115',
  [`${kind}.country`]: 'de',
});
const goodForm = {
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  phone: '+49 30 1234567',
  ...address('billing'),
  ...address('shipping'),
  'custom.company': 'Analytical',
  'custom.seats': '2.5',
  'custom.size': '',
};

test('the page shows what is sold and a form for what the link collects; its text is escaped', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner <Coffee>');
  const link = await createLink(api, everything);
  const page = await open(link.url);
  t.is(page.status, 200);
  t.regex(page.headers.get('content-type') ?? '', /^text\/html/);
  t.is(page.headers.get('cache-control'), 'no-store');
  t.regex(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  t.regex(page.html, /<h1>Workshop seat<\/h1>/);
  t.regex(page.html, /Corner &lt;Coffee&gt;/);
  t.regex(page.html, /<span class="badge">Test mode<\/span>/, "a test link says so, as a test session's page does");
  t.regex(page.html, /A day of &lt;b&gt;TypeScript&lt;\/b&gt;/);
  t.regex(page.html, /<p class="price" id="price">25\.00 USDC<\/p>/);
  t.regex(page.html, new RegExp(`<form method="post" action="/pay/${link.id}" novalidate>`));
  for (const name of [
    'name',
    'email',
    'phone',
    'billing.line1',
    'billing.country',
    'shipping.postalCode',
    'custom.company',
    'custom.seats',
  ]) {
    t.regex(page.html, new RegExp(`<input id="[^"]+" name="${name.replace('.', '\\.')}"`), name);
  }
  t.regex(
    page.html,
    /<select id="[^"]+" name="custom\.size"><option value="">Choose…<\/option><option value="s">Small<\/option><option value="l">Large<\/option><\/select>/,
  );
  t.regex(page.html, /T-shirt size <span class="muted">\(optional\)<\/span>/);
  t.regex(page.html, /<button type="submit">Pay 25\.00 USDC<\/button>/);
  t.notRegex(page.html, /name="amount"/, 'a fixed price takes no amount');
});

test('a fixed-price link: good input opens a checkout session carrying paymentLinkId and everything collected', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const link = await createLink(api, everything);
  const answer = await submit(link.url, { ...goodForm, amount: '1' });
  const session = await sessionBehind(api, answer);
  t.is(answer.location, session.url);
  t.like(session, {
    paymentLinkId: link.id,
    mode: 'payment',
    status: 'open',
    amountTotal: '2500000000',
    currency: 'usdc',
    allowPromotionCodes: true,
    afterCompletion: 'redirect',
    successUrl: 'https://shop.example/thanks?session={CHECKOUT_SESSION_ID}',
  });
  t.is<string | null, string | null>(
    session.lineItems.data[0]!.price.id,
    link.priceId,
    "the link's price is sold; a posted amount is ignored",
  );
  const berlin = { line1: '1 Main St', line2: null, city: 'Berlin', state: null, postalCode: '10115', country: 'DE' };
  t.deepEqual(session.customerDetails, {
    name: 'Ada Lovelace',
    email: 'ada@example.com',
    phone: '+49 30 1234567',
    address: berlin,
  });
  t.deepEqual(session.billingDetails, { name: 'Ada Lovelace', address: berlin });
  t.deepEqual(session.shippingDetails, { name: 'Ada Lovelace', address: berlin });
  t.deepEqual(session.customFields, {
    fields: [
      {
        key: 'company',
        type: 'text',
        label: { type: 'custom', custom: 'Company' },
        optional: false,
        text: { minimumLength: 2, maximumLength: 20, value: 'Analytical' },
      },
      {
        key: 'seats',
        type: 'numeric',
        label: { type: 'custom', custom: 'Seats' },
        optional: false,
        numeric: { minimumLength: null, maximumLength: null, minimum: '1', maximum: '10.5', value: '2.5' },
      },
      {
        key: 'size',
        type: 'dropdown',
        label: { type: 'custom', custom: 'T-shirt size' },
        optional: true,
        dropdown: {
          options: [
            { label: 'Small', value: 's' },
            { label: 'Large', value: 'l' },
          ],
          value: null,
        },
      },
    ],
  });
  // The session is listed under its link.
  const listed = (await api.get<Page<CollectedSession>>(`/api/v1/checkout/sessions?paymentLinkId=${link.id}`)).body;
  t.deepEqual(
    listed.data.map((s) => s.id),
    [session.id],
  );
  // The payer lands on the hosted checkout page of that session.
  t.is((await open(answer.location!)).status, 200);
});

test('bad input is refused on the page with a message naming each problem, keeps what the payer typed, and opens no session', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const link = await createLink(api, everything);
  const cases: [Record<string, string>, string[]][] = [
    [
      {},
      [
        'Name: is required',
        'Email: is required',
        'Phone: is required',
        'Billing address line 1: is required',
        'Billing address city: is required',
        'Billing address postal code: is required',
        'Billing address country: is required',
        'Shipping address line 1: is required',
        'Shipping address city: is required',
        'Shipping address postal code: is required',
        'Shipping address country: is required',
        'Company: is required',
        'Seats: is required',
      ],
    ],
    [{ ...goodForm, email: 'ada@' }, ['Email: must be an email address, such as payer@example.com']],
    [
      { ...goodForm, email: 'ada lovelace@example.com' },
      ['Email: must be an email address, such as payer@example.com'],
    ],
    [
      { ...goodForm, phone: 'call me' },
      ['Phone: must be a phone number: digits, spaces, ( ) - . and an optional leading +'],
    ],
    [
      { ...goodForm, phone: '+--' },
      ['Phone: must be a phone number: digits, spaces, ( ) - . and an optional leading +'],
    ],
    [{ ...goodForm, name: '   ' }, ['Name: is required']],
    [{ ...goodForm, name: 'x'.repeat(251) }, ['Name: must be at most 250 characters']],
    [{ ...goodForm, 'billing.country': 'Germany' }, ['Billing address country: must be at most 2 characters']],
    [
      { ...goodForm, 'shipping.country': 'd1' },
      ['Shipping address country: must be a two-letter country code, such as DE or US'],
    ],
    [{ ...goodForm, 'shipping.city': '' }, ['Shipping address city: is required']],
    // Text: length bounds.
    [{ ...goodForm, 'custom.company': 'A' }, ['Company: must have at least 2 characters']],
    [{ ...goodForm, 'custom.company': 'A'.repeat(21) }, ['Company: must have at most 20 characters']],
    // Numeric: a number, within its bounds (compared exactly, decimals too).
    [{ ...goodForm, 'custom.seats': 'two' }, ['Seats: must be a number, such as 3 or 2.5']],
    [{ ...goodForm, 'custom.seats': '1e3' }, ['Seats: must be a number, such as 3 or 2.5']],
    [{ ...goodForm, 'custom.seats': '0.99' }, ['Seats: must be at least 1']],
    [{ ...goodForm, 'custom.seats': '10.51' }, ['Seats: must be at most 10.5']],
    // Dropdown: one of the options.
    [{ ...goodForm, 'custom.size': 'xl' }, ['T-shirt size: must be one of Small, Large']],
  ];
  const before = await logLength(weir);
  for (const [form, problems] of cases) {
    const answer = await submit(link.url, form);
    t.is(answer.status, 400, JSON.stringify(form));
    t.regex(answer.headers.get('content-type') ?? '', /^text\/html/);
    t.deepEqual(problemsOf(answer.html), problems, JSON.stringify(form));
    t.regex(answer.html, /<div id="problems" role="alert">/);
  }
  t.is(await logLength(weir), before, 'a refused submission writes nothing');
  t.is((await api.get<Page<Session>>(`/api/v1/checkout/sessions?paymentLinkId=${link.id}`)).body.count, 0);

  // The page comes back with the payer's input (escaped) and marks the fields in error.
  const again = await submit(link.url, { ...goodForm, name: '<Ada>', email: 'nope' });
  t.regex(again.html, /name="name" value="&lt;Ada&gt;"/);
  t.regex(
    again.html,
    /name="email" value="nope" type="email" autocomplete="email" maxlength="254" aria-invalid="true" aria-describedby="in-email-error">/,
  );
  t.regex(again.html, /<span class="error" id="in-email-error">Email: must be an email address/);
  t.regex(again.html, /<option value="s">Small<\/option>/);

  // Optional fields may stay empty; numbers may be whole or decimal, dropdowns take an option's value.
  for (const seats of ['1', '10.5', '3']) {
    t.is((await submit(link.url, { ...goodForm, 'custom.seats': seats, 'custom.size': 'l' })).status, 303, seats);
  }
});

test('numeric fields with digit-count bounds count digits, not characters', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const link = await createLink(api, {
    title: 'Membership',
    amount: '100000000',
    currency: 'usdc',
    customFields: {
      fields: [
        { key: 'member', type: 'numeric', label: 'Member number', numeric: { minimumLength: 4, maximumLength: 6 } },
      ],
    },
  });
  t.deepEqual(problemsOf((await submit(link.url, { 'custom.member': '123' })).html), [
    'Member number: must have at least 4 digits',
  ]);
  t.deepEqual(problemsOf((await submit(link.url, { 'custom.member': '1234567' })).html), [
    'Member number: must have at most 6 digits',
  ]);
  const session = await sessionBehind(api, await submit(link.url, { 'custom.member': '001234' }));
  t.is(session.customFields?.fields[0]?.numeric?.value, '001234', 'the answer is kept as typed');
  t.is(session.customerDetails, null, 'nothing about the payer was asked for');
});

test('a variable-price link: the payer enters an amount within the bounds; suggested amounts are offered', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const link = await createLink(api, {
    title: 'Donation',
    currency: 'usdc',
    submitType: 'donate',
    suggestedAmounts: ['500000000', '1000000000'],
    minimumAmount: '100000000',
    maximumAmount: '50000000000',
    emailCollection: true,
    afterCompletionConfirmMsg: 'Thank you for giving',
  });
  const page = await open(link.url);
  // Without payment-link.js each submits the form with its amount; the script makes them fill the input in.
  t.regex(
    page.html,
    /<div id="suggested" role="group" aria-label="Suggested amounts" data-input="amount"><button type="submit" class="suggested" name="suggestedAmount" value="5" data-amount="5">5\.00 USDC<\/button><button type="submit" class="suggested" name="suggestedAmount" value="10" data-amount="10">10\.00 USDC<\/button><\/div>/,
  );
  // Enter in an input presses the form's first submit button: the form's own, not a suggested amount.
  t.regex(page.html, /<form method="post" action="\/pay\/[^"]+" novalidate>\s*<button type="submit" hidden><\/button>/);
  t.regex(page.html, /<p class="muted" id="bounds">Between 1\.00 USDC and 500\.00 USDC<\/p>/);
  t.regex(page.html, /<button type="submit">Donate<\/button>/);

  const email = 'giver@example.com';
  // Each problem named as the dashboard's amount fields name it, under the input and tied to it.
  const separators = 'must be written with a dot for decimals and no separators, such as 1500 or 1.5';
  const cases: [string, string][] = [
    ['', 'is required'],
    ['ten', 'must be a number such as 25 or 12.50'],
    ['-5', 'must be a number such as 25 or 12.50'],
    ['1,5', separators],
    ['1,500', separators],
    ['1 500', separators],
    ["1'500", separators],
    ['0', 'must be more than 0'],
    ['0.00', 'must be more than 0'],
    ['0.5', 'must be at least 1.00 USDC'],
    ['500.01', 'must be at most 500.00 USDC'],
    ['1.123456789', 'must have at most 8 decimals'],
    // USDC has 6 decimals on every network offered: said at the field, not as a payment that cannot start.
    ['1.0000001', 'must have at most 6 decimals for USDC'],
    ['99999999999999999999', 'is too large'],
  ];
  for (const [amount, problem] of cases) {
    const answer = await submit(link.url, { amount, email });
    t.is(answer.status, 400, amount);
    t.deepEqual(problemsOf(answer.html), [`Amount: ${problem}`], amount);
    t.regex(
      answer.html,
      /<input id="in-amount" name="amount" [^>]*aria-invalid="true" aria-describedby="in-amount-error">/,
    );
    t.is(
      /<span class="error" id="in-amount-error">([^<]*)<\/span>/.exec(answer.html)?.[1]?.replace(/&#39;/g, "'"),
      `Amount: ${problem}`,
      amount,
    );
  }
  t.is((await api.get<Page<Session>>(`/api/v1/checkout/sessions?paymentLinkId=${link.id}`)).body.count, 0);

  const session = await sessionBehind(api, await submit(link.url, { amount: ' 12.5 ', email }));
  t.like(session, {
    paymentLinkId: link.id,
    mode: 'payment',
    amountTotal: '1250000000',
    submitType: 'donate',
    afterCompletion: 'hosted_confirmation',
    afterCompletionConfirmMsg: 'Thank you for giving',
    successUrl: `${weir.url}/checkout/{CHECKOUT_SESSION_ID}`,
  });
  t.is(session.lineItems.data[0]!.price.productId, link.productId, "the amount is a price of the link's own product");
  t.deepEqual(session.customerDetails, { name: null, email, phone: null, address: null });
  t.is((await sessionBehind(api, await submit(link.url, { amount: '500', email }))).amountTotal, '50000000000');

  // A suggested amount pressed without the script is the amount, over one typed; refused, it is in the input.
  const pressed = await submit(link.url, { suggestedAmount: '10', amount: '', email });
  t.is((await sessionBehind(api, pressed)).amountTotal, '1000000000');
  t.is(
    (await sessionBehind(api, await submit(link.url, { amount: '7', suggestedAmount: '5', email }))).amountTotal,
    '500000000',
  );
  const noEmail = await submit(link.url, { suggestedAmount: '10', amount: '3' });
  t.deepEqual(problemsOf(noEmail.html), ['Email: is required']);
  t.regex(noEmail.html, /<input id="in-amount" name="amount" value="10" /);
  t.deepEqual(problemsOf((await submit(link.url, { suggestedAmount: '0.5', email })).html), [
    'Amount: must be at least 1.00 USDC',
  ]);
});

test('a subscription link opens a subscription session for its recurring price', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const plan = (
    await api.post<{ id: string; defaultPrice: { id: string } }>('/api/v1/products', {
      name: 'Pro plan',
      defaultPriceData: { currency: 'usdc', unitAmount: '1000000000', interval: 'month' },
    })
  ).body;
  const link = await createLink(api, {
    title: 'Pro monthly',
    productId: plan.id,
    emailCollection: true,
    allowedChains: [{ chainId: 7357, isPreferred: true }],
  });
  const page = await open(link.url);
  t.regex(page.html, /<p class="price" id="price">10\.00 USDC every month<\/p>/);
  t.deepEqual(problemsOf((await submit(link.url, { email: 'x' })).html), [
    'Email: must be an email address, such as payer@example.com',
  ]);
  const session = await sessionBehind(api, await submit(link.url, { email: 'sub@example.com' }));
  t.like(session, {
    paymentLinkId: link.id,
    mode: 'subscription',
    amountTotal: '1000000000',
    allowPromotionCodes: false,
  });
  t.is(session.lineItems.data[0]!.price.id, plan.defaultPrice.id);
  t.is(session.lineItems.data[0]!.price.type, 'recurring');
  t.deepEqual(session.paymentSetting.allowedChains, [{ chainId: 7357 }]);
  t.is(session.paymentSetting.preferredChainId, 7357);
});

test('an inactive link shows a 410 page and takes no payment; an unknown or deleted one a 404 page', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const link = await createLink(api, { title: 'Sold out', amount: '100000000', currency: 'usdc' });
  t.is((await api.put(`/api/v1/payment-links/${link.id}/deactivate`, {})).status, 200);
  const before = await logLength(weir);
  for (const answer of [await open(link.url), await submit(link.url, {})]) {
    t.is(answer.status, 410);
    t.regex(answer.html, /<p id="notice">This payment link is not active, so it cannot take payments/);
    t.notRegex(answer.html, /<form/);
  }
  t.is(await logLength(weir), before);
  t.is((await api.put(`/api/v1/payment-links/${link.id}/activate`, {})).status, 200);
  t.is((await open(link.url)).status, 200);
  t.is((await submit(link.url, {})).status, 303);

  t.is((await api.delete(`/api/v1/payment-links/${link.id}`)).status, 200);
  for (const url of [link.url, `${weir.url}/pay/00000000-0000-4000-8000-000000000000`, `${weir.url}/pay/not-a-link`]) {
    const answer = await open(url);
    t.is(answer.status, 404, url);
    t.regex(answer.html, /<p id="notice">This payment link does not exist/);
    t.is((await submit(url, {})).status, 404);
  }
});

/** A page's frame: its HTML with the title and the card's words left out, to tell one kind of page from another. */
const frameOf = (html: string) =>
  html
    .replace(/<title>[^<]*<\/title>/, '<title></title>')
    .replace(/<h1>[^<]*<\/h1>/, '<h1></h1>')
    .replace(/<p id="notice">[^<]*<\/p>/, '<p id="notice"></p>');

test('an unknown or deleted link is the 404 notice page an unknown checkout and invoice are, in its words (was a left-aligned page headed "Payment")', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const link = await createLink(api, { title: 'Tea', amount: '100000000', currency: 'usdc' });
  t.is((await api.delete(`/api/v1/payment-links/${link.id}`)).status, 200);
  const unknown = '00000000-0000-4000-8000-000000000000';
  const checkout = await open(`${weir.url}/checkout/${unknown}`);
  t.is(checkout.status, 404);
  t.regex(checkout.html, /<body class="error">/);
  t.is(
    frameOf((await open(`${weir.url}/invoices/${unknown}`)).html),
    frameOf(checkout.html),
    'the invoice’s is the same',
  );
  for (const url of [`${weir.url}/pay/${unknown}`, link.url, `${weir.url}/pay/not-a-link`])
    for (const answer of [await open(url), await submit(url, {})]) {
      t.is(answer.status, 404, url);
      t.is(frameOf(answer.html), frameOf(checkout.html), url);
      t.true(answer.html.includes('<title>Payment link not found</title>'), url);
      t.true(answer.html.includes('<h1>Payment link not found</h1>'), url);
      t.regex(
        answer.html,
        /<p id="notice">This payment link does not exist or is no longer available\. Check the address, or ask the seller for a new link\.<\/p>/,
      );
      t.notRegex(answer.html, /Corner Coffee|<form/, 'nothing of the merchant whose link it was');
    }
});

test("a link whose product or price is gone or off shows a 410 page saying it is not available, on GET and POST alike, where POST was a 400 naming the session's fields", async (t) => {
  const weir = await startTestWeir(t);
  const { api, organizationId } = await createMerchant(weir.url);
  const product = await api.post<{ id: string; defaultPrice: { id: string } }>('/api/v1/products', {
    name: 'Tea',
    defaultPriceData: { currency: 'usdc', unitAmount: '100000000' },
  });
  const link = await createLink(api, { title: 'Tea', priceId: product.body.defaultPrice.id });
  // The API now refuses these while the link is on: they are written as an earlier Weir wrote them.
  const earlier = (stream: string, type: string, data: object) =>
    appendAsEarlierWeir(weir, organizationId, stream, type, data);
  const unavailable = async (why: string) => {
    const before = await logLength(weir);
    for (const answer of [await open(link.url), await submit(link.url, {})]) {
      t.is(answer.status, 410, why);
      t.regex(
        answer.html,
        /<p id="notice">This payment link is not available: what it sells is no longer offered/,
        why,
      );
      t.notRegex(answer.html, /<form|lineItems|does not exist/, why);
    }
    t.is(await logLength(weir), before, `${why}: nothing written`);
  };
  const price = `price-${product.body.defaultPrice.id}`;
  const productStream = `product-${product.body.id}`;
  await earlier(price, 'PriceUpdated', { changes: { isActive: false } });
  await unavailable('price inactive');
  await earlier(price, 'PriceUpdated', { changes: { isActive: true } });
  await earlier(productStream, 'ProductUpdated', { changes: { isActive: false } });
  await unavailable('product inactive');
  await earlier(productStream, 'ProductUpdated', { changes: { isActive: true } });
  t.is((await open(link.url)).status, 200, 'sold again');
  await earlier(productStream, 'ProductDeleted', {});
  await unavailable('product deleted');
});

// --- refusals after the payer's input is read -----------------------------------------------

/** What no payer page shows: the API's refusal, its codes and fields, the merchant's wallets and routes. */
const INTERNALS =
  /lineItems|successUrl|afterCompletion|paymentSetting|withdrawal-addresses|\/api\/v1|payment_method|parameter_invalid|rate_limited|rate limit|hosted_creates|statusCode|&quot;code|0x[0-9a-f]{40}|This payment cannot be started/i;
const TEST_BADGE = '<span class="badge">Test mode</span>';
const BACK = (link: Link) => `<a id="back" href="/pay/${link.id}">Back to the payment page</a>`;

/** A notice page in plain words: its status, heading and words, the test badge, a way back (or none), no internals. */
function assertNotice(
  t: import('ava').ExecutionContext,
  answer: Answer,
  expected: { status: number; heading: string; says: RegExp; testMode: boolean; back: string | null },
): void {
  const why = `${answer.status}: ${answer.html.slice(0, 1500)}`;
  t.is(answer.status, expected.status, why);
  t.regex(answer.headers.get('content-type') ?? '', /^text\/html/);
  t.is(answer.headers.get('cache-control'), 'no-store');
  t.true(answer.html.includes(`<h1>${expected.heading}</h1>`), why);
  t.regex(answer.html, expected.says);
  t.is(answer.html.includes(TEST_BADGE), expected.testMode, 'the Test mode badge, as on the checkout page');
  if (expected.back) t.true(answer.html.includes(expected.back), why);
  else t.notRegex(answer.html, /id="back"/);
  t.notRegex(answer.html, INTERNALS);
  t.notRegex(answer.html, /<form/);
}

test("a refusal of the link's own settings once the payer's input is read is a 409 page in plain words (was the refusal's text on the form, naming the session's fields), the refusal itself in the log only (was nowhere); nothing is written", async (t) => {
  const lines: string[] = [];
  const weir = await startTestWeir(t, {}, { log: (line) => lines.push(line) });
  const { api, organizationId } = await createMerchant(weir.url);
  const link = await createLink(api, { title: 'Tea', amount: '100000000', currency: 'usdc' });
  // A redirect the API refuses today, kept from an earlier Weir: its sessions' successUrl is refused.
  await appendAsEarlierWeir(weir, organizationId, `payment_link-${link.id}`, 'PaymentLinkUpdated', {
    changes: { afterCompletion: 'redirect', afterCompletionRedirectUrl: 'ftp://shop.example/thanks' },
  });
  t.is((await open(link.url)).status, 200, 'its form is shown: nothing on it is wrong');
  const before = await logLength(weir);
  assertNotice(t, await submit(link.url, {}), {
    status: 409,
    heading: 'Payment link cannot be paid right now',
    says: /<p id="notice">This payment link cannot be paid right now: the seller&#39;s settings for it do not allow a payment at the moment\. Please contact them\.<\/p>/,
    testMode: true,
    back: null,
  });
  t.is(await logLength(weir), before);
  const refused = lines
    .map((line) => JSON.parse(line) as { event?: string; level?: number; paymentLinkId?: string; refusal?: string })
    .filter((l) => l.event === 'payment_link.refused');
  t.is(refused.length, 1, 'the refusal, for the merchant, in the log');
  t.like(refused[0], { level: 40, paymentLinkId: link.id });
  t.regex(refused[0]?.refusal ?? '', /successUrl/, 'in its own words, which the page does not show');
});

test('a link the merchant’s setup cannot take (no wallet left for its currency; a price finer than its assets, a setting of the link) is the 409 page saying so, with its badge and without the refusal', async (t) => {
  const weir = await startTestWeir(t);
  const { api, organizationId } = await createMerchant(weir.url);
  const link = await createLink(api, { title: 'Tea', amount: '100000000', currency: 'usdc' });
  const crumb = await createLink(api, { title: 'Crumb', amount: '1000000', currency: 'usdc' });
  // A hundredth of a millionth of a USDC, finer than its 6 decimals: the API refuses such a price on a link today.
  await appendAsEarlierWeir(weir, organizationId, `price-${crumb.priceId}`, 'PriceUpdated', {
    changes: { unitAmount: '1' },
  });
  await appendAsEarlierWeir(weir, organizationId, `payment_link-${crumb.id}`, 'PaymentLinkUpdated', {
    changes: { amount: '1' },
  });
  const cannot = {
    status: 409,
    heading: 'Payment link cannot be paid right now',
    says: /<p id="notice">This payment link cannot be paid online right now: the seller has no way set up to take this payment\. Please contact them\.<\/p>/,
    testMode: true,
    back: null,
  };
  const before = await logLength(weir);
  // The price is refused where the session would sell it (naming it, for the merchant): the link's settings, not its wallets.
  assertNotice(t, await submit(crumb.url, {}), {
    ...cannot,
    says: /<p id="notice">This payment link cannot be paid right now: the seller&#39;s settings for it do not allow a payment at the moment\. Please contact them\.<\/p>/,
  });
  const wallets = await api.get<{ id: string }[]>('/api/v1/organization/withdrawal-addresses');
  for (const wallet of wallets.body)
    t.is((await api.delete(`/api/v1/organization/withdrawal-addresses/${wallet.id}`)).status, 200);
  assertNotice(t, await submit(link.url, {}), cannot);
  t.is(await logLength(weir), before + wallets.body.length, 'only the wallets’ removal is written');
});

test('a rate limit on the link page is a 429 page with Retry-After, in the link’s frame with its badge and a way back; for an unknown link, plainly; its words say which limit was spent (payments started, or page reads: were the payments’ words for a read too) and when to try again as Retry-After does (5 seconds for a payment started, 1 second for a read; were "Wait a minute")', async (t) => {
  const clock = createManualClock();
  const weir = await startTestWeir(
    t,
    { rateLimitHosted: { perSecond: 1, burst: 4 }, rateLimitHostedCreates: { perSecond: 1 / 5, burst: 1 } },
    { clock },
  );
  const { api } = await createMerchant(weir.url, 'Corner Coffee');
  const link = await createLink(api, { title: 'Tea', amount: '100000000', currency: 'usdc' });
  t.is((await submit(link.url, {})).status, 303);
  const tooMany = {
    status: 429,
    heading: 'Too many attempts',
    says: /<p id="notice">Too many payments were started from your connection in a short time\. Try again in 5 seconds\.<\/p>/,
  };
  const limited = await submit(link.url, {});
  assertNotice(t, limited, { ...tooMany, testMode: true, back: BACK(link) });
  t.is(limited.headers.get('retry-after'), '5');
  t.regex(limited.headers.get('content-security-policy') ?? '', /default-src/, 'the hosted pages’ headers stay');
  t.regex(limited.html, /<strong>Corner Coffee<\/strong>/);
  const unknown = await submit(`${weir.url}/pay/00000000-0000-4000-8000-000000000000`, {});
  assertNotice(t, unknown, { ...tooMany, testMode: false, back: null });
  // Reads spend the larger bucket: past it, a GET is a 429 page in the read limit’s own words.
  for (let i = 0; i < 3; i++) t.is((await open(link.url)).status, 200);
  const read = await open(link.url);
  assertNotice(t, read, {
    status: 429,
    heading: 'Too many requests',
    says: /<p id="notice">Too many requests came from your connection in a short time\. Try again in 1 second\.<\/p>/,
    testMode: true,
    back: BACK(link),
  });
  t.is(read.headers.get('retry-after'), '1');
});

test('a form too large to read is a 413 page with a way back, not the API error', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const link = await createLink(api, { title: 'Tea', amount: '100000000', currency: 'usdc', nameCollection: true });
  const before = await logLength(weir);
  assertNotice(t, await submit(link.url, { name: 'x'.repeat(MAX_PUBLIC_BODY_BYTES + 1) }), {
    status: 413,
    heading: 'Too much to send',
    says: /What you entered is too long to send\. Go back, shorten your answers and try again\./,
    testMode: true,
    back: BACK(link),
  });
  t.is(await logLength(weir), before);
});

test('every notice of a test link says Test mode, as its form and the checkout page do; a live link’s none', async (t) => {
  const weir = await startTestWeir(t);
  const { api, live } = await createMerchant(weir.url);
  for (const [client, testMode] of [
    [api, true],
    [live, false],
  ] as const) {
    // A live link without a live wallet: a price the payer enters (a fixed one is refused without one).
    const link = await createLink(client, { title: 'Tip', currency: 'usdc' });
    t.is((await open(link.url)).html.includes(TEST_BADGE), testMode, 'the form');
    t.is((await client.put(`/api/v1/payment-links/${link.id}/deactivate`, {})).status, 200);
    for (const answer of [await open(link.url), await submit(link.url, {})])
      assertNotice(t, answer, {
        status: 410,
        heading: 'Payment link inactive',
        says: /This payment link is not active/,
        testMode,
        back: null,
      });
  }
});

test('a form posted as anything but a form is refused on the form in plain words (was the refusal naming the content type the route reads)', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const link = await createLink(api, { title: 'Tea', amount: '100000000', currency: 'usdc' });
  const answer = await submit(link.url, {}, 'application/json');
  t.is(answer.status, 400);
  t.regex(
    answer.html,
    /<div id="problems" role="alert"><p>Your answers could not be read: they were not sent from this page\. Fill in the form below and press the button again\.<\/p><\/div>/,
  );
  t.regex(answer.html, /<form method="post"/, 'the form to send again');
  t.notRegex(answer.html, /x-www-form-urlencoded|posted as|content.type|invalid_content_type/i);
});

// --- one_time and multiple links ------------------------------------------------------------

/** Opens a session on the link's page as a payer and pays it in full. */
async function payThroughPage(weir: Parameters<typeof payInFull>[0], api: Api, link: Link): Promise<Session> {
  return payInFull(weir, api, await sessionBehind(api, await submit(link.url, {})));
}

const USED = /<p id="notice">This payment link has already been used: it takes one payment only/;
const linkIds = async (api: Api, query: string) =>
  (await api.get<Page<Link>>(`/api/v1/payment-links?${query}`)).body.data.map((l) => l.id);

test('a one_time link takes one payment: once paid, its page is a 410 saying it has been used, opens no session, and the merchant sees it inactive', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const link = await createLink(api, {
    title: 'Portrait commission',
    amount: '100000000',
    currency: 'usdc',
    type: 'one_time',
  });
  t.like(link, { type: 'one_time', isActive: true });
  await payThroughPage(weir, api, link);

  const before = await logLength(weir);
  for (const answer of [await open(link.url), await submit(link.url, {})]) {
    t.is(answer.status, 410);
    t.regex(answer.html, USED);
    t.notRegex(answer.html, /<form/);
  }
  t.is(await logLength(weir), before, 'a used link opens no session');

  // The merchant sees it as the reference can say it: isActive false, in reads and in list filters.
  t.like((await api.get<Link>(`/api/v1/payment-links/${link.id}`)).body, { type: 'one_time', isActive: false });
  t.deepEqual(await linkIds(api, 'isActive=false'), [link.id]);
  t.deepEqual(await linkIds(api, 'isActive=true'), []);
  const refusedAsUsed = (request: Parameters<typeof assertRejectedWithoutWrite>[2]) =>
    assertRejectedWithoutWrite(t, weir, request, {
      status: 409,
      code: 'payment_link_used',
      message: /has already been paid.*set its type to multiple/,
    });
  // Asked to activate, it cannot be switched back on as a one_time link; nothing is written.
  await refusedAsUsed(() => api.put(`/api/v1/payment-links/${link.id}/activate`, {}));
  // Edits that do not reopen it are fine; it stays used. A body repeating isActive: true (a whole link sent
  // back, the merchant's switch still on) changes no switch: it is no error, and the link still shows used.
  t.like((await api.put<Link>(`/api/v1/payment-links/${link.id}`, { title: 'Portrait commission (done)' })).body, {
    isActive: false,
  });
  // The link as the client read it before it was paid, sent back whole.
  const {
    id: _id,
    url: _url,
    livemode: _livemode,
    createdAt: _c,
    updatedAt: _u,
    organizationId: _o,
    ...whole
  } = link as Link & Record<string, unknown>;
  const echoed = await api.put<Link>(`/api/v1/payment-links/${link.id}`, {
    ...whole,
    title: 'Portrait commission (delivered)',
  });
  t.is(echoed.status, 200, JSON.stringify(echoed.body));
  t.like(echoed.body, { type: 'one_time', isActive: false, title: 'Portrait commission (delivered)' });
  // Switched off by the merchant, switching it on again as a one_time link is a real re-activation: refused.
  t.like((await api.put<Link>(`/api/v1/payment-links/${link.id}/deactivate`, {})).body, { isActive: false });
  await refusedAsUsed(() => api.put(`/api/v1/payment-links/${link.id}`, { isActive: true, title: 'Again' }));
  await refusedAsUsed(() => api.put(`/api/v1/payment-links/${link.id}/activate`, {}));
  // Made a multiple link and switched on, it takes payments again.
  t.like((await api.put<Link>(`/api/v1/payment-links/${link.id}`, { type: 'multiple', isActive: true })).body, {
    type: 'multiple',
    isActive: true,
  });
  t.is((await open(link.url)).status, 200);
  t.is((await submit(link.url, {})).status, 303);
});

test('a multiple link takes any number of payments: paid twice, it stays active and its page still opens sessions', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const link = await createLink(api, { title: 'Coffee', amount: '100000000', currency: 'usdc', type: 'multiple' });
  for (let i = 0; i < 2; i++) t.is((await payThroughPage(weir, api, link)).status, 'complete');
  t.like((await api.get<Link>(`/api/v1/payment-links/${link.id}`)).body, { type: 'multiple', isActive: true });
  t.is((await open(link.url)).status, 200);
  t.is((await submit(link.url, {})).status, 303);
  const paid = (await api.get<Page<Session>>(`/api/v1/checkout/sessions?paymentLinkId=${link.id}`)).body.data.filter(
    (s) => s.status === 'complete',
  );
  t.is(paid.length, 2);
});

const linksIn = (store: ReadStore) => store.collection<PaymentLinkDoc>(PAYMENT_LINKS).find({}, { sort: { _id: 1 } });

test('one_time and concurrent payers: an open session does not hold the link, sessions opened before the first payment can all be paid, then none opens; a rebuild counts the same', async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const link = await createLink(api, { title: 'Last ticket', amount: '100000000', currency: 'usdc', type: 'one_time' });
  // Two payers open the page before either pays: the second is not turned away by the first's open session.
  const first = await sessionBehind(api, await submit(link.url, {}));
  const second = await sessionBehind(api, await submit(link.url, {}));
  t.is(second.status, 'open');
  t.is(first.status, 'open');

  await payInFull(weir, api, first);
  t.regex((await submit(link.url, {})).html, USED);
  // Money sent on chain is never refused: the session opened before the first payment completes too.
  t.is((await payInFull(weir, api, second)).status, 'complete');
  t.like((await api.get<Link>(`/api/v1/payment-links/${link.id}`)).body, { isActive: false });
  assertError(t, await api.put(`/api/v1/payment-links/${link.id}/activate`, {}), 409, { code: 'payment_link_used' });
  const live = await linksIn(weir.readStore);
  t.like(
    live.find((l) => l._id === link.id),
    { completedPayments: 2, takesPayments: false },
  );

  // Rebuilt from the log, twice over one store, the links are what the live projections built.
  await weir.projections.waitFor((await weir.eventStore.headPosition())!);
  const rebuilt = createEmbeddedReadStore({});
  const runner = createProjectionRunner({
    eventStore: weir.eventStore,
    readStore: rebuilt,
    projections: ALL_PROJECTIONS,
  });
  await runner.rebuild();
  t.deepEqual(await linksIn(rebuilt), live);
  await runner.rebuild();
  t.deepEqual(await linksIn(rebuilt), live);
  // The events from the first payment on, applied once more (a batch repeated after a crash), count nothing twice.
  const log = await weir.eventStore.readAll(null, 100_000);
  for (const event of log.slice(log.findIndex((e) => e.type === 'CheckoutSessionCompleted')))
    await paymentLinksProjection.apply(event, rebuilt);
  t.deepEqual(await linksIn(rebuilt), live);
});

test("a payer's own amount on a variable-price link leaves the merchant's catalog as it was: its price is the session's, out of the price and product lists (but for ?ids=, where it was left out) and never the product's default", async (t) => {
  const weir = await startTestWeir(t);
  const { api } = await createMerchant(weir.url);
  const link = await createLink(api, { title: 'Donation', currency: 'usdc', minimumAmount: '100000000' });
  type Listed = { id: string; productId?: string; defaultPriceId?: string | null };
  const lists = async () => ({
    prices: (await api.get<Page<Listed>>('/api/v1/prices')).body.data.map((p) => p.id),
    products: (await api.get<Page<Listed>>('/api/v1/products')).body.data.map((p) => p.id),
  });
  const before = await lists();
  t.true(before.products.includes(link.productId));

  const sessions = [
    await sessionBehind(api, await submit(link.url, { amount: '12.5' })),
    await sessionBehind(api, await submit(link.url, { amount: '7' })),
  ];
  const priceIds = sessions.map((s) => s.lineItems.data[0]!.price.id);
  t.deepEqual(await lists(), before, 'no price or product listed for what payers typed');
  t.deepEqual(
    (await api.get<Page<Listed>>(`/api/v1/prices?productId=${link.productId}`)).body.data.map((p) => p.id),
    before.prices.filter((id) => id === link.priceId),
  );
  // The sessions keep their prices: each is still had by its id, in the reference's shape.
  for (const [index, id] of priceIds.entries()) {
    const price = await api.get<Record<string, unknown>>(`/api/v1/prices/${id}`);
    t.is(price.status, 200);
    t.like(price.body, { id, productId: link.productId, unitAmount: sessions[index]!.amountTotal });
    t.false('adHoc' in price.body);
  }
  // Asked for by id, as a client expanding its sessions' line items asks, they are listed, as their product is.
  t.deepEqual(
    (await api.get<Page<Listed>>(`/api/v1/prices?ids=${priceIds.join(',')}`)).body.data.map((p) => p.id).sort(),
    [...priceIds].sort(),
  );
  const product = await api.get<{ defaultPriceId: string | null }>(`/api/v1/products/${link.productId}`);
  t.false(
    priceIds.includes(product.body.defaultPriceId ?? ''),
    "a payer's amount is never the product's default price",
  );
});
