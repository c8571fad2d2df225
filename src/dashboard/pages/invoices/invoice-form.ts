import { dueCountsFrom } from '../../../../machines/invoice.due.ts';
import { decimalAmountIn } from '../../../shared/decimal.ts';
import { formatAmount } from '../../../shared/money.ts';
import { decimalAmount } from '../../ui/form-parts.tsx';

/**
 * The invoice editor's form: read from a POST as typed, turned into the API's create or update
 * body, and the API's field paths turned back into the form's inputs. Only conversion lives here
 * (a decimal amount into its 10^8 integer, blank into "not sent"); every rule is the API's.
 */

/** Rows the editor shows at least, and at most (the API takes 1 to 20 lines). */
export const MIN_ROWS = 3;
export const MAX_ROWS = 20;

export const INTERVALS = [
  { value: '', label: 'Does not repeat' },
  { value: 'month', label: 'Every month' },
  { value: 'quarter', label: 'Every quarter' },
  { value: 'half-year', label: 'Every half-year' },
  { value: 'year', label: 'Every year' },
] as const;

/**
 * A line as typed: a catalog price, or a name and an amount (decimal, in the invoice's currency).
 * `taxRateIds`: the line's own tax rates, kept and sent back with it while the row still holds the
 * line they were set for (`taxedLine`, its `lineKey`: see `keptTaxRateIds`); otherwise, or absent,
 * the line takes the invoice's.
 */
export type LineRow = {
  price: string;
  name: string;
  amount: string;
  quantity: string;
  taxRateIds?: string[];
  taxedLine?: string;
};

export type InvoiceForm = {
  customerId: string;
  customerEmail: string;
  number: string;
  daysUntilDue: string;
  /** The due days the editor opened with: a draft's due date moves only when they are changed. */
  daysUntilDueWas: string;
  currency: string;
  interval: string;
  chainIds: string[];
  /** The assets a draft already limits payment to (kept: the editor does not show them). */
  assetIds: string[];
  memo: string;
  footer: string;
  lines: LineRow[];
};

/** Errors by input name (`customerId`, `line-2-amount`, …); `form` is for what no input names. */
export type FormErrors = Record<string, string>;

/**
 * Which line a row holds: its price, or for an ad hoc line its name and amount. Not its quantity:
 * more of the same goods are taxed as they were.
 */
export function lineKey(row: Pick<LineRow, 'price' | 'name' | 'amount'>): string {
  if (row.price) return `price:${row.price}`;
  const parsed = decimalAmount(row.amount);
  return `item:${'amount' in parsed ? parsed.amount : row.amount.trim()}:${row.name.trim()}`;
}

/**
 * The row's own tax rates while it holds the line they were set for. A row given another price, or
 * another name or amount, holds a new line, which takes the invoice's rates as any new line does:
 * an exempt line's `[]` or a line's own 5% does not pass silently to the goods typed over it.
 */
export const keptTaxRateIds = (row: LineRow): string[] | undefined =>
  row.taxRateIds && row.taxedLine === lineKey(row) ? row.taxRateIds : undefined;

/**
 * What the editor says of a row's own tax rates (`labels`: each rate's name and percentage by id):
 * `Tax: exempt` for none, else the rates. Undefined for a row taking the invoice's.
 */
export function taxNoteOf(row: LineRow, labels: ReadonlyMap<string, string>): string | undefined {
  const own = keptTaxRateIds(row);
  if (!own) return undefined;
  return own.length === 0 ? 'Tax: exempt' : `Tax: ${own.map((id) => labels.get(id) ?? `rate ${id}`).join(', ')}`;
}

const blankRow = (): LineRow => ({ price: '', name: '', amount: '', quantity: '1' });
const isBlank = (row: LineRow): boolean => !row.price && !row.name.trim() && !row.amount.trim();

/** A form with at least MIN_ROWS rows (blank ones added at the end). */
function padded(lines: LineRow[]): LineRow[] {
  const rows = [...lines];
  while (rows.length < MIN_ROWS) rows.push(blankRow());
  return rows;
}

export function blankInvoiceForm(currency: string): InvoiceForm {
  return {
    customerId: '',
    customerEmail: '',
    number: '',
    daysUntilDue: '30',
    daysUntilDueWas: '',
    currency,
    interval: '',
    chainIds: [],
    assetIds: [],
    memo: '',
    footer: '',
    lines: padded([]),
  };
}

