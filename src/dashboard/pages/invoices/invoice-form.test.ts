import test from 'ava';
import {
  blankInvoiceForm,
  inputOfField,
  invoiceFormOf,
  invoiceRequest,
  MAX_ROWS,
  messageOf,
  readInvoiceForm,
  type InvoiceToEdit,
  withAnotherRow,
} from './invoice-form.ts';
import { LineRows } from './editor.tsx';

const PRICE = '5d7b1a3e-2f0c-4c1e-9a55-0c7e2b8d4f61';

function typed(fields: Record<string, string | string[]>): URLSearchParams {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(fields))
    for (const v of Array.isArray(value) ? value : [value]) form.append(name, v);
  return form;
}

test('a create body: catalog and ad hoc lines (blank rows left out), the decimal amount as a 10^8 integer, blanks not sent', (t) => {
  const form = readInvoiceForm(
    typed({
      rows: '4',
      currency: 'usdc',
      daysUntilDue: '14',
      'line-0-price': PRICE,
      'line-0-quantity': '2',
      'line-2-name': 'Setup',
      'line-2-amount': '12.5',
      'line-2-quantity': '1',
      interval: 'quarter',
      chainId: ['7357'],
      memo: '  ',
    }),
  );
  t.is(form.lines.length, 4);
  const built = invoiceRequest(form, 'create');
  if (!built.ok) return t.fail();
  t.deepEqual(built.request.rows, [0, 2]);
  t.deepEqual(built.request.body, {
    lineItems: {
      data: [
        { priceId: PRICE, quantity: 2 },
        { priceData: { currency: 'usdc', unitAmount: '1250000000', productData: { name: 'Setup' } }, quantity: 1 },
      ],
    },
    daysUntilDue: 14,
    invoiceType: 'recurring',
    interval: 'quarter',
    paymentMethods: { chainIds: [7357], assetIds: [] },
  });
});

test('an amount that is no decimal number names its row; nothing else is built', (t) => {
  const form = readInvoiceForm(typed({ rows: '3', currency: 'usdc', 'line-1-name': 'Fee', 'line-1-amount': 'ten' }));
  t.deepEqual(invoiceRequest(form, 'create'), {
    ok: false,
    errors: { 'line-1-amount': 'must be a number such as 25 or 12.50' },
  });
  // 1,500 is 1500 to some and 1.5 to others: the form says how to write it rather than guess.
  for (const amount of ['1,5', '1,500', '1 500'])
    t.deepEqual(
      invoiceRequest(readInvoiceForm(typed({ rows: '3', 'line-1-name': 'Fee', 'line-1-amount': amount })), 'create'),
      {
        ok: false,
        errors: { 'line-1-amount': 'must be written with a dot for decimals and no separators, such as 1500 or 1.5' },
      },
      amount,
    );
  const missing = readInvoiceForm(typed({ rows: '3', 'line-0-name': 'Fee' }));
  t.deepEqual(invoiceRequest(missing, 'create'), {
    ok: false,
    errors: { 'line-0-amount': 'is required for a line without a product' },
  });
});

test("an amount with more decimals than the invoice's currency carries names its row and the decimals allowed; nothing is built", (t) => {
  const form = readInvoiceForm(
    typed({ rows: '3', currency: 'usdc', 'line-1-name': 'Fee', 'line-1-amount': '1.1234567' }),
  );
  t.deepEqual(invoiceRequest(form, 'create', 6), {
    ok: false,
    errors: { 'line-1-amount': 'must have at most 6 decimals in USDC: no USDC asset carries more' },
  });
  // Six decimals (trailing zeros beyond them too) are an amount; no limit known, all eight the API takes.
  const six = readInvoiceForm(
    typed({ rows: '3', currency: 'usdc', 'line-1-name': 'Fee', 'line-1-amount': '1.12345600' }),
  );
  t.true(invoiceRequest(six, 'create', 6).ok);
  t.true(invoiceRequest(form, 'create').ok);
});

