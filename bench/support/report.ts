import { writeFile } from 'node:fs/promises';

/**
 * Print a benchmark's result: the JSON summary, the Markdown table and one line per target; and
 * write the JSON to `jsonOut` when asked.
 */
export async function report(
  summary: unknown,
  table: string,
  targetLines: string[],
  jsonOut: string | null,
): Promise<void> {
  const json = JSON.stringify(summary, null, 2);
  console.log(json);
  console.log('');
  console.log(table);
  console.log('');
  for (const line of targetLines) console.log(line);
  if (jsonOut) await writeFile(jsonOut, `${json}\n`);
}
