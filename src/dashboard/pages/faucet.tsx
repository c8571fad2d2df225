import { apiFor } from '../api.ts';
import type { DashboardContext } from '../context.ts';
import { sendHtml } from '../http.ts';
import { definePage } from '../page.ts';
import { Alert, Card, CsrfField, Field } from '../ui/components.tsx';
import { AmountField, decimalAmount } from '../ui/form-parts.tsx';
import { AppLayout } from '../ui/layout.tsx';
import { errorsOf, type FormErrors } from './developers/forms.tsx';

const ASSETS = [
  { value: 'usdc', label: 'USDC (test)' },
  { value: 'usdt', label: 'USDT (test)' },
  { value: 'dai', label: 'DAI (test)' },
  { value: 'eth', label: 'ETH (gas)' },
  { value: 'trx', label: 'TRX (local Tron)' },
] as const;

type Form = { address: string; asset: string; amount: string; errors: FormErrors };
type Sent = { transactionHash: string; address: string; asset: string; amount: string; chainId: number };

function FaucetPage(props: { ctx: DashboardContext; available: boolean; form: Form; sent?: Sent }) {
  const { ctx, form, sent } = props;
  const test = ctx.state.tenant.environment === 'test';
  return (
    <AppLayout ctx={ctx} title="Faucet" screen="faucet">
      <p class="lede">
        Test tokens for a wallet on the local chain or the local Tron, to try a payment end to end. Test mode only.
      </p>
      {sent ? (
        <Alert tone="success">
          <span safe>{`Sent ${form.amount || '100'} ${sent.asset.toUpperCase()} to ${sent.address}.`}</span>{' '}
          <span>Transaction </span>
          <code class="break" safe>
            {sent.transactionHash}
          </code>
        </Alert>
      ) : (
        ''
      )}
      <Card title="Send test tokens" id="faucet-card">
        {!test ? (
          <Alert tone="info">The faucet gives test tokens only: switch to Test to use it.</Alert>
        ) : !props.available ? (
          <Alert tone="info">
            No faucet on this server: it runs without a local chain. Start Weir with its local chain
            (WEIR_LOCAL_CHAIN=on, the default) or with --devnet FILE to send test tokens.
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
        <form method="post" action="/dashboard/faucet" id="faucet-form">
          <CsrfField token={ctx.state.csrfToken} />
          <fieldset disabled={!test || !props.available} class="bare">
            <Field
              name="address"
              label="Wallet address"
              value={form.address}
              error={form.errors.address}
              hint="On the local chain, 0x and 40 hex digits; on the local Tron, a T… address."
              autocomplete="off"
              required
            />
            <div class="form-row">
              <div class="field">
                <label for="field-asset">Token</label>
                <select id="field-asset" name="asset">
                  {ASSETS.map((a) => (
                    <option value={a.value} selected={form.asset === a.value}>
                      {a.label}
                    </option>
                  ))}
                </select>
              </div>
              <AmountField
                name="amount"
                label="Amount"
                value={form.amount}
                error={form.errors.amount}
                hint="In tokens, up to 10000."
              />
            </div>
            <button type="submit" class="button-primary">
              Send tokens
            </button>
          </fieldset>
        </form>
      </Card>
    </AppLayout>
  );
}

/** Faucet (test mode only): `POST /api/v1/faucet` sends test tokens on the local chain or devnet. */
export const page = definePage({
  screen: 'faucet',
  routes(routes, deps) {
    // The faucet pays on the devnet network; without one the API refuses (faucet_unavailable).
    const available = () => deps.rail.networks('test').some((n) => n.network === 'devnet');
    const empty: Form = { address: '', asset: 'usdc', amount: '100', errors: {} };
    routes.get('/dashboard/faucet', 'developers', async (ctx) => {
      await sendHtml(ctx, <FaucetPage ctx={ctx} available={available()} form={empty} />);
    });
    routes.post('/dashboard/faucet', 'developers', async (ctx) => {
      const posted = ctx.state.form;
      const form: Form = {
        address: (posted.get('address') ?? '').trim(),
        asset: posted.get('asset') ?? 'usdc',
        amount: (posted.get('amount') ?? '').trim(),
        errors: {},
      };
      const parsed = form.amount === '' ? null : decimalAmount(form.amount);
      if (parsed && 'error' in parsed) {
        const errors = { amount: parsed.error };
        return sendHtml(ctx, <FaucetPage ctx={ctx} available={available()} form={{ ...form, errors }} />, 400);
      }
      const answer = await apiFor(ctx, deps)<Sent>('POST', '/api/v1/faucet', {
        address: form.address,
        asset: form.asset,
        ...(parsed ? { amount: parsed.amount } : {}),
      });
      if (answer.status >= 400) {
        const errors = errorsOf(answer, { address: 'address', amount: 'amount', asset: 'asset' });
        return sendHtml(
          ctx,
          <FaucetPage ctx={ctx} available={available()} form={{ ...form, errors }} />,
          answer.status,
        );
      }
      await sendHtml(ctx, <FaucetPage ctx={ctx} available={available()} form={form} sent={answer.body} />);
    });
  },
});
