//! `composer.toml` from the outside: `acplb config check`, a bad `--composer` stopping acplb at
//! startup, a bad (trusted) workspace file failing its `session/new`, and the `mcp atm`
//! command's help. Hostile files are in `hostile::composer`.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{InitializeRequest, NewSessionRequest};

use crate::harness::{Acplb, Updates, eventually};

const ACPLB: &str = env!("CARGO_BIN_EXE_acplb");

fn example() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("composer.toml.example")
        .display()
        .to_string()
}

/// `acplb config check ARGS` in `dir`, with a home and user config dir of its own.
fn check(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = Command::new(ACPLB)
        .args(["config", "check"])
        .args(args)
        .current_dir(dir)
        .env("HOME", dir.join("home"))
        .env("XDG_CONFIG_HOME", dir.join("xdg"))
        .env_remove("ATM_HOME")
        .env_remove("ATM_IDENTITY")
        .env_remove("ATM_TEAM")
        .env_remove("ACPLB_COMPOSER")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        status.code(),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

/// `acplb trust DIR` with the user config dir `xdg`.
pub(crate) fn trust(xdg: &Path, dir: &Path) {
    let out = Command::new(ACPLB)
        .arg("trust")
        .arg(dir)
        .env("XDG_CONFIG_HOME", xdg)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn config_check_shows_plugins_in_order_and_where_every_value_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let example = example();
    let (code, out, err) = check(dir.path(), &["--composer", &example], &[("ATM_HOME", "/srv/atm")]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    assert!(
        out.contains(&format!("composer.toml: {example} (named by --composer)")),
        "{out}"
    );
    let at = |needle: &str| {
        out.find(needle)
            .unwrap_or_else(|| panic!("no `{needle}` in:\n{out}"))
    };
    assert!(at("1. atm-identity  (required;") < at("2. atm-mail  (required;"));
    assert!(at("2. atm-mail") < at("3. audit  (optional;"));
    let identity_line = std::fs::read_to_string(&example)
        .unwrap()
        .lines()
        .position(|l| l.starts_with("identity = "))
        .unwrap()
        + 1;
    assert!(
        out.contains(&format!("[{example}:{identity_line}]")),
        "identity from its line: {out}"
    );
    assert!(out.contains("atm_home = /srv/atm"), "{out}");
    assert!(out.contains("[env ATM_HOME]"), "{out}");
    assert!(
        out.contains("path = /srv/atm/.config/atm/agent-sessions/atm-dev/audit.jsonl"),
        "{out}"
    );
    assert!(out.contains(&format!("command            = {ACPLB}")), "{out}");

    // The same file through the environment, and values from the environment and defaults.
    let plain = write(dir.path(), "plain.toml", "[[plugin]]\nid = \"atm-identity\"\n");
    let (code, out, _) = check(
        dir.path(),
        &[],
        &[("ACPLB_COMPOSER", &plain), ("ATM_IDENTITY", "from-env")],
    );
    assert_eq!(code, Some(0));
    assert!(out.contains("(named by $ACPLB_COMPOSER)"), "{out}");
    assert!(out.contains("identity = from-env"), "{out}");
    assert!(out.contains("[env ATM_IDENTITY]"), "{out}");
    assert!(out.contains("[default]"), "team: {out}");

    // `.atm.toml` above the workspace.
    let ws = dir.path().join("ws/sub");
    std::fs::create_dir_all(&ws).unwrap();
    write(
        &dir.path().join("ws"),
        ".atm.toml",
        "[core]\nidentity = \"toml-name\"\ndefault_team = \"t\"\n",
    );
    let (code, out, _) = check(
        dir.path(),
        &["--composer", &plain, "--workspace", ws.to_str().unwrap()],
        &[],
    );
    assert_eq!(code, Some(0));
    assert!(out.contains("identity = toml-name"), "{out}");
    assert!(out.contains("[.atm.toml ("), "{out}");
}

#[test]
fn config_check_finds_the_workspace_file_or_says_there_is_none() {
    let dir = tempfile::tempdir().unwrap();
    let (code, out, _) = check(dir.path(), &[], &[]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("none found, so sessions run without plugins"),
        "{out}"
    );
    write(
        dir.path(),
        "composer.toml",
        "[[plugin]]\nid = \"audit\"\npath = \"a.jsonl\"\n",
    );
    trust(&dir.path().join("xdg"), dir.path());
    let (code, out, _) = check(dir.path(), &[], &[]);
    assert_eq!(code, Some(0));
    assert!(
        out.contains("(found in the workspace, which is trusted)"),
        "{out}"
    );
    assert!(out.contains("composer.toml:3]"), "{out}");
}

#[test]
fn config_check_refuses_bad_files_with_line_and_hint() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "[[plugin]]\nid = \"atm-identiy\"\n",
            ":2: unknown plugin `atm-identiy`",
            "hint: did you mean `atm-identity`? known plugins: atm-identity, atm-mail, audit",
        ),
        (
            "[[plugin]]\nid = \"atm-mail\"\n\nmax_messages = \"ten\"\n",
            ":4: `max_messages` of plugin `atm-mail` must be a positive integer, not string",
            "hint: the most messages one `atm_read` returns",
        ),
        (
            "[[plugin]]\nid = \"atm-identity\"\nteem = \"demo\"\n",
            ":3: unknown key `teem` for plugin `atm-identity`",
            "hint: did you mean `team`?",
        ),
        (
            "[[plugin]]\nid = \"atm-mail\"\nbackend = \"sqlite\"\n",
            ":3: `backend` of plugin `atm-mail` must be one of `files`, `atm-cli`, not `sqlite`",
            "hint: where mail lives",
        ),
        (
            "[[plugin]]\nid = \"audit\"\n[[plugin]]\nid = \"atm-identity\"\nrequired = true\n",
            ":3: required plugin `atm-identity` could not start: `atm-identity` must come before `audit`",
            "",
        ),
    ];
    for (n, (text, message, hint)) in cases.into_iter().enumerate() {
        let file = write(dir.path(), &format!("bad{n}.toml"), text);
        let (code, out, err) = check(dir.path(), &["--composer", &file], &[]);
        assert_eq!(code, Some(1), "{text}\n{out}\n{err}");
        assert!(err.starts_with(&format!("error: {file}{message}")), "{err}");
        assert!(err.contains(hint), "{err}");
        assert!(out.is_empty(), "{out}");
    }
    let (code, _, err) = check(dir.path(), &["--composer", "/nope/composer.toml"], &[]);
    assert_eq!(code, Some(1));
    assert!(err.contains("cannot read `/nope/composer.toml`"), "{err}");
}