export function readInvoiceForm(form: URLSearchParams): InvoiceForm {
  const text = (name: string) => form.get(name) ?? '';
  const count = Math.min(MAX_ROWS, Math.max(MIN_ROWS, Number.parseInt(text('rows'), 10) || MIN_ROWS));
  const lines = Array.from({ length: count }, (_, i) => ({
    price: text(`line-${i}-price`),
    name: text(`line-${i}-name`),
    amount: text(`line-${i}-amount`).trim(),
    quantity: text(`line-${i}-quantity`).trim(),
    ...(form.has(`line-${i}-taxRateIds`)
      ? {
          taxRateIds: text(`line-${i}-taxRateIds`).split(',').filter(Boolean),
          taxedLine: text(`line-${i}-taxedLine`),
        }
      : {}),
  }));
  return {
    customerId: text('customerId'),
    customerEmail: text('customerEmail').trim(),
    number: text('number').trim(),
    daysUntilDue: text('daysUntilDue').trim(),
    daysUntilDueWas: text('daysUntilDueWas'),
    currency: text('currency'),
    interval: text('interval'),
    chainIds: form.getAll('chainId'),
    assetIds: form.getAll('assetId'),
    memo: text('memo'),
    footer: text('footer'),
    lines,
  };
}

/** The form with one more (blank) row, up to MAX_ROWS. */
export const withAnotherRow = (form: InvoiceForm): InvoiceForm =>
  form.lines.length >= MAX_ROWS ? form : { ...form, lines: [...form.lines, blankRow()] };

/** What the editor needs of an invoice the API answered, to edit it. */
export type InvoiceToEdit = {
  customerId: string;
  number: string;
  /** Absent or null: issued when finalized. */
  issueDate?: string | null;
  dueDate: string;
  currency: string;
  recurring: { intervalCount: number } | null;
  paymentMethods: { chainIds: number[]; assetIds: string[] };
  memo: string | null;
  footer: string | null;
  /** The invoice's own tax rates (absent: none). */
  taxRateIds?: string[];
  lineItems: {
    data: {
      priceId: string | null;
      description: string | null;
      unitAmount: string;
      quantity: number;
      taxRates?: { id: string; isDefault: boolean }[];
    }[];
  };
};

/**
 * A line's own tax rates, as the API took them (`lineItems.data[i].taxRateIds`), or undefined when it
 * has the invoice's: rates not the invoice's, or none on a line of an invoice that has some.
 */
function ownTaxRates(line: InvoiceToEdit['lineItems']['data'][number], invoiceHasRates: boolean): string[] | undefined {
  const rates = line.taxRates ?? [];
  if (rates.some((r) => !r.isDefault)) return rates.map((r) => r.id);
  return rates.length === 0 && invoiceHasRates ? [] : undefined;
}

const INTERVAL_OF_MONTHS: Record<number, string> = { 1: 'month', 3: 'quarter', 6: 'half-year', 12: 'year' };
const DAY_MS = 86_400_000;

/**
 * A draft as the editor shows it; its due date (a due day from its midnight) as whole days (rounded up) from its issue date, or
 * from `nowMs` without one: the days the API counts `daysUntilDue` from.
 */
export function invoiceFormOf(invoice: InvoiceToEdit, nowMs: number): InvoiceForm {
  const from = invoice.issueDate ? Date.parse(invoice.issueDate) : nowMs;
  const days = String(Math.max(0, Math.ceil((dueCountsFrom(invoice.dueDate) - from) / DAY_MS)));
  return {
    customerId: invoice.customerId,
    customerEmail: '',
    number: invoice.number,
    daysUntilDue: days,
    daysUntilDueWas: days,
    currency: invoice.currency,
    interval: invoice.recurring ? (INTERVAL_OF_MONTHS[invoice.recurring.intervalCount] ?? '') : '',
    chainIds: invoice.paymentMethods.chainIds.map(String),
    assetIds: [...invoice.paymentMethods.assetIds],
    memo: invoice.memo ?? '',
    footer: invoice.footer ?? '',
    lines: padded(
      invoice.lineItems.data.map((line): LineRow => {
        const row = line.priceId
          ? { price: line.priceId, name: '', amount: '', quantity: String(line.quantity) }
          : {
              price: '',
              name: line.description ?? '',
              amount: formatAmount(BigInt(line.unitAmount)),
              quantity: String(line.quantity),
            };
        const own = ownTaxRates(line, (invoice.taxRateIds ?? []).length > 0);
        return own ? { ...row, taxRateIds: own, taxedLine: lineKey(row) } : row;
      }),
    ),
  };
}

