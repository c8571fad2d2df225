import type { CustomField } from '../../machines/collected-data.types.ts';
import type { PaymentLink } from '../../machines/payment-link.types.ts';
import type { Organization } from '../actors/organization.ts';
import { documentAmount, formatAmount } from '../shared/money.ts';
import { businessFooter } from './business-footer.ts';
import { renderErrorPage } from './error-page.ts';
import { escapeHtml as e, hostedPage } from './html.ts';
import { recurrence } from '../shared/recurrence.ts';
import { ADDRESS_INPUTS, addressTitle, INPUT, type FormProblem, type PayerForm } from './payment-link-form.ts';
import type { LinkNotice } from './payment-link-notices.ts';

const SUBMIT_WORDS = { pay: 'Pay', book: 'Book', donate: 'Donate' } as const;

/** A payment link page shows what the payer typed: never cached. (Security headers: headers.ts.) */
export const PAYMENT_LINK_PAGE_HEADERS = { 'Cache-Control': 'no-store' } as const;

function shell(org: Organization | null, title: string, main: string, withScript = false, testMode = false): string {
  return hostedPage({
    title,
    kind: 'payment-link',
    org,
    business: org?.name ?? 'Payment',
    main,
    testMode,
    footer: businessFooter(org),
    ...(withScript ? { script: { name: 'payment-link.js' as const } } : {}),
  });
}

/**
 * A page that only says something: an unknown or inactive link, a payment that could not be started.
 * The notice page every hosted page shows (error-page.ts), as `/checkout/{id}` does; `link`: the link
 * it is about, when known: its notice has its business details below, says "Test mode" as its form
 * does, and one the payer may try again leads back to its form. Of no link (an unknown id), the notice
 * of an unknown checkout or invoice: no business to frame it in.
 */
export function renderPaymentLinkNotice(
  org: Organization | null,
  notice: LinkNotice,
  link: Pick<PaymentLink, 'id' | 'environment'> | null,
): string {
  return renderErrorPage({
    org,
    heading: notice.heading,
    message: notice.message,
    testMode: link?.environment === 'test',
    back: link && notice.retry ? { href: `/pay/${link.id}`, words: 'Back to the payment page' } : null,
    ...(link ? { footer: businessFooter(org) } : {}),
  });
}

// Prices read as the invoice and the dashboard show them (`1.50 USDC`); a suggested amount fills the input plainly.
const money = (amount: string, currency: string) => `${documentAmount(BigInt(amount))} ${currency.toUpperCase()}`;

function priceLine(link: PaymentLink): string {
  if (link.amount === null) return '';
  const every = recurrence(link.interval, link.intervalCount);
  return `<p class="price" id="price">${e(money(link.amount, link.currency))}${every ? ` ${e(every)}` : ''}</p>`;
}

/**
 * Enter in an input presses the form's first submit button: this one, the form's own submit, not the
 * first suggested amount (which would pay that amount, not the one typed).
 */
const DEFAULT_SUBMIT = '\n    <button type="submit" hidden></button>';

/**
 * The public page of a payment link: what is sold, and a form for what the link collects.
 * Re-rendered with the payer's input and every problem with it when a submission is refused.
 */
