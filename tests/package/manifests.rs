//! The npm package manifests and the ACP registry entry that `packaging/release.js` writes.

use serde_json::{Value, json};

use super::{eval_json, js_path, node, packaging};

/// `cargo metadata --no-deps` output as `release.js` reads it: the `acplb` package among others.
fn metadata(version: &str, repository: Option<&str>) -> Value {
    json!({
        "packages": [
            {"name": "acplb-core", "version": "0.0.1"},
            {
                "name": "acplb",
                "version": version,
                "description": env!("CARGO_PKG_DESCRIPTION"),
                "license": env!("CARGO_PKG_LICENSE"),
                "repository": repository,
            }
        ],
        "target_directory": "/nowhere",
    })
}

/// `release.js agent-json` on this metadata: its exit status, stdout and stderr.
fn agent_json(metadata: &Value) -> (bool, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("metadata.json");
    std::fs::write(&file, metadata.to_string()).unwrap();
    let out = node([
        packaging().join("release.js").as_os_str(),
        "agent-json".as_ref(),
        file.as_os_str(),
    ]);
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

const REGISTRY_PLATFORMS: [&str; 6] = [
    "darwin-aarch64",
    "darwin-x86_64",
    "linux-aarch64",
    "linux-x86_64",
    "windows-aarch64",
    "windows-x86_64",
];

/// The rules of the ACP registry's `agent.schema.json` and of its validator (`build_registry.py`)
/// that an entry can break on its own (its URLs existing is checked at submission).
fn assert_registry_entry(entry: &Value, version: &str) {
    let keys: Vec<&str> = entry.as_object().unwrap().keys().map(String::as_str).collect();
    for required in ["id", "name", "version", "description", "distribution"] {
        assert!(keys.contains(&required), "no `{required}` in {entry}");
    }
    let known = [
        "id",
        "name",
        "version",
        "description",
        "repository",
        "authors",
        "license",
        "icon",
        "distribution",
    ];
    assert!(
        keys.iter().all(|k| known.contains(k)),
        "unknown field in {keys:?}"
    );
    let id = entry["id"].as_str().unwrap();
    assert!(id.starts_with(|c: char| c.is_ascii_lowercase()));
    assert!(
        id.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    );
    assert_eq!(entry["version"], version);
    assert!(entry["repository"].as_str().unwrap().starts_with("https://"));
    let distribution = entry["distribution"].as_object().unwrap();
    assert!(
        distribution
            .keys()
            .all(|k| ["binary", "npx", "uvx"].contains(&k.as_str()))
    );
    let binary = distribution["binary"].as_object().unwrap();
    assert!(!binary.is_empty());
    for (platform, target) in binary {
        assert!(REGISTRY_PLATFORMS.contains(&platform.as_str()), "{platform}");
        let target = target.as_object().unwrap();
        assert!(
            target
                .keys()
                .all(|k| ["archive", "cmd", "args", "env"].contains(&k.as_str()))
        );
        assert_eq!(target["cmd"], "./acplb");
        let archive = target["archive"].as_str().unwrap();
        assert!(
            archive.starts_with("https://") && !archive.contains("/latest/"),
            "{archive}"
        );
        assert!(
            archive.contains(&format!("/releases/download/v{version}/acplb-{version}-")),
            "{archive} is not this version's release asset"
        );
    }
    let npx = distribution["npx"].as_object().unwrap();
    assert!(
        npx.keys()
            .all(|k| ["package", "args", "env"].contains(&k.as_str()))
    );
    assert_eq!(npx["package"], format!("acplb@{version}"));
}

#[test]
fn agent_json_is_a_registry_entry_for_this_version_with_every_archive_and_npx() {
    let version = env!("CARGO_PKG_VERSION");
    let (ok, stdout, stderr) = agent_json(&metadata(version, Some(env!("CARGO_PKG_REPOSITORY"))));
    assert!(ok, "{stderr}");
    let entry: Value = serde_json::from_str(&stdout).unwrap();
    assert_registry_entry(&entry, version);
    assert_eq!(entry["license"], env!("CARGO_PKG_LICENSE"));
    let binary = &entry["distribution"]["binary"];
    let archives: Vec<(String, String)> = binary
        .as_object()
        .unwrap()
        .iter()
        .map(|(platform, t)| (platform.clone(), t["archive"].as_str().unwrap().to_owned()))
        .collect();
    let repository = env!("CARGO_PKG_REPOSITORY");
    let expected: Vec<(String, String)> = [
        ("darwin-aarch64", "aarch64-apple-darwin"),
        ("darwin-x86_64", "x86_64-apple-darwin"),
        ("linux-aarch64", "aarch64-unknown-linux-gnu"),
        ("linux-x86_64", "x86_64-unknown-linux-gnu"),
    ]
    .iter()
    .map(|(platform, triple)| {
        let url = format!("{repository}/releases/download/v{version}/acplb-{version}-{triple}.tar.gz");
        ((*platform).to_owned(), url)
    })
    .collect();
    assert_eq!(archives, expected);
}

#[test]
fn another_version_and_a_trailing_slash_give_that_version_and_clean_urls() {
    let (ok, stdout, stderr) = agent_json(&metadata("12.3.4", Some("https://example.org/team/acplb/")));
    assert!(ok, "{stderr}");
    let entry: Value = serde_json::from_str(&stdout).unwrap();
    assert_registry_entry(&entry, "12.3.4");
    assert_eq!(entry["repository"], "https://example.org/team/acplb");
    assert_eq!(
        entry["distribution"]["binary"]["linux-x86_64"]["archive"],
        "https://example.org/team/acplb/releases/download/v12.3.4/acplb-12.3.4-x86_64-unknown-linux-gnu.tar.gz"
    );
}

#[test]
fn a_missing_repository_is_named_instead_of_a_broken_entry() {
    let (ok, stdout, stderr) = agent_json(&metadata("1.0.0", None));
    assert!(!ok);
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("declares no `repository` in Cargo.toml"),
        "{stderr}"
    );
}

