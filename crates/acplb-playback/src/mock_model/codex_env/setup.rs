//! Building the temporary Codex home, sandbox helper and git workspace, and the exec command line.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;

use super::{API_KEY, API_KEY_ENV_VAR, CodexEnvError, EXEC_BASE_ARGS, codex_binary};

/// Options for a [`CodexTestEnv`].
#[derive(Debug, Clone)]
pub struct CodexTestEnvBuilder {
    base_url: String,
    codex: Option<PathBuf>,
    model: String,
    extra_config: String,
    files: Vec<(PathBuf, String)>,
}

impl CodexTestEnvBuilder {
    /// Uses this codex binary instead of [`codex_binary`].
    #[must_use]
    pub fn codex(mut self, path: impl Into<PathBuf>) -> Self {
        self.codex = Some(path.into());
        self
    }

    /// Uses another model slug (default `gpt-5.5`; a slug outside Codex's catalog changes the tools offered).
    #[must_use]
    pub fn model(mut self, slug: impl Into<String>) -> Self {
        self.model = slug.into();
        self
    }

    /// Appends TOML to `config.toml`; start it with a `[table]` header (the base file ends inside `[analytics]`).
    #[must_use]
    pub fn extra_config(mut self, toml: &str) -> Self {
        self.extra_config.push('\n');
        self.extra_config.push_str(toml);
        self
    }

    /// Adds a file (path relative to the workspace) to the initial commit.
    #[must_use]
    pub fn file(mut self, path: impl Into<PathBuf>, contents: impl Into<String>) -> Self {
        self.files.push((path.into(), contents.into()));
        self
    }

    /// Creates the directory tree.
    pub fn build(self) -> Result<CodexTestEnv, CodexEnvError> {
        let codex = match self.codex {
            Some(path) => path,
            None => codex_binary()?,
        };
        let dir = tempfile::Builder::new()
            .prefix("acplb-codex-")
            .tempdir()
            .map_err(io_error(Path::new("/tmp")))?;
        let env = CodexTestEnv { dir, codex };
        for dir in [env.home(), env.bin_dir(), env.workspace()] {
            std::fs::create_dir_all(&dir).map_err(io_error(&dir))?;
        }
        let config = env.home().join("config.toml");
        std::fs::write(
            &config,
            config_toml(&self.base_url, &self.model, &self.extra_config),
        )
        .map_err(io_error(&config))?;
        let helper = env.bin_dir().join("codex-linux-sandbox");
        std::os::unix::fs::symlink(&env.codex, &helper).map_err(io_error(&helper))?;
        let mut files = vec![
            (PathBuf::from("README.md"), "# demo repo\n".to_owned()),
            (PathBuf::from("main.py"), "print(\"hi\")\n".to_owned()),
        ];
        files.extend(self.files);
        for (relative, contents) in files {
            let path = env.workspace().join(relative);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(io_error(parent))?;
            }
            std::fs::write(&path, contents).map_err(io_error(&path))?;
        }
        let repo = env.workspace();
        git(&repo, &["init", "-q"])?;
        git(&repo, &["add", "-A"])?;
        git(&repo, &["commit", "-q", "-m", "init"])?;
        Ok(env)
    }
}

/// A temporary Codex home, sandbox helper and git workspace, removed on drop.
#[derive(Debug)]
pub struct CodexTestEnv {
    dir: tempfile::TempDir,
    codex: PathBuf,
}

impl CodexTestEnv {
    /// Options for an environment whose provider points at `base_url` (e.g. `MockModelHandle::base_url`).
    pub fn builder(base_url: impl Into<String>) -> CodexTestEnvBuilder {
        CodexTestEnvBuilder {
            base_url: base_url.into(),
            codex: None,
            model: "gpt-5.5".to_owned(),
            extra_config: String::new(),
            files: Vec::new(),
        }
    }

    /// An environment with the defaults.
    pub fn new(base_url: impl Into<String>) -> Result<CodexTestEnv, CodexEnvError> {
        CodexTestEnv::builder(base_url).build()
    }

    /// The temporary directory holding everything.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// `CODEX_HOME` (holds `config.toml`, and the session files that `exec resume` reads).
    pub fn home(&self) -> PathBuf {
        self.root().join("home")
    }

