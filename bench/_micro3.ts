import Database from 'better-sqlite3';
const db = new Database('/tmp/bt/log100k/events.sqlite3', { readonly: true });
const rows = db.prepare("SELECT data FROM events WHERE type='CheckoutSessionCreated' LIMIT 3000").pluck().all() as string[];
const sessions = rows.map((r) => JSON.parse(r).session);
const s = { ...sessions[0], _id: 'x' };
const keys = Object.keys(s);
console.log(keys.length);
const time = (name: string, f: () => void) => { const t = process.cpuUsage(); for (let i = 0; i < 15000; i++) f(); const c = process.cpuUsage(t); console.log(name, ((c.user + c.system) / 1000).toFixed(1)); };
for (let rep = 0; rep < 3; rep++) {
  time('spread', () => { ({ ...s }); });
  time('keys+assign', () => { const o: any = {}; for (const k of Object.keys(s)) o[k] = s[k]; });
  time('keys+assign+freeze', () => { const o: any = {}; for (const k of Object.keys(s)) o[k] = s[k]; Object.freeze(o); });
  time('forin+assign', () => { const o: any = {}; for (const k in s) o[k] = s[k]; });
  time('spread+freeze', () => { Object.freeze({ ...s }); });
  time('assign+freeze', () => { Object.freeze(Object.assign({}, s)); });
}