#[tokio::test]
async fn a_bad_explicit_composer_stops_acplb_at_startup() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(
        dir.path(),
        "composer.toml",
        "[[plugin]]\nid = \"atm-identity\"\nidentity = 3\n",
    );
    for (args, env) in [
        (vec!["--composer", bad.as_str()], vec![]),
        (vec![], vec![("ACPLB_COMPOSER".to_owned(), bad.clone())]),
    ] {
        let mut acplb = Acplb::spawn(&args, &env, dir.path());
        let (code, _) = acplb.wait_exit(Duration::from_secs(10)).await;
        assert_eq!(code, Some(2), "{}", acplb.stderr());
        // Stderr is read by a task of its own, which may lag the exit.
        let expected =
            format!("acplb: {bad}:3: `identity` of plugin `atm-identity` must be a string, not integer");
        let complete = eventually(Duration::from_secs(5), || {
            acplb.stderr().contains("hint: the agent name")
        })
        .await;
        let stderr = acplb.stderr();
        assert!(complete && stderr.contains(&expected), "{stderr}");
    }
}

#[tokio::test]
async fn a_bad_workspace_composer_fails_that_session_new() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let bad = write(&ws, "composer.toml", "\n[[plugin]]\nid = \"atm-mial\"\n");
    trust(&dir.path().join("xdg"), &ws);
    let env = vec![
        ("ACPLB_CODEX".to_owned(), "/nope/codex".to_owned()),
        (
            "XDG_CONFIG_HOME".to_owned(),
            dir.path().join("xdg").display().to_string(),
        ),
    ];
    let mut acplb = Acplb::spawn(&[], &env, dir.path());
    let (good, refused) = acplb
        .client(&Updates::default(), async |cx| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            let good = cx
                .send_request(NewSessionRequest::new(dir.path()))
                .block_task()
                .await;
            let refused = cx.send_request(NewSessionRequest::new(&ws)).block_task().await;
            Ok((good, refused))
        })
        .await
        .unwrap();
    assert!(
        good.is_ok(),
        "a workspace without composer.toml has no plugins: {good:?}"
    );
    let err = refused.unwrap_err();
    let message = err
        .data
        .as_ref()
        .and_then(|d| d["message"].as_str())
        .unwrap_or_default()
        .to_owned();
    assert!(
        message.starts_with(&format!("{bad}:3: unknown plugin `atm-mial`")),
        "{err:?}"
    );
    assert!(message.contains("hint: did you mean `atm-mail`?"), "{err:?}");
    assert_eq!(acplb.wait_exit(Duration::from_secs(5)).await.0, Some(0));
}

#[test]
fn help_covers_config_check_and_mcp_atm() {
    let help = |args: &[&str]| {
        let out = Command::new(ACPLB).args(args).arg("--help").output().unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let top = help(&[]);
    for needle in [
        "config",
        "mcp",
        "--composer",
        "ACPLB_COMPOSER",
        "composer.toml.example",
    ] {
        assert!(top.contains(needle), "--help lacks {needle}: {top}");
    }
    let check = help(&["config", "check"]);
    assert!(
        check.contains("--workspace") && check.contains("env ATM_IDENTITY"),
        "{check}"
    );
    let atm = help(&["mcp", "atm"]);
    for needle in [
        "--identity",
        "--team",
        "--backend",
        "atm-cli",
        "--audit",
        "--no-claim",
        "ATM_HOME",
    ] {
        assert!(atm.contains(needle), "mcp atm --help lacks {needle}: {atm}");
    }
}
