import type { InvoiceSettingSchema } from '../../../read-api/schema/invoice-setting.ts';
import type { z } from '../../../read-api/schema/fields.ts';
import { apiFor } from '../../api.ts';
import type { DashboardContext, DashboardDeps } from '../../context.ts';
import { redirectTo, sendHtml } from '../../http.ts';
import type { PageRoutes } from '../../page.ts';
import { Card, Field } from '../../ui/components.tsx';
import { type FormErrors, formErrorsOf, TextAreaField, textOf, valuesOf } from '../../ui/form-parts.tsx';
import { DoneAlert } from '../developers/forms.tsx';
import { SECTIONS, SettingsForm, SettingsLayout } from './frame.tsx';

export type InvoiceSetting = z.output<typeof InvoiceSettingSchema>;

const BASE = SECTIONS.invoices.path;
const API = '/api/v1/organization/invoice-setting';
const INPUTS = ['invoicePrefix', 'nextInvoiceSequence', 'description', 'footer'];

const valuesOfSetting = (s: InvoiceSetting): Record<string, string> => ({
  invoicePrefix: s.invoicePrefix,
  nextInvoiceSequence: String(s.nextInvoiceSequence),
  description: s.description ?? '',
  footer: s.footer ?? '',
});

/**
 * The form as the API's body, empty texts cleared. The next number only when changed (a number
 * when it is one, else as typed for the API to name): sent unchanged, it would set the sequence
 * back past invoices numbered since the page was shown.
 */
function bodyOf(form: URLSearchParams): Record<string, unknown> {
  const sequence = (form.get('nextInvoiceSequence') ?? '').trim();
  const changed = sequence !== form.get('shownSequence');
  return {
    invoicePrefix: (form.get('invoicePrefix') ?? '').trim(),
    ...(changed ? { nextInvoiceSequence: /^\d{1,15}$/.test(sequence) ? Number(sequence) : sequence } : {}),
    description: textOf(form, 'description'),
    footer: textOf(form, 'footer'),
  };
}

function InvoicingPage(props: { ctx: DashboardContext; values: Record<string, string>; errors: FormErrors }) {
  const { ctx, values: v, errors: e } = props;
  return (
    <SettingsLayout ctx={ctx} section="invoices" title="Invoice settings">
      <DoneAlert ctx={ctx} messages={{ saved: 'Invoice settings saved.' }} />
      <Card id="invoice-settings" class="narrow-card">
        <SettingsForm ctx={ctx} action={BASE} id="invoicing-form" errors={e}>
          <input type="hidden" name="shownSequence" value={v.shownSequence ?? v.nextInvoiceSequence} />
          <div class="form-row">
            <Field
              name="invoicePrefix"
              label="Number prefix"
              value={v.invoicePrefix}
              error={e.invoicePrefix}
              hint="Letters, digits and . _ / # -"
              required
            />
            <Field
              name="nextInvoiceSequence"
              label="Next number"
              value={v.nextInvoiceSequence}
              error={e.nextInvoiceSequence}
              hint="The sequence the next invoice takes."
              required
            />
          </div>
          <TextAreaField
            name="description"
            label="Default memo"
            value={v.description}
            error={e.description}
            hint="New invoices start with it."
          />
          <TextAreaField
            name="footer"
            label="Default footer"
            value={v.footer}
            error={e.footer}
            hint="Printed at the foot of new invoices."
          />
          <button type="submit" class="button-primary">
            Save invoice settings
          </button>
        </SettingsForm>
      </Card>
    </SettingsLayout>
  );
}

/** Invoice numbering and default texts through `/api/v1/organization/invoice-setting`. */
export function invoicingRoutes(routes: PageRoutes, deps: DashboardDeps): void {
  routes.get(BASE, 'read', async (ctx) => {
    const setting = (await apiFor(ctx, deps)<InvoiceSetting>('GET', API)).body;
    await sendHtml(ctx, <InvoicingPage ctx={ctx} values={valuesOfSetting(setting)} errors={{}} />);
  });

  routes.post(BASE, 'manage', async (ctx) => {
    const { form } = ctx.state;
    const answer = await apiFor(ctx, deps)('PUT', API, bodyOf(form));
    if (answer.status >= 400) {
      const errors = formErrorsOf(answer, (field) => (INPUTS.includes(field) ? field : undefined));
      return sendHtml(ctx, <InvoicingPage ctx={ctx} values={valuesOf(form)} errors={errors} />, answer.status);
    }
    redirectTo(ctx, `${BASE}?done=saved`);
  });
}
