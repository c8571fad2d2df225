// "Pay with a Solana wallet" on the hosted checkout page, through the Wallet Standard: wallets
// register themselves on `wallet-standard:register-wallet`; the page announces itself with
// `wallet-standard:app-ready`. The transfer is built by Weir (POST /checkout/{id}/solana-transaction)
// for the connected account, then signed and sent by the wallet (`solana:signAndSendTransaction`).
(() => {
  const root = document.getElementById('solana-wallet-actions');
  if (!root) return;
  const base = `/checkout/${root.dataset.session}`;
  const solanaAssets = new Set(root.dataset.assets.split(' '));
  const message = root.querySelector('.solana-wallet-message');
  const button = root.querySelector('[data-solana-action="pay"]');
  const wallets = [];
  const api = {
    register(...registered) {
      wallets.push(...registered);
      return () => undefined;
    },
  };
  window.addEventListener('wallet-standard:register-wallet', (event) => event.detail(api));
  window.dispatchEvent(new CustomEvent('wallet-standard:app-ready', { detail: api }));

  const say = (text) => {
    message.textContent = text;
  };
  const usable = () =>
    wallets.filter((w) => w.features['standard:connect'] && w.features['solana:signAndSendTransaction']);
  const chosenAsset = () => {
    const chosen = document.querySelector('.asset[aria-pressed="true"]');
    if (chosen && solanaAssets.has(chosen.dataset.asset)) return chosen.dataset.asset;
    const first = [...document.querySelectorAll('.asset[data-asset]')].find((b) => solanaAssets.has(b.dataset.asset));
    return first ? first.dataset.asset : null;
  };
  /** A route's JSON answer or null, and the words when none came: hosted-fetch.js (loaded before this script). */
  const { answer, UNREACHABLE } = window.weirHosted;
  const base64ToBytes = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

  let paid = false;
  button.addEventListener('click', async () => {
    const wallet = usable()[0];
    if (!wallet) {
      say('No Solana wallet found in this browser. Scan the code with a wallet app instead.');
      return;
    }
    const assetId = chosenAsset();
    if (!assetId) {
      say('Choose a Solana asset first.');
      return;
    }
    button.disabled = true;
    try {
      say(`Connecting to ${wallet.name}…`);
      const { accounts } = await wallet.features['standard:connect'].connect();
      const account = accounts[0];
      if (!account) throw new Error('the wallet gave no account');
      const res = await answer(`${base}/solana-transaction`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ assetId, account: account.address }),
      });
      if (!res?.ok) throw new Error(res?.body?.message || UNREACHABLE);
      const body = res.body;
      say(`Approve the payment in ${wallet.name}…`);
      const [sent] = await wallet.features['solana:signAndSendTransaction'].signAndSendTransaction({
        account,
        chain: body.chain,
        transaction: base64ToBytes(body.transaction),
      });
      paid = true;
      say(sent ? 'Payment sent: this page updates once the network confirms it.' : 'Payment sent.');
    } catch (error) {
      say(`The payment was not sent: ${error && error.message ? error.message : String(error)}`);
    } finally {
      // Not again once sent: until the network shows it, the page still asks for the whole amount.
      button.disabled = paid;
    }
  });
  // Listening from here on (a test waits for it before clicking).
  root.dataset.ready = 'true';
})();