test('an update clears blank notes, stops a repeat, and moves the due date only when its days changed', (t) => {
  const form = invoiceFormOf(
    {
      customerId: 'c1',
      number: 'INV-7',
      dueDate: new Date(Date.UTC(2026, 0, 11)).toISOString(),
      currency: 'usdc',
      recurring: null,
      paymentMethods: { chainIds: [], assetIds: ['usdc-7357'] },
      memo: 'old',
      footer: null,
      lineItems: { data: [{ priceId: PRICE, description: 'Beans', unitAmount: '100', quantity: 3 }] },
    },
    Date.UTC(2026, 0, 1),
  );
  t.is(form.daysUntilDue, '10');
  t.is(form.lines.length, 3);
  const built = invoiceRequest({ ...form, memo: '' }, 'update');
  if (!built.ok) return t.fail();
  t.deepEqual(built.request.body, {
    lineItems: { data: [{ priceId: PRICE, quantity: 3 }] },
    number: 'INV-7',
    invoiceType: 'one_time',
    paymentMethods: { chainIds: [], assetIds: ['usdc-7357'] },
    memo: null,
    footer: null,
  });
  const moved = invoiceRequest({ ...form, daysUntilDue: '20' }, 'update');
  t.true(moved.ok && moved.request.body.daysUntilDue === 20);
});

test('a draft issued later shows its due date as days from its issue date, as the API counts daysUntilDue', (t) => {
  const form = invoiceFormOf(
    {
      customerId: 'c1',
      number: 'INV-8',
      issueDate: new Date(Date.UTC(2026, 1, 1)).toISOString(),
      dueDate: new Date(Date.UTC(2026, 1, 8)).toISOString(),
      currency: 'usdc',
      recurring: null,
      paymentMethods: { chainIds: [], assetIds: [] },
      memo: null,
      footer: null,
      lineItems: { data: [] },
    },
    Date.UTC(2026, 0, 1),
  );
  t.is(form.daysUntilDue, '7');
});

test('rows: at least 3, one more per "add line", at most 20', (t) => {
  t.is(blankInvoiceForm('usdc').lines.length, 3);
  t.is(readInvoiceForm(typed({ rows: '999' })).lines.length, MAX_ROWS);
  let form = readInvoiceForm(typed({ rows: '19' }));
  form = withAnotherRow(withAnotherRow(form));
  t.is(form.lines.length, MAX_ROWS);
});

test('API field paths land on the input of the row they came from', (t) => {
  const rows = [0, 2];
  t.is(inputOfField('lineItems.data[1].priceData.unitAmount', rows), 'line-2-amount');
  t.is(inputOfField('lineItems.data[1].quantity', rows), 'line-2-quantity');
  t.is(inputOfField('lineItems.data[0].priceId', rows), 'line-0-price');
  t.is(inputOfField('lineItems.data[1].priceData.productData.name', rows), 'line-2-name');
  t.is(inputOfField('lineItems.data', rows), 'lines');
  t.is(inputOfField('paymentMethods.chainIds[0]', rows), 'chainId');
  t.is(inputOfField('interval', rows), 'interval');
  t.is(inputOfField('number', rows), 'number');
  t.is(inputOfField(undefined, rows), 'form');
  t.is(messageOf('number: is taken', 'number'), 'is taken');
});

test("a refusal of what the form keeps without showing (the draft's preferred network, its assets) is worded for the form, at its networks", (t) => {
  const preferred = 'paymentSetting.preferredChainId';
  t.is(inputOfField(preferred, []), 'chainId');
  t.is(inputOfField('paymentMethods.assetIds[0]', []), 'chainId');
  const said = messageOf(
    `${preferred}: chain 84532 is not one of the invoice's networks (7357): prefer one of them, sending it with the new networks`,
    preferred,
  );
  t.regex(
    said,
    /^This draft's preferred network \(chain 84532, set through the API\) must stay among its accepted networks: tick it again/,
  );
  t.notRegex(said, /sending it/, 'nothing the form cannot do');
  t.regex(said, /null clears it/, 'the way back to the organization’s preferred network');
  t.regex(
    messageOf(
      "paymentMethods.assetIds[0]: asset base-sepolia:usdc is on chain 84532, not one of the invoice's networks (7357): it could never be paid in; add its network or leave the asset out",
      'paymentMethods.assetIds[0]',
    ),
    /^This draft is limited to assets set through the API, and asset base-sepolia:usdc is on chain 84532.*Tick that asset's network again/,
  );
});

