// `node --import` this file: every module the process then loads (file URLs, in load order) is
// appended to the file named by WEIR_LOADED_MODULES, one per line, as it loads.
import { register } from 'node:module';

register(new URL('./loaded-modules-hooks.mjs', import.meta.url), { data: process.env.WEIR_LOADED_MODULES });
