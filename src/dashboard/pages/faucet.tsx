import {
  FAUCET_DEFAULT_ASSET,
  FAUCET_START_HINT,
  noFaucetReason,
  localSolanaOffer,
  type LocalSolanaOffer,
} from '../../read-api/routes/faucet.ts';
import { apiFor } from '../api.ts';
import type { DashboardContext } from '../context.ts';
import { sendHtml } from '../http.ts';
import { definePage } from '../page.ts';
import { Alert, Card, CsrfField, Field } from '../ui/components.tsx';
import { AmountField, decimalAmount } from '../ui/form-parts.tsx';
import { AppLayout } from '../ui/layout.tsx';
import { errorsOf, type FormErrors } from './developers/forms.tsx';

/** The chains the faucet pays on, by the network each is offered as: WEIR_LOCAL_CHAIN may run either alone. */
const CHAINS = { evm: 'devnet', tron: 'tron-local' } as const;
type FaucetChain = keyof typeof CHAINS;
const NAMES = { evm: 'the local chain', tron: 'the local Tron' } as const;
const ADDRESS_FORMS = { evm: '0x and 40 hex digits', tron: 'a T… address' } as const;

const ASSETS = [
  { value: 'usdc', label: 'USDC (test)', on: ['evm', 'tron'] },
  { value: 'usdt', label: 'USDT (test)', on: ['evm', 'tron'] },
  { value: 'dai', label: 'DAI (test)', on: ['evm'] },
  { value: 'eth', label: 'ETH (gas)', on: ['evm'] },
  { value: 'trx', label: 'TRX (local Tron)', on: ['tron'] },
] as const satisfies readonly { value: string; label: string; on: readonly FaucetChain[] }[];

const capitalized = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
/** Neither chain runs: what this server lacks and what to start, worded as the API's faucet_unavailable answer words it. */
const noFaucet = (localSolana: LocalSolanaOffer) =>
  `No faucet on this server: ${noFaucetReason(localSolana)}. ${capitalized(FAUCET_START_HINT)} to send test tokens.`;

/**
 * The token the form starts on: the API's default for the one chain that runs; with both, none (''),
 * an option that sends no asset, so the API picks its default by the address's chain.
 */
const defaultAsset = (running: readonly FaucetChain[]): string =>
  running.length === 1 ? FAUCET_DEFAULT_ASSET[running[0]!] : '';
/** The option of '' with both chains running: what the API then sends. */
const BY_ADDRESS = `Default (${FAUCET_DEFAULT_ASSET.evm.toUpperCase()}; ${FAUCET_DEFAULT_ASSET.tron.toUpperCase()} on Tron)`;

type Form = { address: string; asset: string; amount: string; errors: FormErrors };
type Sent = { transactionHash: string; address: string; asset: string; amount: string; chainId: number };

type Running = { chains: readonly FaucetChain[]; localSolana: LocalSolanaOffer };

function FaucetPage(props: { ctx: DashboardContext; running: Running; form: Form; sent?: Sent }) {
  const { ctx, form, sent } = props;
  const running = props.running.chains;
  const test = ctx.state.tenant.environment === 'test';
  const available = running.length > 0;
  // Only what runs is named and offered; with neither, the form shows every token, switched off.
  const shown = available ? running : (Object.keys(CHAINS) as FaucetChain[]);
  const offered = ASSETS.filter((a) => a.on.some((chain) => shown.includes(chain)));
  const where = shown.map((chain) => NAMES[chain]).join(' or ');
  const hint = shown.map((chain) => `on ${NAMES[chain]}, ${ADDRESS_FORMS[chain]}`).join('; ');
  return (
    <AppLayout ctx={ctx} title="Faucet" screen="faucet">
      <p class="lede" safe>
        {`Test tokens for a wallet on ${where}, to try a payment end to end. Test mode only.`}
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
        ) : !available ? (
          <Alert tone="info">
            <span safe>{noFaucet(props.running.localSolana)}</span>
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
          <fieldset disabled={!test || !available} class="bare">
            <Field
              name="address"
              label="Wallet address"
              value={form.address}
              error={form.errors.address}
              hint={`${capitalized(hint)}.`}
              autocomplete="off"
              required
            />
            <div class="form-row">
              <div class="field">
                <label for="field-asset">Token</label>
                <select id="field-asset" name="asset">
                  {running.length > 1 ? (
                    <option value="" selected={form.asset === ''} safe>
                      {BY_ADDRESS}
                    </option>
                  ) : (
                    ''
                  )}
                  {offered.map((a) => (
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
    // The faucet pays on the devnet and the local Tron networks; without either the API refuses (faucet_unavailable).
    const running = (): Running => {
      const networks = new Set(deps.rail.networks('test').map((n) => n.network));
      const chains = (Object.keys(CHAINS) as FaucetChain[]).filter((chain) => networks.has(CHAINS[chain]));
      return { chains, localSolana: localSolanaOffer(deps.rail) };
    };
    routes.get('/dashboard/faucet', 'developers', async (ctx) => {
      const shown = running();
      const empty: Form = { address: '', asset: defaultAsset(shown.chains), amount: '100', errors: {} };
      await sendHtml(ctx, <FaucetPage ctx={ctx} running={shown} form={empty} />);
    });
    routes.post('/dashboard/faucet', 'developers', async (ctx) => {
      const posted = ctx.state.form;
      const form: Form = {
        address: (posted.get('address') ?? '').trim(),
        asset: posted.get('asset') ?? '',
        amount: (posted.get('amount') ?? '').trim(),
        errors: {},
      };
      const parsed = form.amount === '' ? null : decimalAmount(form.amount);
      if (parsed && 'error' in parsed) {
        const errors = { amount: parsed.error };
        return sendHtml(ctx, <FaucetPage ctx={ctx} running={running()} form={{ ...form, errors }} />, 400);
      }
      const answer = await apiFor(ctx, deps)<Sent>('POST', '/api/v1/faucet', {
        address: form.address,
        // None chosen: the API's default for the address's chain.
        ...(form.asset ? { asset: form.asset } : {}),
        ...(parsed ? { amount: parsed.amount } : {}),
      });
      if (answer.status >= 400) {
        const errors = errorsOf(answer, { address: 'address', amount: 'amount', asset: 'asset' });
        return sendHtml(ctx, <FaucetPage ctx={ctx} running={running()} form={{ ...form, errors }} />, answer.status);
      }
      await sendHtml(ctx, <FaucetPage ctx={ctx} running={running()} form={form} sent={answer.body} />);
    });
  },
});
