import { inflateSync } from 'node:zlib';

/** WinAnsi's bytes 0x80–0x9F, where it differs from Latin-1 (a space where it has no character). */
const WIN_ANSI_80 = '€ ‚ƒ„…†‡ˆ‰Š‹Œ Ž  ‘’“”•–—˜™š›œ žŸ';
const winAnsi = (bytes: Buffer): string =>
  Array.from(bytes, (b) => (b >= 0x80 && b <= 0x9f ? WIN_ANSI_80[b - 0x80]! : String.fromCharCode(b))).join('');

/**
 * The text PDFKit drew in a PDF, one string per text-showing operator, in drawing order: its
 * content streams inflated where compressed, the hex strings of each `TJ`/`Tj` decoded as WinAnsi
 * (the standard fonts' encoding). Enough to assert on, not a parser.
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
      texts.push(hexes.map((hex) => winAnsi(Buffer.from(hex, 'hex'))).join(''));
    }
    streams.lastIndex = end;
  }
  return texts;
}
