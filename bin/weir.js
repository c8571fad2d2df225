#!/usr/bin/env node
// Weir's command line. TypeScript sources run through tsx, so there is no build step.
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

// Weir's own tsconfig (its JSX runtime), wherever Weir is started from: tsx would look in the working directory.
register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
await import('../src/cli/main.ts');
