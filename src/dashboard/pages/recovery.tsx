import type { RecoveryOutcome } from '../../chain-ingest/evm/recover-transaction.ts';
import type { RailNetwork } from '../../chain-ingest/rail.ts';
import { apiFor } from '../api.ts';
import type { DashboardContext } from '../context.ts';
import { sendHtml } from '../http.ts';
import { definePage } from '../page.ts';
import { Alert, Card, CsrfField, Facts, Field } from '../ui/components.tsx';
import { AppLayout } from '../ui/layout.tsx';
import { HASH_FORMATS } from '../ui/form-parts.tsx';
import { apiMessage, errorsOf, type FormErrors } from './developers/forms.tsx';

/** The spec's recovery outcomes in its words (Weir adds late payment), keyed by the API's outcome. */
const OUTCOMES: Record<
  RecoveryOutcome,
  { title: string; meaning: string; advice: string; tone: 'success' | 'info' | 'danger' }
> = {
  partial: {
    title: 'Partial Payment',
    meaning: 'The session is incomplete.',
    advice: 'The payer completes the remaining amount.',
    tone: 'info',
  },
  complete: {
    title: 'Complete Payment',
    meaning: 'The session is already completed.',
    advice: 'Credit the user manually (fulfil the order) if you have not yet.',
    tone: 'success',
  },
  in_process: {
    title: 'In Process',
    meaning: 'The transaction is detected and being processed.',
    advice: 'Wait for network confirmation.',
    tone: 'info',
  },
  late_payment: {
    title: 'Late Payment',
    meaning: 'The session had already expired or been canceled: the funds are recorded as a late payment.',
    advice: 'Fulfil the order by hand or return the funds to the payer.',
    tone: 'info',
  },
  wrong_token_or_network: {
    title: 'Wrong Token / Network',
    meaning: 'The funds were sent to an incorrect token address or network.',
    advice: 'Contact support.',
    tone: 'danger',
  },
  wrong_claim: {
    title: 'Wrong Claim',
    meaning: 'The receiver address matches no session of the organization.',
    advice: 'Use the correct payment link.',
    tone: 'danger',
  },
};

type Form = { chainId: string; transactionHash: string; errors: FormErrors };
type Result = { outcome: RecoveryOutcome; message: string; sessionId?: string };

const isOutcome = (value: unknown): value is RecoveryOutcome =>
  typeof value === 'string' && Object.hasOwn(OUTCOMES, value);

function OutcomeCard({ result }: { result: Result }): JSX.Element {
  const o = OUTCOMES[result.outcome];
  const { sessionId } = result;
  return (
    <Card title={`Outcome: ${o.title}`} id="recovery-outcome" class={`outcome outcome-${o.tone}`}>
      <Facts
        items={[
          ['Meaning', o.meaning],
          ['Advice', o.advice],
          ['Details', result.message],
          sessionId ? ['Checkout session', () => <code safe>{sessionId}</code>] : null,
        ]}
      />
    </Card>
  );
}

function RecoveryPage(props: { ctx: DashboardContext; networks: RailNetwork[]; form: Form; result?: Result }) {
  const { ctx, networks, form } = props;
  const networkError = form.errors.chainId;
  return (
    <AppLayout ctx={ctx} title="Recovery" screen="recovery">
      <p class="lede">
        A payment was sent but its checkout session does not show it? Give the network and the transaction hash (a
        Solana signature): Weir looks the transaction up and credits what it finds to the session it paid.
      </p>
      {props.result ? <OutcomeCard result={props.result} /> : ''}
      <Card title="Look up a transaction" id="recovery-form-card">
        {networks.length === 0 ? (
          <Alert tone="info">
            <span
              safe
            >{`This Weir follows no network in ${ctx.state.tenant.environment} mode, so there is no transaction to look up.`}</span>
          </Alert>
        ) : (
          ''
        )}
        {form.errors.form ? (
          <Alert tone="danger">
            <span safe>{form.errors.form}</span>
          </Alert>
        ) : (
          ''
        )}
        <form method="post" action="/dashboard/recovery" id="recovery-form">
          <CsrfField token={ctx.state.csrfToken} />
          <div class={['field', networkError ? 'has-error' : '']}>
            <label for="field-chainId">Network</label>
            <select
              id="field-chainId"
              name="chainId"
              required
              aria-invalid={networkError ? 'true' : undefined}
              aria-describedby={networkError ? 'field-chainId-error' : undefined}
            >
              {networks.map((n) => (
                <option value={String(n.chainId)} selected={form.chainId === String(n.chainId)} safe>
                  {`${n.name} (chain ${n.chainId})`}
                </option>
              ))}
            </select>
            {networkError ? (
              <p class="error" id="field-chainId-error" safe>
                {networkError}
              </p>
            ) : (
              ''
            )}
          </div>
          <Field
            name="transactionHash"
            label="Transaction hash"
            value={form.transactionHash}
            error={form.errors.transactionHash}
            hint={`As the payer's wallet or the explorer shows it: ${HASH_FORMATS}.`}
            required
          />
          <button type="submit" class="button-primary" disabled={networks.length === 0}>
            Check transaction
          </button>
        </form>
      </Card>
    </AppLayout>
  );
}

/**
 * Recovery tool: network and transaction hash → one of the spec's outcomes, with its advice, by
 * `POST /api/v1/checkout/sessions/auto-recover-by-transaction-hash` (which credits what it finds).
 */
export const page = definePage({
  screen: 'recovery',
  routes(routes, deps) {
    const networksOf = (ctx: DashboardContext) => deps.rail.networks(ctx.state.tenant.environment);
    routes.get('/dashboard/recovery', 'manage', async (ctx) => {
      await sendHtml(
        ctx,
        <RecoveryPage ctx={ctx} networks={networksOf(ctx)} form={{ chainId: '', transactionHash: '', errors: {} }} />,
      );
    });
    routes.post('/dashboard/recovery', 'manage', async (ctx) => {
      const posted = ctx.state.form;
      const form: Form = {
        chainId: posted.get('chainId') ?? '',
        transactionHash: (posted.get('transactionHash') ?? '').trim(),
        errors: {},
      };
      const chainId = /^\d{1,15}$/.test(form.chainId) ? Number(form.chainId) : form.chainId;
      const answer = await apiFor(ctx, deps)<{ id: string; recovery: { outcome: string; message: string } }>(
        'POST',
        '/api/v1/checkout/sessions/auto-recover-by-transaction-hash',
        { chainId, transactionHash: form.transactionHash },
      );
      const networks = networksOf(ctx);
      const code = (answer.body as { code?: unknown }).code;
      // Outcomes that credit nothing come as 404/422 with the outcome as their code: still an outcome.
      if (answer.status >= 400 && isOutcome(code)) {
        const result = { outcome: code, message: apiMessage(answer) };
        return sendHtml(ctx, <RecoveryPage ctx={ctx} networks={networks} form={form} result={result} />);
      }
      if (answer.status >= 400) {
        const errors = errorsOf(answer, { chainId: 'chainId', transactionHash: 'transactionHash' });
        return sendHtml(ctx, <RecoveryPage ctx={ctx} networks={networks} form={{ ...form, errors }} />, answer.status);
      }
      const { outcome, message } = answer.body.recovery;
      const result = isOutcome(outcome) ? { outcome, message, sessionId: answer.body.id } : undefined;
      await sendHtml(ctx, <RecoveryPage ctx={ctx} networks={networks} form={form} result={result} />);
    });
  },
});
