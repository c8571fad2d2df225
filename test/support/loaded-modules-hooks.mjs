// Module hooks of loaded-modules.mjs: they run on the loader's own thread, so they write the file themselves.
import { appendFileSync } from 'node:fs';

let out = '';

export function initialize(file) {
  out = file;
}

export async function load(url, context, nextLoad) {
  if (out && url.startsWith('file:')) appendFileSync(out, `${url}\n`);
  return nextLoad(url, context);
}
