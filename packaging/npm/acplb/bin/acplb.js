#!/usr/bin/env node
// The `acplb` command of the npm package: runs the prebuilt acplb binary from the platform
// package npm installed for this OS and CPU (an optional dependency; npm skips the others).
'use strict';

const { spawn } = require('child_process');
const fs = require('fs');
const path = require('path');

/** `<process.platform>-<process.arch>` → the npm package holding acplb for it. */
const PLATFORM_PACKAGES = {
  'darwin-arm64': 'acplb-darwin-arm64',
  'darwin-x64': 'acplb-darwin-x64',
  'linux-arm64': 'acplb-linux-arm64',
  'linux-x64': 'acplb-linux-x64',
};

/** The platform package for this OS and CPU, or null when acplb ships no binary for them. */
function platformPackage(platform, arch) {
  return PLATFORM_PACKAGES[`${platform}-${arch}`] || null;
}

/** Where the binary is, or an Error saying why there is none. */
function findBinary(platform, arch, resolve) {
  const pkg = platformPackage(platform, arch);
  if (!pkg) {
    return new Error(
      `no prebuilt acplb for ${platform}-${arch} (there are: ${Object.keys(PLATFORM_PACKAGES).join(', ')}); ` +
        'build it with `cargo install --locked acplb`',
    );
  }
  let manifest;
  try {
    manifest = resolve(`${pkg}/package.json`);
  } catch (e) {
    return new Error(
      `the package ${pkg}, which holds acplb for ${platform}-${arch}, is not installed: ` +
        'install acplb again without --omit=optional (or --no-optional)',
    );
  }
  const binary = path.join(path.dirname(manifest), 'bin', 'acplb');
  if (!fs.existsSync(binary)) {
    return new Error(`${pkg} is installed but has no ${binary}: install acplb again`);
  }
  return binary;
}

/** Runs acplb with this command's arguments and stdio; passes on the signals that stop it and
 * ends as it ended (same exit code, or the same signal). */
function run(binary) {
  const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit' });
  const forward = (signal) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, forward);
  child.on('error', (e) => {
    process.stderr.write(`acplb: cannot start ${binary}: ${e.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code === null ? 1 : code);
  });
}

if (require.main === module) {
  const found = findBinary(process.platform, process.arch, require.resolve);
  if (found instanceof Error) {
    process.stderr.write(`acplb: ${found.message}\n`);
    process.exit(1);
  }
  run(found);
}

module.exports = { PLATFORM_PACKAGES, platformPackage, findBinary };
