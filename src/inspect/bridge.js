// The inspector bridge page's script: relays what Weir sends over the page's own WebSocket into the
// embedded Stately inspector, addressed to the inspector's origin only.
const frame = document.getElementById('inspector');
const status = document.getElementById('socket');
const count = document.getElementById('count');
const target = new URL(frame.src).origin;
// The address Weir printed carries the socket's token in its fragment, which reaches no server's log.
const token = new URLSearchParams(location.hash.slice(1)).get('token') ?? '';
// What the inspector is sent once it answers: the last WAITING_MAX messages, and the latest chart of
// each record still shown (at most ROWS_MAX: a chart is some 10 KB, and an offline page may stay open for days).
const WAITING_MAX = 2000;
const ROWS_MAX = 1000;
const waiting = [];
/** Each shown record's latest actor message (its chart), by session id: the one in `waiting` kept past the cap. */
const charts = new Map();
let connected = false;
let received = 0;

// Until the inspector answers (it may never: stately.ai unreachable), a row per record shows its state.
const states = document.getElementById('states');
const rows = new Map();

/** A state value as a path: `{ open: 'awaitingPayment' }` reads open.awaitingPayment. */
function statePath(value) {
  if (value === null || typeof value !== 'object') return String(value);
  return Object.entries(value)
    .map(([key, inner]) => `${key}.${statePath(inner)}`)
    .join(', ');
}

/** A definition's machine id: the chart's root (the actor's name is its record). */
function machineOf(definition) {
  try {
    const id = JSON.parse(definition).id;
    return typeof id === 'string' ? id : '';
  } catch {
    return '';
  }
}

// Every value shown comes from Weir's records (ids, event types): each goes in as text, never as HTML.
function show(message) {
  if (typeof message.sessionId !== 'string') return;
  let row = rows.get(message.sessionId);
  if (!row) {
    row = states.querySelector('tbody').insertRow(0);
    for (let i = 0; i < 4; i += 1) row.insertCell();
    row.cells[0].textContent = message.sessionId;
    rows.set(message.sessionId, row);
    // The newest first; past a thousand records the oldest row goes, and its chart with it.
    const oldest = rows.size > ROWS_MAX ? rows.keys().next().value : undefined;
    if (oldest !== undefined) {
      rows.get(oldest).remove();
      rows.delete(oldest);
      unchart(oldest);
    }
  }
  if (message.type === '@xstate.actor') {
    // Weir names an actor by its record: `cs_… (org/environment) for invoice inv_…`.
    if (typeof message.name === 'string') row.cells[0].textContent = message.name;
    if (typeof message.definition === 'string') row.cells[1].textContent = machineOf(message.definition);
  }
  if (message.snapshot && 'value' in message.snapshot) row.cells[2].textContent = statePath(message.snapshot.value);
  if (message.type === '@xstate.event' && typeof message.event?.type === 'string')
    row.cells[3].textContent = message.event.type;
}

window.addEventListener('message', (event) => {
  if (event.origin !== target || event.data?.type !== '@statelyai.connected') return;
  connected = true;
  states.hidden = true;
  for (const message of waiting.splice(0)) frame.contentWindow.postMessage(message, target);
});

/** Drops the chart kept for `sessionId`: its row is gone. */
function unchart(sessionId) {
  const index = waiting.indexOf(charts.get(sessionId));
  if (index >= 0) waiting.splice(index, 1);
  charts.delete(sessionId);
}

/**
 * Keeps `message` for the inspector; past WAITING_MAX, the oldest that is no shown record's chart goes
 * (offline, it never answers). A record's new chart takes its last one's place, ahead of its events.
 */
function wait(message) {
  const charted = message.type === '@xstate.actor' && rows.has(message.sessionId);
  const last = charted ? waiting.indexOf(charts.get(message.sessionId)) : -1;
  if (charted) charts.set(message.sessionId, message);
  if (last >= 0) {
    waiting[last] = message;
    return;
  }
  waiting.push(message);
  if (waiting.length <= WAITING_MAX) return;
  const oldest = waiting.findIndex((m) => charts.get(m.sessionId) !== m);
  if (oldest >= 0) waiting.splice(oldest, 1);
}

// Once connected, the page reconnects by itself when Weir restarts (its token is kept across restarts).
// Refused REFUSALS times running (a new token: its file deleted or rewritten), it says so, trying slowly.
const RETRY_MS = 2000;
const REFUSALS = 3;
const SLOW_RETRY_MS = 10000;
let opened = false;
let refusals = 0;

/** Why a socket never opened: a browser's socket is not told, so a wrong token or no Weir running. */
function refusal() {
  if (!token) return 'refused: open the address Weir printed, with #token= in it';
  return 'refused: not the token Weir asks for (the one in its data dir’s inspector-token file), or Weir is not running';
}

function connect() {
  const socket = new WebSocket(`ws://${location.host}/?token=${encodeURIComponent(token)}`);
  let open = false;
  socket.addEventListener('open', () => {
    opened = true;
    open = true;
    refusals = 0;
    status.textContent = 'connected';
  });
  socket.addEventListener('close', () => {
    if (!opened) {
      status.textContent = refusal();
      return;
    }
    if (!open) refusals += 1;
    if (refusals < REFUSALS) {
      status.textContent = 'disconnected: connecting again once Weir runs';
      setTimeout(connect, RETRY_MS);
    } else {
      status.textContent = `${refusal()}; trying again every ${SLOW_RETRY_MS / 1000} s`;
      setTimeout(connect, SLOW_RETRY_MS);
    }
  });
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(event.data);
    received += 1;
    count.textContent = received === 1 ? '1 message' : `${received} messages`;
    if (connected) frame.contentWindow.postMessage(message, target);
    else {
      show(message);
      wait(message);
    }
  });
}

connect();
