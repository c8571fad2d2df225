// The inspector bridge page's script: relays what Weir sends over the page's own WebSocket into the
// embedded Stately inspector, addressed to the inspector's origin only.
const frame = document.getElementById('inspector');
const status = document.getElementById('socket');
const count = document.getElementById('count');
const target = new URL(frame.src).origin;
// The address Weir printed carries the socket's token in its fragment, which reaches no server's log.
const token = new URLSearchParams(location.hash.slice(1)).get('token') ?? '';
const waiting = [];
let connected = false;
let received = 0;

window.addEventListener('message', (event) => {
  if (event.origin !== target || event.data?.type !== '@statelyai.connected') return;
  connected = true;
  for (const message of waiting.splice(0)) frame.contentWindow.postMessage(message, target);
});

// Once connected, the page reconnects by itself when Weir restarts (its token is kept across restarts).
const RETRY_MS = 2000;
let opened = false;

function connect() {
  const socket = new WebSocket(`ws://${location.host}/?token=${encodeURIComponent(token)}`);
  socket.addEventListener('open', () => {
    opened = true;
    status.textContent = 'connected';
  });
  // A browser's socket is not told why it was refused: one never open had a wrong token or found no Weir.
  socket.addEventListener('close', () => {
    if (opened) {
      status.textContent = 'disconnected: connecting again once Weir runs';
      setTimeout(connect, RETRY_MS);
    } else if (token)
      status.textContent =
        'refused: not the token Weir asks for (the admin token, else the one in its data dir’s inspector-token file), or Weir is not running';
    else status.textContent = 'refused: open the address Weir printed, with #token= in it';
  });
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(event.data);
    received += 1;
    count.textContent = String(received);
    if (connected) frame.contentWindow.postMessage(message, target);
    else waiting.push(message);
  });
}

connect();
