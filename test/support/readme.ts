import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT, runToEnd } from './weir-process.ts';

/** The README's text, and its parts as the tests that follow it as written read them. */
export const README = await readFile(join(ROOT, 'README.md'), 'utf8');

/** One heading's section ("### First steps"), up to the next heading of level 2 or 3. */
export const readmeSection = (heading: string): string => {
  const start = README.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`README has no "${heading}" section`);
  const next = README.slice(start + heading.length + 2).search(/\n#{2,3} /);
  return README.slice(start, next < 0 ? undefined : start + heading.length + 2 + next);
};

/** A section's table rows that `isRow` picks, as trimmed cells: split at pipes not escaped (`\|` kept as `|`). */
export const tableRows = (section: string, isRow: (line: string) => boolean): string[][] =>
  section
    .split('\n')
    .filter(isRow)
    .map((line) => line.split(/(?<!\\)\|/).map((cell) => cell.trim().replaceAll('\\|', '|')));

/** The fenced blocks of one language in a section, in order. */
export const codeBlocks = (text: string, language: 'sh' | 'js'): string[] =>
  [...text.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1]!);

/**
 * A README shell block run by bash as written (`set -euo pipefail`), with `localhost:8080` pointing
 * at this run's port and each `fill` key (which the block must still hold) replaced once. The worker
 * goes on meanwhile: a server it started beside the block has its output read (a full pipe would block it).
 */
export async function runBlock(
  block: string,
  options: {
    port?: number;
    dataDir: string;
    fill?: Record<string, string>;
    env?: Record<string, string>;
    cwd?: string;
    /** Milliseconds the block may take (default 60 s). */
    timeout?: number;
  },
): Promise<string> {
  let script = options.port === undefined ? block : block.replaceAll('localhost:8080', `127.0.0.1:${options.port}`);
  for (const [from, to] of Object.entries(options.fill ?? {})) {
    if (!script.includes(from)) throw new Error(`the README block no longer has ${from}:\n${block}`);
    script = script.replace(from, to);
  }
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, ...options.env, WEIR_DATA_DIR: options.dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const result = await runToEnd(child, options.timeout ?? 60_000);
  if (result.status !== 0)
    throw new Error(`README block failed (${result.status}):\n${script}\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}
