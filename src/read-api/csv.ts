/** Characters that make a spreadsheet read a cell as a formula (with tab and carriage return, which some strip first). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV cell (RFC 4180): quoted when it holds a comma, a quote or a line break, quotes doubled.
 * A text that a spreadsheet would run as a formula is prefixed with `'` so it shows as text.
 */
export function csvCell(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (typeof value === 'string' && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV record, ended by CRLF as RFC 4180 has it. */
export const csvRow = (values: readonly (string | number | boolean | null | undefined)[]): string =>
  `${values.map(csvCell).join(',')}\r\n`;
