//! The `codex exec --json` command line for one turn: sandbox from the mode, settings,
//! developer instructions, MCP servers, images, and `resume` for later turns.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use acplb_core::permission::Sandbox;
use acplb_core::provider::TurnRequest;
use acplb_core::toml_text::basic as toml_str;

/// Everything that shapes the arguments of one turn.
#[derive(Debug)]
pub(crate) struct TurnArgs<'a> {
    /// `-c key=value` overrides the user gave acplb, passed first so ours win where they must.
    pub user_overrides: &'a [String],
    /// The client's `-c` overrides for its session (`caller.rs`): after Codex's defaults
    /// (the plan tool), before what acplb must decide (model, instructions, MCP servers).
    pub caller_overrides: &'a [String],
    /// The client's base instructions, as a file (`model_instructions_file`).
    pub base_instructions_file: Option<&'a Path>,
    /// The client's Codex profile (`--profile`).
    pub profile: Option<&'a str>,
    pub cwd: &'a Path,
    pub turn: &'a TurnRequest,
    /// `-c` entries registering the session's MCP servers (see `mcp/`; they hold no secret).
    pub mcp_overrides: &'a [String],
    /// Developer instructions to send (the user's own already merged in).
    pub developer_instructions: Option<String>,
    pub images: &'a [PathBuf],
    /// Directories writable beside `cwd` (`--add-dir`).
    pub add_dirs: &'a [PathBuf],
    pub resume_thread: Option<&'a str>,
}

/// Builds the argument list; the prompt itself goes on stdin (`-`).
pub(crate) fn build(a: &TurnArgs<'_>) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["exec".into(), "--json".into(), "--skip-git-repo-check".into()];
    let mut config = |kv: String| {
        args.push("-c".into());
        args.push(kv.into());
    };
    for o in a.user_overrides {
        config(o.clone());
    }
    // Plans reach the editor only when Codex's plan tool is on; it is off by default.
    config("tools.update_plan.enabled=true".into());
    for o in a.caller_overrides {
        config(o.clone());
    }
    if let Some(file) = a.base_instructions_file {
        config(format!(
            "model_instructions_file={}",
            toml_str(&file.to_string_lossy())
        ));
    }
    let sandbox = a.turn.mode.sandbox(a.turn.settings.network_access);
    if let Sandbox::WorkspaceWrite { network } = sandbox {
        config(format!("sandbox_workspace_write.network_access={network}"));
    }
    if let Some(model) = &a.turn.settings.model {
        config(format!("model={}", toml_str(model)));
    }
    if let Some(effort) = &a.turn.settings.reasoning_effort {
        config(format!("model_reasoning_effort={}", toml_str(effort)));
    }
    if let Some(text) = &a.developer_instructions {
        config(format!("developer_instructions={}", toml_str(text)));
    }
    for kv in a.mcp_overrides {
        config(kv.clone());
    }
    if let Some(profile) = a.profile {
        args.push("--profile".into());
        args.push(profile.into());
    }
    args.push("-s".into());
    args.push(
        match sandbox {
            Sandbox::ReadOnly => "read-only",
            Sandbox::WorkspaceWrite { .. } => "workspace-write",
            Sandbox::None => "danger-full-access",
        }
        .into(),
    );
    args.push("-C".into());
    args.push(a.cwd.as_os_str().to_owned());
    for dir in a.add_dirs {
        args.push("--add-dir".into());
        args.push(dir.as_os_str().to_owned());
    }
    if let Some(thread) = a.resume_thread {
        args.push("resume".into());
        args.push(thread.into());
    }
    for image in a.images {
        args.push("--image".into());
        args.push(image.as_os_str().to_owned());
    }
    // `--image` takes several values: `--` ends them before the stdin prompt marker.
    args.push("--".into());
    args.push("-".into());
    args
}

#[cfg(test)]
mod tests {
    use acplb_core::permission::Mode;
    use acplb_core::provider::{PromptInput, SessionSettings};

    use super::*;

    fn turn(mode: Mode, network: bool) -> TurnRequest {
        TurnRequest {
            prompt: PromptInput::default(),
            mode,
            settings: SessionSettings {
                model: Some("gpt-5.5".into()),
                reasoning_effort: None,
                network_access: network,
                ..SessionSettings::default()
            },
            developer_instructions: vec![],
            env: vec![],
            notes: vec![],
            steer: acplb_core::provider::SteerInbox::default(),
        }
    }

    fn strings(v: &[OsString]) -> Vec<String> {
        v.iter().map(|s| s.to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn first_turn_in_auto_with_network() {
        let t = turn(Mode::Auto, true);
        let args = strings(&build(&TurnArgs {
            caller_overrides: &["tools.update_plan.enabled=false".into()],
            base_instructions_file: Some(Path::new("/t/base.md")),
            profile: Some("loud"),
            user_overrides: &["model_provider=\"mock\"".into()],
            cwd: Path::new("/w"),
            turn: &t,
            mcp_overrides: &[],
            developer_instructions: Some("be \"nice\"\nplease".into()),
            images: &[],
            add_dirs: &[],
            resume_thread: None,
        }));
        let joined = args.join(" ");
        assert!(
            joined.starts_with("exec --json --skip-git-repo-check -c model_provider=\"mock\""),
            "{joined}"
        );
        assert!(joined.contains(
            "-c tools.update_plan.enabled=true -c tools.update_plan.enabled=false -c model_instructions_file=\"/t/base.md\""
        ));
        assert!(joined.contains("-c sandbox_workspace_write.network_access=true"));
        assert!(joined.contains("-c model=\"gpt-5.5\""));
        assert!(joined.contains(r#"-c developer_instructions="be \"nice\"\nplease""#));
        assert!(
            joined.ends_with("--profile loud -s workspace-write -C /w -- -"),
            "{joined}"
        );
        assert!(!joined.contains("resume"));
    }

    #[test]
    fn later_turns_resume_with_images_after_the_subcommand() {
        let t = turn(Mode::ReadOnly, true);
        let images = vec![PathBuf::from("/tmp/a.png")];
        let args = strings(&build(&TurnArgs {
            caller_overrides: &[],
            base_instructions_file: None,
            profile: None,
            user_overrides: &[],
            cwd: Path::new("/w"),
            turn: &t,
            mcp_overrides: &[],
            developer_instructions: None,
            images: &images,
            add_dirs: &[PathBuf::from("/extra")],
            resume_thread: Some("0199-thread"),
        }));
        let joined = args.join(" ");
        assert!(joined.contains("-s read-only -C /w --add-dir /extra resume"));
        assert!(
            !joined.contains("network_access"),
            "network only matters in auto: {joined}"
        );
        assert!(
            joined.ends_with("-C /w --add-dir /extra resume 0199-thread --image /tmp/a.png -- -"),
            "{joined}"
        );
    }
}
