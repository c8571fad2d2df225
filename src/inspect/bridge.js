// The inspector bridge page's script: relays what Weir sends over the page's own WebSocket into the
// embedded Stately inspector, addressed to the inspector's origin only.
const frame = document.getElementById('inspector');
const status = document.getElementById('socket');
const count = document.getElementById('count');
const target = new URL(frame.src).origin;
const waiting = [];
let connected = false;
let received = 0;

window.addEventListener('message', (event) => {
  if (event.origin !== target || event.data?.type !== '@statelyai.connected') return;
  connected = true;
  for (const message of waiting.splice(0)) frame.contentWindow.postMessage(message, target);
});

const socket = new WebSocket(`ws://${location.host}/`);
socket.addEventListener('open', () => {
  status.textContent = 'connected';
});
socket.addEventListener('close', () => {
  status.textContent = 'disconnected: reload when Weir runs again';
});
socket.addEventListener('message', (event) => {
  const message = JSON.parse(event.data);
  received += 1;
  count.textContent = String(received);
  if (connected) frame.contentWindow.postMessage(message, target);
  else waiting.push(message);
});