/** The body sent and, for each line sent, the form row it came from (to name a line's field). */
export type InvoiceRequest = { body: Record<string, unknown>; rows: number[] };

/**
 * The API body of the form, for `create` or `update` (an update sends null to clear a note and
 * `one_time` to stop a repeat; the due days only when changed). A customer is the caller's to add.
 * An amount that is no decimal number, or has more decimals than the invoice's currency carries
 * (`decimals`, see `currencyDecimals`), is refused here, naming its input: the API takes integers.
 */
export function invoiceRequest(
  form: InvoiceForm,
  mode: 'create' | 'update',
  decimals: number | null = null,
): { ok: true; request: InvoiceRequest } | { ok: false; errors: FormErrors } {
  const errors: FormErrors = {};
  const rows: number[] = [];
  const data: Record<string, unknown>[] = [];
  for (const [i, row] of form.lines.entries()) {
    if (isBlank(row)) continue;
    // A quantity that is not a whole number goes as typed: the API names what is wrong with it.
    const quantity = /^[0-9]+$/.test(row.quantity) ? Number(row.quantity) : row.quantity || 1;
    rows.push(i);
    const own = keptTaxRateIds(row);
    const taxed = own ? { taxRateIds: own } : {};
    if (row.price) {
      data.push({ priceId: row.price, quantity, ...taxed });
      continue;
    }
    const parsed = row.amount
      ? decimalAmountIn(row.amount, form.currency, decimals)
      : { error: 'is required for a line without a product' };
    if ('error' in parsed) errors[`line-${i}-amount`] = parsed.error;
    const unitAmount = 'amount' in parsed ? parsed.amount : '';
    data.push({
      priceData: { currency: form.currency, unitAmount, productData: { name: row.name } },
      quantity,
      ...taxed,
    });
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  const body: Record<string, unknown> = {};
  if (data.length > 0 || mode === 'create') body.lineItems = { data };
  if (form.number) body.number = form.number;
  if (form.daysUntilDue !== form.daysUntilDueWas || mode === 'create')
    body.daysUntilDue = /^[0-9]+$/.test(form.daysUntilDue) ? Number(form.daysUntilDue) : form.daysUntilDue;
  if (form.interval) Object.assign(body, { invoiceType: 'recurring', interval: form.interval });
  else if (mode === 'update') body.invoiceType = 'one_time';
  body.paymentMethods = {
    chainIds: form.chainIds.map((id) => (/^[0-9]+$/.test(id) ? Number(id) : id)),
    assetIds: form.assetIds,
  };
  for (const note of ['memo', 'footer'] as const) {
    const value = form[note].trim();
    if (value) body[note] = value;
    else if (mode === 'update') body[note] = null;
  }
  return { ok: true, request: { body, rows } };
}

/** The form's input an API field path names (`lineItems.data[1].priceData.unitAmount` → `line-<row>-amount`). */
export function inputOfField(field: string | undefined, rows: readonly number[]): string {
  if (!field) return 'form';
  const line = /^lineItems\.data\[(\d+)\](?:\.(.*))?$/.exec(field);
  if (line) {
    const row = rows[Number(line[1])];
    if (row === undefined) return 'lines';
    const rest = line[2] ?? '';
    if (rest.startsWith('quantity')) return `line-${row}-quantity`;
    if (rest.startsWith('priceId')) return `line-${row}-price`;
    if (rest.includes('productData')) return `line-${row}-name`;
    if (rest.includes('currency')) return 'currency';
    return rest.includes('unitAmount') ? `line-${row}-amount` : `line-${row}-price`;
  }
  if (field.startsWith('lineItems')) return 'lines';
  // The networks, and what the form keeps of a draft without showing (its assets, its preferred network).
  if (field.startsWith('paymentMethods') || field.startsWith('paymentSetting')) return 'chainId';
  if (field.startsWith('recurring') || field === 'interval' || field === 'invoiceType') return 'interval';
  if (field === 'dueDate' || field === 'daysUntilDue') return 'daysUntilDue';
  if (['customerId', 'number', 'memo', 'footer'].includes(field)) return field;
  if (field === 'email') return 'customerEmail';
  return 'form';
}

/**
 * The API's message without the field path it starts with (the form shows it at the input). A
 * refusal of what the form keeps without showing (a draft's preferred network or assets, set
 * through the API) says so, and what the merchant can do here: tick the network again. A finalize
 * or send (`action`) refused for a preferred network gone stale, or for assets it can no longer be
 * paid in, says what happened and that the draft's preferred network or assets are to be updated:
 * ticking a network there fits no such refusal. One refused for a network of the draft whose wallet
 * was removed names the network (`networks`: their names by chain id) and the two ways out here.
 */
export function messageOf(
  message: string,
  field: string | undefined,
  action?: 'finalize' | 'send',
  networks: ReadonlyMap<number, string> = new Map(),
): string {
  const bare = field && message.startsWith(`${field}: `) ? message.slice(field.length + 2) : message;
  const removed = /^chain (\d+) has no payment method/.exec(bare)?.[1];
  if (action && field?.startsWith('paymentMethods.chainIds') && removed) {
    const network = networks.get(Number(removed)) ?? `chain ${removed}`;
    return `This draft was not ${action === 'send' ? 'sent' : 'finalized'}: it is limited to networks that include ${network}, where this organization no longer has a wallet address. Add a wallet on ${network} again under ${SETTINGS_WALLETS}, or edit the draft and untick ${network}; then ${action} it again.`;
  }
  if (field === 'paymentSetting.preferredChainId') {
    const chain = /^chain (\d+) /.exec(bare)?.[1];
    const preferred = `preferred network (${chain ? `chain ${chain}, ` : ''}set through the API)`;
    const clear = "change the draft's paymentSetting.preferredChainId through the API";
    const organizations = "null clears it: the organization's preferred network applies";
    if (action) {
      const offered = /networks \(([\d, ]+):/.exec(bare)?.[1];
      return `This draft was not ${action === 'send' ? 'sent' : 'finalized'}: its ${preferred} is no longer one it can be paid on (its wallet was removed or cannot be paid, or it has no asset in the invoice's currency). Edit the draft's preferred network: ${clear} to one it can be paid on${offered ? ` (${offered.includes(',') ? 'chains' : 'chain'} ${offered})` : ''}, or to null (the organization's preferred network applies); then ${action} it again.`;
    }
    if (/with the new lineItems$/.test(bare))
      return `This draft's ${preferred} has no asset in the new currency: ${clear} first (${organizations}).`;
    return `This draft's ${preferred} must stay among its accepted networks: tick it again, or ${clear} first (${organizations}).`;
  }
  if (field?.startsWith('paymentMethods.assetIds')) {
    if (!action)
      return `This draft is limited to assets set through the API, and ${bare}. Tick that asset's network again, or change the draft's paymentMethods.assetIds through the API first.`;
    // What is wrong is the refusal up to its first hint; the form cannot change the assets, an update can.
    const wrong = bare.split(';')[0]!;
    const update = /PUT (\/api\/v1\/invoices\/[^\s)]+)/.exec(bare)?.[1];
    const walletless = /on chain (\d+), which has no payment method/.exec(wrong)?.[1];
    return `This draft was not ${action === 'send' ? 'sent' : 'finalized'}: it is limited to assets set through the API, and ${wrong}. Update the draft's paymentMethods.assetIds through the API${update ? ` (PUT ${update})` : ''} to assets it can be paid in, or to an empty list (every asset of its networks)${walletless ? `, or add a wallet for chain ${walletless} again` : ''}; then ${action} it again.`;
  }
  return inSettings(bare);
}

const SETTINGS_WALLETS = 'Settings → Payment methods';

/** The API's routes a refusal names for a wallet: adding one, and correcting one (`PUT …/{id}`, for a broken one). */
const WALLET_ROUTES =
  /with (?:POST \/api\/v1\/organization\/withdrawal-addresses|PUT \/api\/v1\/organization\/withdrawal-addresses\/[^\s;,)]+)/g;

/**
 * A refusal for a missing wallet (add one) or a broken one (correct it: `payment_method_invalid`),
 * pointed at where the dashboard does either rather than the API's routes.
 */
export const inSettings = (message: string): string => message.replace(WALLET_ROUTES, `under ${SETTINGS_WALLETS}`);
