import { Writable } from 'node:stream';
import test from 'ava';
import type { AuditProgress } from '../audit/audit-verify.ts';
import { progressStyle, verifyProgress } from './audit.ts';

/** A stream that keeps what is written to it, a terminal or not. */
function capture(isTTY: boolean) {
  let text = '';
  const stream = Object.assign(
    new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        text += String(chunk);
        done();
      },
    }),
    { isTTY, columns: 120 },
  );
  return { stream, text: () => text };
}

const steps: AuditProgress[] = [
  { phase: 'chain', events: 0, position: 0n, head: 4n },
  { phase: 'chain', events: 4, position: 4n, head: 4n },
  { phase: 'rebuild', events: 4, position: 4n, head: 4n },
  { phase: 'compare', collections: 1, of: 27 },
  { phase: 'compare', collections: 27, of: 27 },
];

test('bars only on a terminal: a log, a pipe or a file gets plain lines (no stream says it is a TTY unless it is one)', (t) => {
  t.is(progressStyle({ isTTY: true }), 'bars');
  t.is(progressStyle({ isTTY: false }), 'lines');
  t.is(progressStyle({}), 'lines');
});

test('off a terminal the verification writes one plain line per phase, with no bar, percentage or control character', (t) => {
  const { stream, text } = capture(false);
  const progress = verifyProgress(stream);
  for (const step of steps) progress.update(step);
  progress.stop();
  t.is(text(), 'audit verify: hash chain\naudit verify: rebuilding read models\naudit verify: comparing read models\n');
});

test('on a terminal the verification draws its bars', (t) => {
  const { stream, text } = capture(true);
  const progress = verifyProgress(stream);
  for (const step of steps) progress.update(step);
  progress.stop();
  t.regex(text(), /audit verify: hash chain \[=+\] 100%/);
  t.regex(text(), /comparing read models \[=+\] 100% \| 27 of 27 collections/);
});
