import Database from 'better-sqlite3';
import * as oldC from './_old-checks.ts';
import * as newC from './_new-checks.ts';
const db = new Database('/tmp/bt/log100k/events.sqlite3', { readonly: true });
const rows = db.prepare("SELECT data FROM events WHERE type='CheckoutSessionCreated' LIMIT 3000").pluck().all() as string[];
const sessions = rows.map((r) => JSON.parse(r).session);
const variants: Record<string, (d: any, o: { freeze: boolean }) => any> = { old: oldC.copyReadDocument, new: newC.copyReadDocument };
for (let rep = 0; rep < 4; rep++) {
  for (const [name, copy] of Object.entries(variants)) {
    const c0 = process.cpuUsage();
    let n = 0;
    for (const s of sessions) {
      // created, then 4 updates built from the stored doc by spreading, as evolve does
      let stored = copy({ ...s, _id: s.id }, { freeze: true }); n++;
      for (let u = 0; u < 4; u++) {
        stored = copy({ ...stored, updatedAt: 'x' + u, paymentIntent: { ...stored.paymentIntent, updatedAt: 'y' }, payments: [...stored.payments, { transferId: 't' + u, amount: '1', asset: stored.addresses[0].asset }] }, { freeze: true }); n++;
      }
    }
    const c = process.cpuUsage(c0);
    console.log(rep, name, ((c.user + c.system) / 1000).toFixed(0), 'ms cpu for', n, 'puts');
  }
}
