import { copyReadDocument as oldCopy } from './_old-checks.ts';
import { copyReadDocument as newCopy } from '../src/read-store/read-store-checks.ts';
import { isDeepStrictEqual } from 'node:util';
let seed = 7; const r = (n: number) => { seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0; return (seed >>> 8) % n; };
const stored: object[] = [];
const rand = (d: number): unknown => {
  const k = r(14);
  if (k === 0 && stored.length) return stored[r(stored.length)];
  if (k === 1) return 'x' + r(5); if (k === 2) return r(100); if (k === 3) return null; if (k === 4) return undefined;
  if (k === 5) return [rand(d + 1), undefined, rand(d + 1)];
  if (k === 6 && r(20) === 0) return [1n, new Date(), NaN, () => 1, Symbol('s')][r(5)];
  if (k === 7 && d < 3) { const o: Record<string, unknown> = { a: rand(d + 1) }; Object.defineProperty(o, '__proto__', { value: rand(d+1), enumerable: true, configurable: true, writable: true }); return o; }
  if (d > 4) return true;
  const o: Record<string, unknown> = {}; for (let i = 0; i < r(4); i++) o['k' + i] = rand(d + 1); return o;
};
const deep = (n: number): unknown => { let v: unknown = { leaf: 1 }; for (let i = 0; i < n; i++) v = { v }; return v; };
let same = 0, errs = 0;
for (let i = 0; i < 20000; i++) {
  let doc: Record<string, unknown> & { _id: string } = { _id: 'd' + i, body: rand(0), more: rand(0) };
  if (i % 500 === 0) { const fr = newCopy({ _id: 'x', v: deep(60 + r(37)) }, { freeze: true }); doc = { _id: 'd' + i, wrap: deep(r(50)), inner: { f: fr['v'] } }; }
  let a: unknown, b: unknown, ea = '', eb = '';
  try { a = oldCopy(doc, { freeze: true }); } catch (e) { ea = String(e); }
  try { b = newCopy(doc, { freeze: true }); } catch (e) { eb = String(e); }
  if (ea !== eb) { console.log('ERR MISMATCH', ea, '|', eb); process.exit(1); }
  if (ea) { errs++; continue; }
  if (!isDeepStrictEqual(a, b) || JSON.stringify(a) !== JSON.stringify(b)) { console.log('VALUE MISMATCH', i); process.exit(1); }
  const frozenDeep = (v: unknown): boolean => typeof v !== 'object' || v === null || (Object.isFrozen(v) && Object.values(v).every(frozenDeep));
  if (!frozenDeep(b)) { console.log('not frozen'); process.exit(1); }
  same++;
  const bo = b as Record<string, unknown>;
  for (const v of Object.values(bo)) if (typeof v === 'object' && v !== null) stored.push(v);
  if (stored.length > 200) stored.splice(0, 100);
}
console.log({ same, errs });
