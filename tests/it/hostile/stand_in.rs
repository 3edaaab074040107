//! Stand-in `codex` scripts for the hostile tests: one that runs a shell body for any command
//! line, and a small `codex app-server` that answers the handshake and `thread/start` and does
//! what a test says when a turn starts.

use std::path::{Path, PathBuf};

use crate::harness::Acplb;

/// A stand-in `codex` script in `dir`; `body` runs whatever the arguments.
pub fn fake_codex(dir: &Path, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let path = dir.join("codex");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The first line of a stand-in for `codex exec` only: as `codex app-server` (which acplb starts
/// on exec to ask for the model list) it fails as a Codex without app-server would.
pub const NO_APP_SERVER: &str = r#"case " $* " in *" app-server "*) echo "error: unrecognized subcommand 'app-server'" >&2; exit 2 ;; esac"#;

/// What the stand-in answers `model/list` (`$i` is the request's id): that it has no such
/// method, as a Codex without the list would.
pub const NO_MODEL_LIST: &str =
    r#"echo "{\"id\":$i,\"error\":{\"code\":-32601,\"message\":\"no model/list here\"}}""#;

/// A stand-in `codex app-server` in `dir`: answers `initialize`, every `thread/start` with a
/// new thread `th-<n>` (the request is appended to `<dir>/threads.log`) and a `thread/resume`
/// with the thread it names (a new server after one died); `on_turn` runs when
/// `turn/start` comes (`$i` is its id, `$n` the number of threads started).
pub fn app_server(dir: &Path, on_turn: &str) -> PathBuf {
    app_server_listing(dir, on_turn, NO_MODEL_LIST)
}

/// What the stand-in answers `skills/list`: that it has no such method.
pub const NO_SKILLS_LIST: &str =
    r#"echo "{\"id\":$i,\"error\":{\"code\":-32601,\"message\":\"no skills/list here\"}}""#;

/// [`app_server`] answering `model/list` by running `on_list`.
pub fn app_server_listing(dir: &Path, on_turn: &str, on_list: &str) -> PathBuf {
    app_server_answering(dir, on_turn, on_list, NO_SKILLS_LIST)
}

/// [`app_server_listing`] answering `skills/list` by running `on_skills`.
pub fn app_server_answering(dir: &Path, on_turn: &str, on_list: &str, on_skills: &str) -> PathBuf {
    let log = dir.join("threads.log");
    fake_codex(
        dir,
        &format!(
            r#"n=0
while read -r l; do
  i=$(printf '%s\n' "$l" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$l" in
    *'"method":"initialize"'*) echo "{{\"id\":$i,\"result\":{{}}}}" ;;
    *'"method":"thread/start"'*)
      n=$((n+1))
      printf '%s\n' "$l" >> '{log}'
      echo "{{\"id\":$i,\"result\":{{\"thread\":{{\"id\":\"th-$n\"}},\"model\":\"m\"}}}}" ;;
    *'"method":"thread/resume"'*)
      t=$(printf '%s\n' "$l" | sed -n 's/.*"threadId":"\([^"]*\)".*/\1/p')
      echo "{{\"id\":$i,\"result\":{{\"thread\":{{\"id\":\"$t\"}},\"model\":\"m\"}}}}" ;;
    *'"method":"turn/start"'*)
      {on_turn} ;;
    *'"method":"model/list"'*)
      {on_list} ;;
    *'"method":"skills/list"'*)
      {on_skills} ;;
  esac
done"#,
            log = log.display()
        ),
    )
}

/// acplb on the app-server transport with `codex` as its Codex, in `dir`, with `env` besides.
pub fn spawn_app_server(dir: &Path, codex: &Path, env: &[(&str, &str)]) -> Acplb {
    let mut vars = vec![("ACPLB_CODEX".to_owned(), codex.display().to_string())];
    vars.extend(env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    Acplb::spawn(&["--transport", "app-server"], &vars, dir)
}
