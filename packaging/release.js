#!/usr/bin/env node
// What a release ships besides the archives, built from `cargo metadata`: the npm packages (the
// `acplb` launcher and one binary package per platform) and the ACP registry entry (agent.json).
//
//   node packaging/release.js npm METADATA.json TARGET-TRIPLE ACPLB-BINARY OUT-DIR
//       writes OUT-DIR/acplb-<version>.tgz and OUT-DIR/acplb-<os>-<cpu>-<version>.tgz
//   node packaging/release.js agent-json METADATA.json
//       prints agent.json
'use strict';

const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const launcher = require('./npm/acplb/bin/acplb.js');

const ROOT = path.resolve(__dirname, '..');

/** The targets a release builds: Rust triple, npm `os`/`cpu`, ACP registry platform. */
const TARGETS = [
  { triple: 'aarch64-apple-darwin', os: 'darwin', cpu: 'arm64', registry: 'darwin-aarch64' },
  { triple: 'x86_64-apple-darwin', os: 'darwin', cpu: 'x64', registry: 'darwin-x86_64' },
  { triple: 'aarch64-unknown-linux-gnu', os: 'linux', cpu: 'arm64', registry: 'linux-aarch64' },
  { triple: 'x86_64-unknown-linux-gnu', os: 'linux', cpu: 'x64', registry: 'linux-x86_64' },
];

/** The release's facts from `cargo metadata --no-deps` output: the `acplb` package's version,
 * description, licence and repository. */
function releaseInfo(metadata) {
  const pkg = metadata.packages.find((p) => p.name === 'acplb');
  if (!pkg) throw new Error('cargo metadata lists no `acplb` package');
  for (const field of ['version', 'description', 'license', 'repository']) {
    if (!pkg[field]) throw new Error(`the acplb package declares no \`${field}\` in Cargo.toml`);
  }
  return {
    version: pkg.version,
    description: pkg.description,
    license: pkg.license,
    repository: pkg.repository.replace(/\/+$/, ''),
  };
}

function target(triple) {
  const t = TARGETS.find((x) => x.triple === triple);
  if (!t) {
    throw new Error(`no release target \`${triple}\` (known: ${TARGETS.map((x) => x.triple).join(', ')})`);
  }
  return t;
}

function archiveName(info, triple) {
  return `acplb-${info.version}-${triple}.tar.gz`;
}

/** Where the release workflow publishes an archive: the tag `v<version>`'s release assets. */
function archiveUrl(info, triple) {
  return `${info.repository}/releases/download/v${info.version}/${archiveName(info, triple)}`;
}

function common(info) {
  return {
    version: info.version,
    license: info.license,
    repository: { type: 'git', url: `git+${info.repository}.git` },
    homepage: info.repository,
  };
}

/** package.json of the launcher: the `acplb` command, and every platform package as an optional
 * dependency of exactly this version (npm installs the one whose `os` and `cpu` match). */
function launcherManifest(info) {
  const optionalDependencies = {};
  for (const t of TARGETS) optionalDependencies[launcher.platformPackage(t.os, t.cpu)] = info.version;
  return {
    name: 'acplb',
    description: info.description,
    ...common(info),
    bin: { acplb: 'bin/acplb.js' },
    files: ['bin/acplb.js'],
    engines: { node: '>=16' },
    optionalDependencies,
  };
}

/** package.json of the package holding the binary for `triple`. */
function platformManifest(info, triple) {
  const t = target(triple);
  const manifest = {
    name: launcher.platformPackage(t.os, t.cpu),
    description: `The acplb binary for ${t.os}-${t.cpu}; install \`acplb\`, which runs it`,
    ...common(info),
    os: [t.os],
    cpu: [t.cpu],
    files: ['bin/acplb'],
  };
  // Built against glibc: npm leaves it out on musl systems, where it would not start.
  if (t.os === 'linux') manifest.libc = ['glibc'];
  return manifest;
}

/** The ACP registry entry for this version, in the registry's format (its agent.schema.json):
 * the archives of every target, and the npm launcher for npx. */
function agentJson(info) {
  const binary = {};
  for (const t of [...TARGETS].sort((a, b) => a.registry.localeCompare(b.registry))) {
    binary[t.registry] = { archive: archiveUrl(info, t.triple), cmd: './acplb' };
  }
  return {
    id: 'acplb',
    name: 'Codex (acplb)',
    version: info.version,
    description: info.description,
    repository: info.repository,
    license: info.license,
    distribution: {
      binary,
      npx: { package: `acplb@${info.version}` },
    },
  };
}

/** A package folder: its package.json, then `files` copied in (`[from, to, mode]`). */
function stage(dir, manifest, files) {
  fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const [from, to, mode] of files) {
    fs.copyFileSync(from, path.join(dir, to));
    fs.chmodSync(path.join(dir, to), mode);
  }
}

/** The files every package carries besides its own: the README and, when the repository has
 * one, the licence. */
function docs(readme) {
  const files = [[readme, 'README.md', 0o644]];
  const licence = path.join(ROOT, 'LICENSE');
  if (fs.existsSync(licence)) files.push([licence, 'LICENSE', 0o644]);
  return files;
}

function packNpm(info, triple, binary, outDir) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'acplb-npm-'));
  try {
    const t = target(triple);
    const launcherDir = path.join(work, 'acplb');
    stage(launcherDir, launcherManifest(info), [
      [path.join(__dirname, 'npm/acplb/bin/acplb.js'), 'bin/acplb.js', 0o755],
      ...docs(path.join(ROOT, 'README.md')),
    ]);
    const platformDir = path.join(work, 'platform');
    const platformReadme = path.join(work, 'PLATFORM-README.md');
    fs.writeFileSync(
      platformReadme,
      `# ${launcher.platformPackage(t.os, t.cpu)}\n\nThe acplb ${info.version} binary for ${t.os}-${t.cpu} ` +
        `(${t.triple}). Install the \`acplb\` package instead: it picks this one on this platform.\n`,
    );
    stage(platformDir, platformManifest(info, triple), [[binary, 'bin/acplb', 0o755], ...docs(platformReadme)]);
    fs.mkdirSync(outDir, { recursive: true });
    for (const dir of [launcherDir, platformDir]) {
      execFileSync('npm', ['pack', '--silent', '--pack-destination', path.resolve(outDir)], {
        cwd: dir,
        stdio: ['ignore', 'inherit', 'inherit'],
      });
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

function main(argv) {
  const [command, metadataFile, ...rest] = argv;
  const usage = 'usage: release.js npm METADATA TRIPLE BINARY OUT-DIR | release.js agent-json METADATA';
  if (!metadataFile) throw new Error(usage);
  const info = releaseInfo(JSON.parse(fs.readFileSync(metadataFile, 'utf8')));
  if (command === 'npm' && rest.length === 3) {
    packNpm(info, ...rest);
  } else if (command === 'agent-json' && rest.length === 0) {
    process.stdout.write(`${JSON.stringify(agentJson(info), null, 2)}\n`);
  } else {
    throw new Error(usage);
  }
}

if (require.main === module) {
  try {
    main(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`release.js: ${e.message}\n`);
    process.exit(1);
  }
}

module.exports = { TARGETS, releaseInfo, archiveName, launcherManifest, platformManifest, agentJson };