test("a finalize or send refused for the draft's stale preferred network or assets says what happened and to update them, not to tick a network", (t) => {
  const preferred = 'paymentSetting.preferredChainId';
  const refusal = `${preferred}: chain 84532 is not one of the invoice's networks (7357: every network with a payment method of this organization and an asset in USDC): prefer one of them, or clear it (null: the organization's), with PUT /api/v1/invoices/inv-1 before finalizing`;
  const finalize = messageOf(refusal, preferred, 'finalize');
  t.regex(
    finalize,
    /^This draft was not finalized: its preferred network \(chain 84532, set through the API\) is no longer one it can be paid on/,
  );
  t.regex(finalize, /Edit the draft's preferred network: .* to one it can be paid on \(chain 7357\), or to null/);
  t.regex(finalize, /then finalize it again\.$/);
  t.notRegex(finalize, /tick/i, 'nothing to tick: the form did not send it');
  t.regex(messageOf(refusal, preferred, 'send'), /^This draft was not sent: .*then send it again\.$/);
  // Its assets, kept by an older Weir in another currency: what is wrong, and the update that fixes it.
  const assets = messageOf(
    "paymentMethods.assetIds[1]: asset weir-testnet:usdc is USDC, which cannot pay an invoice in DAI: its pay page would never offer it; use an asset in DAI (weir-testnet:dai) or leave it out; or change the draft's paymentMethods (PUT /api/v1/invoices/inv-1) before finalizing",
    'paymentMethods.assetIds[1]',
    'send',
  );
  t.is(
    assets,
    "This draft was not sent: it is limited to assets set through the API, and asset weir-testnet:usdc is USDC, which cannot pay an invoice in DAI: its pay page would never offer it. Update the draft's paymentMethods.assetIds through the API (PUT /api/v1/invoices/inv-1) to assets it can be paid in, or to an empty list (every asset of its networks); then send it again.",
  );
  // An edit moving the lines to a currency the preferred network has no asset in.
  t.regex(
    messageOf(
      `${preferred}: chain 84532 is not one of the invoice's networks (7357: every network with a payment method of this organization and an asset in DAI): prefer one of them, sending it with the new lineItems`,
      preferred,
    ),
    /^This draft's preferred network \(chain 84532, set through the API\) has no asset in the new currency: change/,
  );
});

test("a finalize or send refused for a network of the draft whose wallet was removed names the network and says to add the wallet in Settings or untick it, not the API's routes", (t) => {
  // As the API answered it on the dashboard's Finalize, the Local Devnet wallet removed.
  const field = 'paymentMethods.chainIds[0]';
  const refusal = `${field}: chain 31337 has no payment method of this organization in the test environment; add a wallet address for chain 31337 with POST /api/v1/organization/withdrawal-addresses, or use one of 1399811148; or change the draft's paymentMethods (PUT /api/v1/invoices/inv-1) before finalizing`;
  const networks = new Map([[31337, 'Local Devnet']]);
  const said = messageOf(refusal, field, 'finalize', networks);
  t.is(
    said,
    'This draft was not finalized: it is limited to networks that include Local Devnet, where this organization no longer has a wallet address. Add a wallet on Local Devnet again under Settings → Payment methods, or edit the draft and untick Local Devnet; then finalize it again.',
  );
  t.regex(messageOf(refusal, field, 'send', networks), /^This draft was not sent: .*then send it again\.$/);
  // With no wallet at all: the same message, the place to add one the dashboard's.
  t.is(
    messageOf(
      'cannot be finalized: this organization has no payment method (wallet address) in the test environment, so the invoice could not be paid anywhere; add one with POST /api/v1/organization/withdrawal-addresses before finalizing',
      undefined,
      'finalize',
    ),
    'cannot be finalized: this organization has no payment method (wallet address) in the test environment, so the invoice could not be paid anywhere; add one under Settings → Payment methods before finalizing',
  );
});

test("a finalize refused for a broken wallet (the 422) says to correct it in Settings, not with the API's PUT route", (t) => {
  const refusal =
    'cannot be finalized: the payment method old-wallet on chain 84532 has the address 0x0000000000000000000000000000000000000000, which is the zero address: funds sent there are burnt; correct it with PUT /api/v1/organization/withdrawal-addresses/old-wallet; the payment method w2 on chain 7357 has the address 0x5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1f, which fails its EIP-55 checksum: check it for a typo and correct it with PUT /api/v1/organization/withdrawal-addresses/w2';
  t.is(
    messageOf(refusal, undefined, 'finalize'),
    'cannot be finalized: the payment method old-wallet on chain 84532 has the address 0x0000000000000000000000000000000000000000, which is the zero address: funds sent there are burnt; correct it under Settings → Payment methods; the payment method w2 on chain 7357 has the address 0x5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1fEE5eA1f, which fails its EIP-55 checksum: check it for a typo and correct it under Settings → Payment methods',
  );
});

test("a draft edited in the dashboard keeps each line's own tax rates: sent back with its line, not replaced by the invoice's", async (t) => {
  // The editor sent every line back without its taxRateIds: the API gave each the invoice's rates, so
  // editing a memo taxed an exempt line (its own []) and swapped a line's own 5% for the invoice's 10%.
  const vat = 'a1111111-1111-4111-8111-111111111111';
  const reduced = 'b2222222-2222-4222-8222-222222222222';
  const line = (description: string, taxRates: { id: string; isDefault: boolean }[]) => ({
    priceId: null,
    description,
    unitAmount: '100000000',
    quantity: 1,
    taxRates,
  });
  const invoice = {
    customerId: 'c',
    number: 'INV-1',
    dueDate: '2026-02-01T00:00:00.000Z',
    currency: 'usdc',
    recurring: null,
    paymentMethods: { chainIds: [], assetIds: [] },
    memo: null,
    footer: null,
    taxRateIds: [vat],
    lineItems: {
      data: [
        line('Taxed as the invoice', [{ id: vat, isDefault: true }]),
        line('Exempt', []),
        line('Reduced', [{ id: reduced, isDefault: false }]),
      ],
    },
  };
  // As the editor draws the rows and the browser posts them back.
  const html = String(await LineRows({ form: invoiceFormOf(invoice, Date.UTC(2026, 0, 1)), errors: {}, prices: [] }));
  const posted = typed({ rows: '3', currency: 'usdc' });
  for (const [, name, value] of html.matchAll(/<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g))
    posted.append(name!, value!);
  const built = invoiceRequest({ ...readInvoiceForm(posted), memo: 'Thanks' }, 'update');
  if (!built.ok) return t.fail(JSON.stringify(built.errors));
  const lines = (built.request.body.lineItems as { data: Record<string, unknown>[] }).data;
  t.deepEqual(
    lines.map((l) => l.taxRateIds),
    [undefined, [], [reduced]],
  );
});

/** What a browser posts of the editor's rows as drawn: every input, and each select's chosen option. */
function postedBack(html: string, rows: number, changes: Record<string, string> = {}): URLSearchParams {
  const posted = typed({ rows: String(rows), currency: 'usdc' });
  for (const [, name, value] of html.matchAll(/<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g))
    posted.append(name!, value!);
  for (const [, name, options] of html.matchAll(/<select[^>]*name="([^"]+)"[^>]*>(.*?)<\/select>/gs))
    posted.append(name!, /<option value="([^"]*)" selected/.exec(options!)?.[1] ?? '');
  for (const [name, value] of Object.entries(changes)) posted.set(name, value);
  return posted;
}

