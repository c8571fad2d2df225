import { inflateSync } from 'node:zlib';

/**
 * The text PDFKit drew in a PDF, one string per text-showing operator, in drawing order: its
 * content streams inflated where compressed, the hex strings of each `TJ`/`Tj` decoded (Latin-1,
 * which is what WinAnsi is for the characters Weir's PDFs use). Enough to assert on, not a parser.
 */
export function pdfText(pdf: Buffer): string[] {
  const source = pdf.toString('latin1');
  const texts: string[] = [];
  const streams = /<<([\s\S]*?)>>\s*stream\r?\n/g;
  for (let match = streams.exec(source); match; match = streams.exec(source)) {
    const start = match.index + match[0].length;
    const end = source.indexOf('endstream', start);
    if (end < 0) break;
    let body = pdf.subarray(start, end);
    if (/FlateDecode/.test(match[1]!)) {
      try {
        body = inflateSync(body);
      } catch {
        continue;
      }
    }
    const content = body.toString('latin1');
    for (const shown of content.matchAll(/\[([^\]]*)\]\s*TJ|<([0-9a-fA-F]*)>\s*Tj/g)) {
      const hexes =
        shown[1] !== undefined ? [...shown[1].matchAll(/<([0-9a-fA-F]*)>/g)].map((h) => h[1]!) : [shown[2]!];
      texts.push(hexes.map((hex) => Buffer.from(hex, 'hex').toString('latin1')).join(''));
    }
    streams.lastIndex = end;
  }
  return texts;
}
