// `npm test` runs the suite from the compiled tree (test/support/compiled-tree.ts says why);
// `npx ava FILE` runs the TypeScript through tsx (package.json's "ava").
export default {
  files: ['.weir-compiled/tree/{src,machines,test,weir-client}/**/*.test.js'],
  timeout: '120s',
  workerThreads: false,
};
