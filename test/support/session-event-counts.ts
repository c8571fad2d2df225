import Database from 'better-sqlite3';

/**
 * Reads a SQLite event store file after a run: per checkout session, how many events of a type it
 * holds (sweeps that were reverted do not count), for the crash tests' "exactly once" checks.
 */
export function openSessionEventCounts(file: string) {
  const db = new Database(file, { readonly: true });
  return {
    perSession(type: string): Map<string, number> {
      const rows = db
        .prepare(
          `SELECT substr(stream_id, 18) AS id, count(*) AS n FROM events
           WHERE stream_id LIKE 'checkout_session-%' AND type = ?
             AND coalesce(json_extract(data, '$.sweep.reverted'), 0) = 0
           GROUP BY stream_id`,
        )
        .all(type) as { id: string; n: number }[];
      return new Map(rows.map((row) => [row.id, row.n]));
    },
    db,
  };
}
