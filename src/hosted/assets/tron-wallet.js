// "Pay with TronLink" on the hosted checkout page: the injected provider (TIP-1193 `window.tron`,
// or `window.tronLink`) gives the account; its `tronWeb` builds the TRC-20 transfer(address,uint256)
// (or the TRX transfer) of what is left to pay, signs it and broadcasts it. What is left is read
// fresh from the page's status before paying, as the other wallet buttons do. "Pay with test wallet"
// (test sessions on the local Tron) asks Weir to pay the chosen local-Tron asset from a funded account.
(() => {
  const root = document.getElementById('tron-wallet-actions');
  if (!root) return;
  const base = `/checkout/${root.dataset.session}`;
  const message = root.querySelector('.tron-wallet-message');
  const button = root.querySelector('[data-tron-action="pay"]');
  const targets = new Map(
    [...root.querySelectorAll('.tron-targets [data-address]')].map((t) => [t.dataset.address, t.dataset]),
  );
  // A TRC-20 transfer burns at most this much TRX (in sun) for energy the payer lacks.
  const FEE_LIMIT = 100_000_000;

  /** A route's JSON answer or null, and the words when none came: hosted-fetch.js (loaded before this script). */
  const { answer, UNREACHABLE } = window.weirHosted;

  const say = (text) => {
    message.textContent = text;
  };
  const provider = () => window.tron ?? window.tronLink ?? null;

  async function account(wallet) {
    if (typeof wallet.request === 'function') {
      const method = wallet === window.tron ? 'eth_requestAccounts' : 'tron_requestAccounts';
      const declined = () =>
        Object.assign(new Error('declined'), {
          weirMessage: 'You declined the request in TronLink. Nothing was sent.',
        });
      // TIP-1193 rejects with code 4001; window.tronLink answers { code: 4001 } instead.
      const answer = await wallet.request({ method }).catch((error) => {
        throw error?.code === 4001 ? declined() : error;
      });
      if (answer && (answer.code === 4001 || answer.code === 4000)) throw declined();
    }
    const tronWeb = wallet.tronWeb ?? window.tronWeb;
    const from = tronWeb?.defaultAddress?.base58;
    if (!from)
      throw Object.assign(new Error('locked'), {
        weirMessage: 'Unlock TronLink and choose an account, then try again.',
      });
    return { tronWeb, from };
  }

  /** What is left to pay in the chosen asset and its target, read fresh from the session's status. */
  async function chosen() {
    const res = await answer(`${base}/status`, { cache: 'no-store' });
    if (!res?.ok) throw { weirMessage: res?.body?.message || UNREACHABLE };
    const due = res.body.wallet;
    return { due, target: due ? targets.get(due.addressId) : undefined };
  }

  /** Whether a TRX transfer tronWeb built moves exactly `amount` sun (its amount, a number or a string). */
  function carriesExactly(transaction, amount) {
    const value = transaction?.raw_data?.contract?.[0]?.parameter?.value;
    try {
      return value !== undefined && BigInt(value.amount) === amount;
    } catch {
      return false;
    }
  }
  /** `amount` sun as TRX (6 decimals), every digit kept. */
  const formatSun = (amount) => {
    const fraction = (amount % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
    return `${amount / 1_000_000n}${fraction ? `.${fraction}` : ''}`;
  };

  let paid = false;
  button.addEventListener('click', async () => {
    const wallet = provider();
    if (!wallet) {
      say('TronLink was not found in this browser. Scan the code with a Tron wallet app instead.');
      return;
    }
    button.disabled = true;
    try {
      const { due, target } = await chosen();
      if (!due || !target) {
        say('Choose a Tron asset first.');
        return;
      }
      const amount = BigInt(due.amountRemainingRaw);
      if (amount === 0n) {
        say('Nothing is left to pay: the payment sent is waiting for confirmation.');
        return;
      }
      say('Connecting to TronLink…');
      const { tronWeb, from } = await account(wallet);
      say(`Approve the payment of ${target.symbol} in TronLink…`);
      const transaction = target.token
        ? (
            await tronWeb.transactionBuilder.triggerSmartContract(
              target.token,
              'transfer(address,uint256)',
              { feeLimit: FEE_LIMIT },
              [
                { type: 'address', value: target.to },
                { type: 'uint256', value: amount.toString() },
              ],
              from,
            )
          ).transaction
        : await tronWeb.transactionBuilder.sendTrx(target.to, amount.toString(), from);
      // TronWeb's sendTrx takes the sun as a decimal string, yet may carry it as a JS number (tronweb 6
      // parses it with parseInt), exact only up to 2^53: a transfer not of the exact amount is not signed.
      if (!target.token && !carriesExactly(transaction, amount))
        throw Object.assign(new Error('inexact'), {
          weirMessage: `TronLink cannot send exactly ${formatSun(amount)} ${target.symbol}. Nothing was sent: scan the code with a Tron wallet app instead.`,
        });
      const signed = await tronWeb.trx.sign(transaction);
      const sent = await tronWeb.trx.sendRawTransaction(signed);
      if (!sent || sent.result !== true) throw new Error(sent?.message ?? sent?.code ?? 'the network refused it');
      paid = true;
      say('Payment sent: this page updates once the network confirms it.');
    } catch (error) {
      say(error?.weirMessage ?? `The payment was not sent: ${error?.message ?? String(error)}`);
    } finally {
      // Not again once sent: until the network shows it, the page still asks for the whole amount.
      button.disabled = paid;
    }
  });
  const testButton = root.querySelector('[data-tron-action="test"]');
  /** The test button shows while the chosen asset is one the test wallet pays (checkout.js's status poll says which). */
  const showTest = (status) => {
    const target = status?.wallet ? targets.get(status.wallet.addressId) : undefined;
    if (testButton) testButton.hidden = !(target && target.testWallet === 'true');
  };
  document.addEventListener('weir:status', (event) => showTest(event.detail));
  testButton?.addEventListener('click', async () => {
    testButton.disabled = true;
    try {
      const { due, target } = await chosen();
      if (!due || !target || target.testWallet !== 'true') {
        say('Choose a local Tron asset first.');
        return;
      }
      say('Sending the test payment…');
      const sent = await answer(`${base}/test-payment`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ assetId: due.addressId }),
      });
      say(
        !sent
          ? UNREACHABLE
          : sent.ok
            ? `Test payment sent: ${sent.body.transactionHash}. Waiting for the network to confirm it…`
            : (sent.body?.message ?? 'The test payment could not be sent.'),
      );
    } catch (error) {
      say(error?.weirMessage ?? `The test payment could not be sent: ${error?.message ?? String(error)}`);
    } finally {
      testButton.disabled = false;
    }
  });
  // Listening from here on (a test waits for it before clicking).
  root.dataset.ready = 'true';
})();
