import Database from 'better-sqlite3';
for (const mode of ['default', 'mmap', 'cache', 'both', 'default']) {
  const db = new Database(process.argv[2]!, { readonly: true });
  if (mode === 'mmap' || mode === 'both') db.pragma('mmap_size = 1073741824');
  if (mode === 'cache' || mode === 'both') db.pragma('cache_size = -65536');
  const st = db.prepare('SELECT position, id, stream_id, revision, type, data, metadata FROM events WHERE position > ? ORDER BY position LIMIT ?').raw(true).safeIntegers(true);
  const res: number[] = [];
  for (let rep = 0; rep < 3; rep++) {
    const t = performance.now(); let after = 0n;
    for (;;) { const rows = st.all(after, 2000) as unknown[][]; if (!rows.length) break; after = rows[rows.length-1]![0] as bigint; }
    res.push(Math.round(performance.now() - t));
  }
  console.log(mode, res);
  db.close();
}
