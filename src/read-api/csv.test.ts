import test from 'ava';
import { csvCell, csvRow } from './csv.ts';

test('cells are quoted when they hold a comma, a quote or a line break', (t) => {
  t.is(csvCell('plain'), 'plain');
  t.is(csvCell('a,b'), '"a,b"');
  t.is(csvCell('say "hi"'), '"say ""hi"""');
  t.is(csvCell('two\nlines'), '"two\nlines"');
  t.is(csvCell('cr\rhere'), '"cr\rhere"');
  t.is(csvCell(null), '');
  t.is(csvCell(undefined), '');
  t.is(csvCell(42), '42');
  t.is(csvCell(false), 'false');
});

test('a text a spreadsheet would run as a formula is prefixed with a quote mark', (t) => {
  t.is(csvCell('=HYPERLINK("http://x")'), '"\'=HYPERLINK(""http://x"")"');
  t.is(csvCell('+1'), "'+1");
  t.is(csvCell('-1'), "'-1");
  t.is(csvCell('@SUM(A1)'), "'@SUM(A1)");
  t.is(csvCell('\tx'), "'\tx");
  t.is(csvCell('a=b'), 'a=b');
  // Numbers are written by Weir itself, never a formula.
  t.is(csvCell(-5), '-5');
});

test('a row joins its cells and ends with CRLF', (t) => {
  t.is(csvRow(['a', 'b,c', null, 1]), 'a,"b,c",,1\r\n');
});