#[test]
fn every_release_target_has_its_npm_package_and_the_launcher_depends_on_each_at_this_version() {
    let info = json!({"version": "3.2.1", "description": "d", "license": "Apache-2.0", "repository": "https://example.org/acplb"});
    let got = eval_json(&format!(
        "{{ launcher: release.launcherManifest({info}), \
            platforms: release.TARGETS.map((t) => release.platformManifest({info}, t.triple)) }}"
    ));
    let optional = &got["launcher"]["optionalDependencies"];
    assert_eq!(
        optional,
        &json!({
            "acplb-darwin-arm64": "3.2.1", "acplb-darwin-x64": "3.2.1",
            "acplb-linux-arm64": "3.2.1", "acplb-linux-x64": "3.2.1",
        })
    );
    assert_eq!(got["launcher"]["name"], "acplb");
    assert_eq!(got["launcher"]["bin"], json!({"acplb": "bin/acplb.js"}));
    let platforms = got["platforms"].as_array().unwrap();
    assert_eq!(platforms.len(), 4);
    for manifest in platforms {
        let name = manifest["name"].as_str().unwrap();
        assert_eq!(
            optional[name], "3.2.1",
            "{name} is not a dependency of the launcher"
        );
        let expected_name = format!(
            "acplb-{}-{}",
            manifest["os"][0].as_str().unwrap(),
            manifest["cpu"][0].as_str().unwrap()
        );
        assert_eq!(name, expected_name);
        assert_eq!(manifest["version"], "3.2.1");
        assert_eq!(manifest["files"], json!(["bin/acplb"]));
        let on_linux = manifest["os"] == json!(["linux"]);
        assert_eq!(
            manifest.get("libc") == Some(&json!(["glibc"])),
            on_linux,
            "{manifest}"
        );
    }
}

#[test]
fn the_launcher_picks_the_package_of_each_os_and_cpu_and_none_elsewhere() {
    let got = eval_json(
        "[['linux','x64'],['linux','arm64'],['darwin','x64'],['darwin','arm64'],\
          ['win32','x64'],['linux','ia32'],['freebsd','x64']]\
          .map(([p, a]) => launcher.platformPackage(p, a))",
    );
    assert_eq!(
        got,
        json!([
            "acplb-linux-x64",
            "acplb-linux-arm64",
            "acplb-darwin-x64",
            "acplb-darwin-arm64",
            null,
            null,
            null
        ])
    );
    let unknown = eval_json("launcher.findBinary('win32', 'x64', require.resolve).message");
    let unknown = unknown.as_str().unwrap();
    assert!(unknown.contains("no prebuilt acplb for win32-x64"), "{unknown}");
    assert!(unknown.contains("cargo install --locked acplb"), "{unknown}");
}

#[test]
fn an_unknown_target_triple_is_refused_with_the_known_ones() {
    let script = format!(
        "try {{ require({}).platformManifest({{version: '1.0.0'}}, 'x86_64-pc-windows-msvc') }} \
         catch (e) {{ process.stdout.write(JSON.stringify(e.message)) }}",
        js_path("release.js")
    );
    let out = node(["-e", &script]);
    let message: String = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        message.contains("no release target `x86_64-pc-windows-msvc`"),
        "{message}"
    );
    assert!(message.contains("x86_64-unknown-linux-gnu"), "{message}");
}