export function renderPaymentLinkPage(
  link: PaymentLink,
  org: Organization | null,
  state: { form: PayerForm; problems: FormProblem[]; message?: string },
): string {
  const problemOf = new Map(state.problems.map((p) => [p.input, p.message]));
  const input = (name: string, label: string, attributes: string, required: boolean) =>
    labelled(
      name,
      label,
      required,
      problemOf,
      (id, invalid) =>
        `<input id="${e(id)}" name="${e(name)}" value="${e(state.form[name] ?? '')}" ${attributes}${invalid}>`,
    );

  const parts: string[] = [];
  if (link.pricing === 'variable') {
    const { minimumAmount: min, maximumAmount: max, currency } = link;
    const bounds =
      min && max
        ? `Between ${money(min, currency)} and ${money(max, currency)}`
        : min
          ? `At least ${money(min, currency)}`
          : max
            ? `At most ${money(max, currency)}`
            : '';
    // Each submits the form with its amount (one press opens the session); the script makes them fill the input instead.
    const suggested = link.suggestedAmounts
      .map((amount) => {
        const value = e(formatAmount(BigInt(amount)));
        return `<button type="submit" class="suggested" name="${INPUT.suggested}" value="${value}" data-amount="${value}">${e(money(amount, currency))}</button>`;
      })
      .join('');
    parts.push(
      `${suggested ? `\n    <div id="suggested" role="group" aria-label="Suggested amounts" data-input="${INPUT.amount}">${suggested}</div>` : ''}${input(INPUT.amount, `Amount (${currency.toUpperCase()})`, 'inputmode="decimal" autocomplete="off"', true)}${bounds ? `\n    <p class="muted" id="bounds">${e(bounds)}</p>` : ''}`,
    );
  }
  if (link.nameCollection) parts.push(input(INPUT.name, 'Name', 'autocomplete="name" maxlength="250"', true));
  if (link.emailCollection)
    parts.push(input(INPUT.email, 'Email', 'type="email" autocomplete="email" maxlength="254"', true));
  if (link.phoneNumberCollection)
    parts.push(input(INPUT.phone, 'Phone', 'type="tel" autocomplete="tel" maxlength="40"', true));
  for (const kind of ['billing', 'shipping'] as const) {
    if (!(kind === 'billing' ? link.billingAddressCollection : link.shippingAddressCollection)) continue;
    const rows = ADDRESS_INPUTS.map(({ part, label, required, max, autocomplete }) =>
      input(
        INPUT.address(kind, part),
        label[0]!.toUpperCase() + label.slice(1),
        `autocomplete="${kind} ${autocomplete}" maxlength="${max}"`,
        required,
      ),
    );
    parts.push(`
    <fieldset><legend>${e(addressTitle(kind))}</legend>${rows.join('')}
    </fieldset>`);
  }
  for (const field of link.customFields.fields) parts.push(customFieldInput(field, state.form, problemOf));

  const problems =
    state.problems.length > 0 || state.message
      ? `  <div id="problems" role="alert"><p>${e(state.message ?? 'Please correct the following:')}</p>${state.problems.length ? `<ul>${state.problems.map((p) => `<li>${e(p.message)}</li>`).join('')}</ul>` : ''}</div>\n`
      : '';
  const main = `  <h1>${e(link.title)}</h1>
  ${link.image ? `<img class="product" src="${e(link.image)}" alt="">` : ''}
  ${link.description ? `<p class="muted" id="description">${e(link.description)}</p>` : ''}
  ${priceLine(link)}
${problems}  <form method="post" action="/pay/${e(link.id)}" novalidate>${link.pricing === 'variable' && link.suggestedAmounts.length > 0 ? DEFAULT_SUBMIT : ''}${parts.join('')}
    <button type="submit">${e(SUBMIT_WORDS[link.submitType])}${link.amount ? ` ${e(money(link.amount, link.currency))}` : ''}</button>
  </form>`;
  return shell(org, link.title, main, link.suggestedAmounts.length > 0, link.environment === 'test');
}

/** A label, its control, and the problem with the payer's input under it, if any. */
function labelled(
  name: string,
  label: string,
  required: boolean,
  problemOf: Map<string, string>,
  control: (id: string, invalid: string) => string,
): string {
  const id = `in-${name.replace(/[^A-Za-z0-9_-]/g, '-')}`;
  const wrong = problemOf.get(name);
  return `
    <label for="${e(id)}">${e(label)}${required ? '' : ' <span class="muted">(optional)</span>'}</label>
    ${control(id, wrong ? ` aria-invalid="true" aria-describedby="${e(id)}-error"` : '')}${
      wrong
        ? `
    <span class="error" id="${e(id)}-error">${e(wrong)}</span>`
        : ''
    }`;
}

function customFieldInput(field: CustomField, form: PayerForm, problemOf: Map<string, string>): string {
  const name = INPUT.custom(field.key);
  const value = form[name] ?? '';
  return labelled(name, field.label.custom, !field.optional, problemOf, (id, invalid) => {
    if (field.type === 'dropdown') {
      const options = field.dropdown.options
        .map((o) => `<option value="${e(o.value)}"${o.value === value ? ' selected' : ''}>${e(o.label)}</option>`)
        .join('');
      return `<select id="${e(id)}" name="${e(name)}"${invalid}><option value="">Choose…</option>${options}</select>`;
    }
    const max = field.type === 'text' ? field.text.maximumLength : null;
    const attributes = field.type === 'numeric' ? 'inputmode="decimal"' : max !== null ? `maxlength="${max}"` : '';
    return `<input id="${e(id)}" name="${e(name)}" value="${e(value)}" ${attributes}${invalid}>`;
  });
}