    /// The directory put first on `PATH` (holds `codex-linux-sandbox`).
    pub fn bin_dir(&self) -> PathBuf {
        self.root().join("bin")
    }

    /// The git workspace Codex runs in.
    pub fn workspace(&self) -> PathBuf {
        self.root().join("repo")
    }

    /// The codex binary.
    pub fn codex_path(&self) -> &Path {
        &self.codex
    }

    /// `CODEX_HOME`, `MOCK_API_KEY` and `PATH` (with [`Self::bin_dir`] first), for any spawn of Codex.
    pub fn env_vars(&self) -> Vec<(OsString, OsString)> {
        let inherited = std::env::var_os("PATH").unwrap_or_default();
        let mut path = OsString::from(self.bin_dir());
        if !inherited.is_empty() {
            path.push(":");
            path.push(inherited);
        }
        vec![
            ("CODEX_HOME".into(), self.home().into()),
            (API_KEY_ENV_VAR.into(), API_KEY.into()),
            ("PATH".into(), path),
        ]
    }

    /// `codex` + [`EXEC_BASE_ARGS`] + `args`, in the workspace, with the environment set, stdin from
    /// `/dev/null`, stdout and stderr piped, in its own process group, killed when dropped. Options for
    /// exec go before a `resume` in `args` (`["-s", "workspace-write", "resume", id, prompt]`).
    pub fn exec_command<I, S>(&self, args: I) -> tokio::process::Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = tokio::process::Command::new(&self.codex);
        command
            .args(EXEC_BASE_ARGS)
            .args(args)
            .envs(self.env_vars())
            .current_dir(self.workspace())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        command
    }
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> CodexEnvError + '_ {
    move |source| CodexEnvError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Runs git in `repo` with a fixed identity and no signing, whatever the user's git config says.
fn git(repo: &Path, args: &[&str]) -> Result<(), CodexEnvError> {
    let fail = |stderr: String| CodexEnvError::Git {
        args: args.join(" "),
        stderr,
    };
    let output = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=acplb test",
            "-c",
            "user.email=acplb@example.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(repo)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| fail(e.to_string()))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(fail(String::from_utf8_lossy(&output.stderr).into_owned()))
    }
}

/// The `config.toml` described in the module docs.
fn config_toml(base_url: &str, model: &str, extra: &str) -> String {
    // A JSON string is also a valid TOML basic string.
    let quote = |s: &str| Value::String(s.to_owned()).to_string();
    format!(
        "model = {model}\n\
         model_provider = \"mock\"\n\
         check_for_update_on_startup = false\n\
         \n\
         [model_providers.mock]\n\
         name = \"Mock\"\n\
         base_url = {base_url}\n\
         wire_api = \"responses\"\n\
         env_key = \"{API_KEY_ENV_VAR}\"\n\
         request_max_retries = 0\n\
         stream_max_retries = 0\n\
         \n\
         [features]\n\
         plugins = false\n\
         \n\
         [analytics]\n\
         enabled = false\n\
         {extra}\n",
        model = quote(model),
        base_url = quote(base_url),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_is_valid_toml_with_the_provider() {
        let text = config_toml(
            "http://127.0.0.1:1/v1",
            "gpt-5.5",
            "\n[mcp_servers.x]\ncommand = \"y\"",
        );
        let value: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(value["model"].as_str(), Some("gpt-5.5"));
        assert_eq!(value["model_provider"].as_str(), Some("mock"));
        let provider = &value["model_providers"]["mock"];
        assert_eq!(provider["base_url"].as_str(), Some("http://127.0.0.1:1/v1"));
        assert_eq!(provider["wire_api"].as_str(), Some("responses"));
        assert_eq!(provider["env_key"].as_str(), Some("MOCK_API_KEY"));
        assert_eq!(provider["request_max_retries"].as_integer(), Some(0));
        assert_eq!(provider["stream_max_retries"].as_integer(), Some(0));
        assert_eq!(value["features"]["plugins"].as_bool(), Some(false));
        assert_eq!(value["analytics"]["enabled"].as_bool(), Some(false));
        assert_eq!(value["mcp_servers"]["x"]["command"].as_str(), Some("y"));
    }
}