test("a line's own tax rates stay with its line, not its row: goods put in its place take the invoice's; the same goods in another quantity keep them", async (t) => {
  // The kept taxRateIds were the row's: an exempt line replaced by goods left the goods untaxed on an
  // invoice with VAT, and a line's own 5% passed to the goods chosen over it, nothing on screen saying so.
  const vat = 'a1111111-1111-4111-8111-111111111111';
  const reduced = 'b2222222-2222-4222-8222-222222222222';
  const books = 'c3333333-3333-4333-8333-333333333333';
  const other = 'd4444444-4444-4444-8444-444444444444';
  const line = (
    description: string,
    taxRates: { id: string; isDefault: boolean }[],
    priceId: string | null = null,
  ): InvoiceToEdit['lineItems']['data'][number] => ({
    priceId,
    description,
    unitAmount: '2000000000',
    quantity: 1,
    taxRates,
  });
  const invoice: InvoiceToEdit = {
    customerId: 'c',
    number: 'INV-1',
    dueDate: '2026-02-01T00:00:00.000Z',
    currency: 'usdc',
    recurring: null,
    paymentMethods: { chainIds: [], assetIds: [] },
    memo: null,
    footer: null,
    taxRateIds: [vat],
    lineItems: {
      data: [
        line('Exempt service', []),
        line('Books', [{ id: reduced, isDefault: false }], books),
        line('Goods', [{ id: vat, isDefault: true }]),
      ],
    },
  };
  const prices = [
    { value: books, label: 'Books · 20.00 USDC' },
    { value: other, label: 'Hardware · 50.00 USDC' },
  ];
  const labels = new Map([[reduced, 'Reduced 5%']]);
  const html = String(
    await LineRows({ form: invoiceFormOf(invoice, Date.UTC(2026, 0, 1)), errors: {}, prices, taxRates: labels }),
  );
  const sent = (changes: Record<string, string>) => {
    const built = invoiceRequest(readInvoiceForm(postedBack(html, 3, changes)), 'update');
    if (!built.ok) throw new Error(JSON.stringify(built.errors));
    return (built.request.body.lineItems as { data: Record<string, unknown>[] }).data.map((l) => l.taxRateIds);
  };

  t.deepEqual(sent({}), [[], [reduced], undefined], 'as they were');
  t.deepEqual(sent({ 'line-0-name': 'Hardware', 'line-0-amount': '50.00' }), [undefined, [reduced], undefined]);
  t.deepEqual(sent({ 'line-0-amount': '50' }), [undefined, [reduced], undefined], 'another amount: another line');
  t.deepEqual(sent({ 'line-1-price': other }), [[], undefined, undefined], 'another price: another line');
  t.deepEqual(
    sent({ 'line-1-price': '', 'line-1-name': 'Hardware', 'line-1-amount': '50' }),
    [[], undefined, undefined],
    'goods typed over a price',
  );
  t.deepEqual(
    sent({ 'line-0-quantity': '3', 'line-0-amount': '20', 'line-1-quantity': '4' }),
    [[], [reduced], undefined],
    'more of the same goods (the amount written otherwise) keep their rates',
  );

  // Said under each product, and gone once the row holds another line (as drawn again after "Add line").
  t.regex(html, /<p class="line-tax muted" id="field-line-0-price-tax">Tax: exempt<\/p>/);
  t.regex(html, /<p class="line-tax muted" id="field-line-1-price-tax">Tax: Reduced 5%<\/p>/);
  t.regex(html, /aria-describedby="field-line-1-price-tax"/);
  t.is(html.match(/class="line-tax/g)?.length, 2, "none for a line taking the invoice's");
  const redrawn = String(
    await LineRows({
      form: readInvoiceForm(postedBack(html, 3, { 'line-1-price': other })),
      errors: {},
      prices,
      taxRates: labels,
    }),
  );
  t.notRegex(redrawn, /Reduced 5%/);
  t.regex(redrawn, /Tax: exempt/);
});
