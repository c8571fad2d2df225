import Database from 'better-sqlite3';
const db = new Database(process.argv[2]!, { readonly: true });
const st = db.prepare('SELECT position, id, stream_id, revision, type, data, metadata FROM events WHERE position > ? ORDER BY position LIMIT ?').raw(true).safeIntegers(true);
for (let rep = 0; rep < 3; rep++) {
  let t = performance.now(); let after = 0n; let n = 0; let bytes = 0; let dataBytes = 0;
  const rowsAll: unknown[][] = [];
  for (;;) { const rows = st.all(after, 2000) as unknown[][]; if (!rows.length) break; n += rows.length; after = rows[rows.length-1]![0] as bigint; for (const r of rows) { rowsAll.push(r); dataBytes += (r[5] as string).length; bytes += (r[6] as string).length; } }
  const tRows = performance.now() - t;
  t = performance.now();
  for (const r of rowsAll) { JSON.parse(r[5] as string); }
  const tData = performance.now() - t;
  t = performance.now();
  for (const r of rowsAll) { JSON.parse(r[6] as string); }
  const tMeta = performance.now() - t;
  console.log({ n, rowsMs: Math.round(tRows), dataParseMs: Math.round(tData), metaParseMs: Math.round(tMeta), dataMB: (dataBytes/1e6).toFixed(1), metaMB: (bytes/1e6).toFixed(1) });
}
