import Database from 'better-sqlite3';
import * as newC from './_new-checks.ts';
const db = new Database('/tmp/bt/log100k/events.sqlite3', { readonly: true });
const rows = db.prepare("SELECT data FROM events WHERE type='CheckoutSessionCreated' LIMIT 3000").pluck().all() as string[];
const sessions = rows.map((r) => JSON.parse(r).session);
const copy = newC.copyReadDocument as (d: any, o: { freeze: boolean }) => any;
const s = sessions[0];
const a = copy({ ...s, _id: s.id }, { freeze: true });
const b = copy({ ...a, updatedAt: 'x' }, { freeze: true });
console.log(a.lineItems === b.lineItems, a.addresses === b.addresses, a.amountDetails === b.amountDetails);
for (let rep = 0; rep < 5; rep++) {
  let t = process.cpuUsage();
  for (let i = 0; i < 15000; i++) copy({ ...a, updatedAt: 'x' }, { freeze: true });
  let c = process.cpuUsage(t); console.log('update-only', (c.user + c.system) / 1000);
  t = process.cpuUsage();
  for (let i = 0; i < 15000; i++) copy({ ...sessions[i % 3000], _id: 'a' }, { freeze: true });
  c = process.cpuUsage(t); console.log('fresh', (c.user + c.system) / 1000);
}
