// The conformance suite's build imports fs.globSync, which Node 22 added;
// the Node that tools/setup.sh finds may be 20 (Debian 12 machines). On such
// a Node this hook hands the suite's own 'fs' imports a module with all of
// node:fs plus a globSync that says it is missing (the suite calls it only
// in its tier-check command, which the tests do not run). On Node 22 and
// later it does nothing.
import * as fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') {
  register('data:text/javascript,' + encodeURIComponent(`
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') &&
      context.parentURL && context.parentURL.includes('/conformance/dist/')) {
    return { url: 'garuda-fs-compat:fs', shortCircuit: true };
  }
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (url === 'garuda-fs-compat:fs') {
    return { format: 'module', shortCircuit: true, source:
      "import * as fs from 'node:fs'; export * from 'node:fs';" +
      "export default fs; export function globSync() {" +
      " throw new Error('fs.globSync needs Node 22 or later'); }" };
  }
  return next(url, context);
}`));
}
