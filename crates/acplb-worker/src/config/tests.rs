//! Tests of the whole module: files in, configurations or `file:line` errors out.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tempfile::TempDir;

use super::*;

/// A home directory holding a `repo` directory for agents to work in.
struct Fixture {
    home: TempDir,
}

impl Fixture {
    fn new() -> Self {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join("repo")).unwrap();
        Self { home }
    }

    fn repo(&self) -> PathBuf {
        self.home.path().join("repo")
    }

    /// `text` with `REPO` replaced by the repo directory.
    fn text(&self, text: &str) -> String {
        text.replace("REPO", &self.repo().display().to_string())
    }

    fn parse(&self, text: &str) -> Result<WorkersConfig, ConfigError> {
        self.parse_trusting(text, &|_| true)
    }

    fn parse_trusting(
        &self,
        text: &str,
        trusted: &dyn Fn(&Path) -> bool,
    ) -> Result<WorkersConfig, ConfigError> {
        parse_with_home(
            &self.text(text),
            Path::new("w.toml"),
            trusted,
            Some(self.home.path()),
        )
    }

    /// The error of `text`, which must point at `line` of `file`.
    fn err(&self, text: &str, file: &str, line: usize) -> String {
        let e = self.parse(text).unwrap_err();
        let msg = e.to_string();
        assert_eq!(e.line(), Some(line), "{msg}");
        assert!(msg.starts_with(&format!("{file}:{line}: ")), "{msg}");
        msg
    }

    fn write_repo_file(&self, text: &str) -> PathBuf {
        let dir = self.repo().join(".atm");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("config.toml");
        std::fs::write(&file, text).unwrap();
        file
    }
}

const BOB: &str = "[workers.agents.\"bob@t\"]\ncwd = \"REPO\"\n";

fn bob() -> AgentName {
    AgentName::parse("bob@t").unwrap()
}

#[test]
fn an_empty_file_has_the_defaults_and_no_agents() {
    let f = Fixture::new();
    let c = f.parse("").unwrap();
    assert_eq!(c, WorkersConfig::default());
    let s = WorkerSettings::default();
    assert!(s.enabled);
    assert_eq!(s.log_dir, None);
    assert_eq!(s.inactivity_timeout, Duration::from_secs(300));
    assert_eq!(s.health_check_interval, Duration::from_secs(30));
    assert_eq!(s.max_restart_attempts, 3);
    assert_eq!(s.restart_backoff, Duration::from_secs(5));
    assert_eq!(s.shutdown_timeout, Duration::from_secs(10));
}

#[test]
fn an_agent_with_only_a_cwd_has_the_defaults() {
    let f = Fixture::new();
    let c = f.parse(&format!("# machine\n\n{BOB}")).unwrap();
    let a = &c.agents[&bob()];
    assert!(a.enabled);
    assert_eq!(a.prompt_template, "{message}");
    assert_eq!(a.policy, Policy::Queue);
    assert_eq!(a.max_concurrent, 4);
    assert_eq!(a.cwd, f.repo());
    assert_eq!(a.mode, "auto");
    assert_eq!((&a.model, &a.transport, &a.composer), (&None, &None, &None));
    assert_eq!(a.origin, "w.toml:3");
    assert_eq!(c.enabled_agents().count(), 1);
    assert!(c.notes.is_empty());
}

#[test]
fn every_key_is_read() {
    let f = Fixture::new();
    std::fs::write(f.home.path().join("c.toml"), "").unwrap();
    let text = "[workers]\nenabled = true\nlog_dir = \"~/logs\"\ninactivity_timeout_ms = 1500\n\
        health_check_interval_secs = 7\nmax_restart_attempts = 0\nrestart_backoff_secs = 0\n\
        shutdown_timeout_secs = 2\n\n[workers.agents.\"bob@t\"]\nenabled = false\n\
        prompt_template = \"From {from} ({summary}): {message}\"\nconcurrency_policy = \"concurrent\"\n\
        max_concurrent = 64\ncwd = \"~/repo\"\nmode = \"read-only\"\nmodel = \"gpt-5\"\n\
        transport = \"exec\"\ncomposer = \"~/c.toml\"\n";
    let c = f.parse(text).unwrap();
    let s = &c.settings;
    assert_eq!(s.log_dir, Some(f.home.path().join("logs")));
    assert_eq!(s.inactivity_timeout, Duration::from_millis(1500));
    assert_eq!(s.health_check_interval, Duration::from_secs(7));
    assert_eq!(s.max_restart_attempts, 0);
    assert_eq!(s.restart_backoff, Duration::ZERO);
    assert_eq!(s.shutdown_timeout, Duration::from_secs(2));
    let a = &c.agents[&bob()];
    assert!(!a.enabled);
    assert_eq!(a.prompt_template, "From {from} ({summary}): {message}");
    assert_eq!((a.policy, a.max_concurrent), (Policy::Concurrent, 64));
    assert_eq!(a.cwd, f.repo());
    assert_eq!(a.mode, "read-only");
    assert_eq!(a.model.as_deref(), Some("gpt-5"));
    assert_eq!(a.transport.as_deref(), Some("exec"));
    assert_eq!(a.composer, Some(f.home.path().join("c.toml")));
    assert_eq!(a.origin, "w.toml:10");
    assert_eq!(c.enabled_agents().count(), 0);
}

#[test]
fn enabled_agents_are_none_when_the_daemon_is_disabled() {
    let f = Fixture::new();
    let c = f.parse(&format!("[workers]\nenabled = false\n{BOB}")).unwrap();
    assert_eq!(c.agents.len(), 1);
    assert_eq!(c.enabled_agents().count(), 0);
}

#[test]
fn unknown_keys_are_refused_with_a_suggestion() {
    let f = Fixture::new();
    let msg = f.err("\nworker = 1\n", "w.toml", 2);
    assert!(msg.contains("unknown top-level key `worker`"), "{msg}");
    let msg = f.err("[workers]\n\nhealth_check_interval_sec = 3\n", "w.toml", 3);
    assert!(
        msg.contains("unknown key `health_check_interval_sec` in `[workers]`"),
        "{msg}"
    );
    assert!(
        msg.contains("did you mean `health_check_interval_secs`?"),
        "{msg}"
    );
    let msg = f.err(&format!("{BOB}prompt_templat = \"{{message}}\"\n"), "w.toml", 3);
    assert!(
        msg.contains("unknown key `prompt_templat` in agent `bob@t`"),
        "{msg}"
    );
    assert!(msg.contains("did you mean `prompt_template`?"), "{msg}");
}

#[test]
fn wrong_types_are_refused_at_the_value() {
    let f = Fixture::new();
    let msg = f.err("[workers]\nenabled = \"yes\"\n", "w.toml", 2);
    assert!(
        msg.contains("`enabled` must be `true` or `false`, not a string"),
        "{msg}"
    );
    let msg = f.err("[workers]\n\nmax_restart_attempts = \"3\"\n", "w.toml", 3);
    assert!(
        msg.contains("`max_restart_attempts` must be a whole number, not a string"),
        "{msg}"
    );
    assert!(msg.contains("hint: e.g. `max_restart_attempts = 3`"), "{msg}");
    let msg = f.err("[workers]\nrestart_backoff_secs = -1\n", "w.toml", 2);
    assert!(msg.contains("must not be negative"), "{msg}");
    let msg = f.err("[workers.agents.\"bob@t\"]\ncwd = 3\n", "w.toml", 2);
    assert!(msg.contains("`cwd` must be a string, not an integer"), "{msg}");
    let msg = f.err("[workers]\nagents = 1\n", "w.toml", 2);
    assert!(msg.contains("`agents` must be a table"), "{msg}");
    let msg = f.err("[workers]\nagents = { \"bob@t\" = 1 }\n", "w.toml", 2);
    assert!(msg.contains("`bob@t` must be a table"), "{msg}");
}

#[test]
fn bad_agent_names_are_refused_at_their_table() {
    let f = Fixture::new();
    let msg = f.err(
        "[workers]\n\n[workers.agents.\"\"]\ncwd = \"REPO\"\n",
        "w.toml",
        3,
    );
    assert!(msg.contains("agent `` has no team"), "{msg}");
    let msg = f.err("\n[workers.agents.\"bo\\nb@t\"]\ncwd = \"REPO\"\n", "w.toml", 2);
    assert!(msg.contains("newline"), "{msg}");
    let msg = f.err("[workers.agents.\"@t\"]\ncwd = \"REPO\"\n", "w.toml", 1);
    assert!(msg.contains("has an empty name"), "{msg}");
    assert!(
        msg.contains("hint: each agent is a `[workers.agents.\"name@team\"]` table"),
        "{msg}"
    );
}

#[test]
fn unknown_words_list_the_valid_ones() {
    let f = Fixture::new();
    let msg = f.err(&format!("{BOB}concurrency_policy = \"queu\"\n"), "w.toml", 3);
    assert!(msg.contains("unknown concurrency_policy `queu`; it is one of: queue, reject, concurrent"));
    assert!(msg.contains("did you mean `queue`?"), "{msg}");
    let msg = f.err(&format!("{BOB}\nmode = \"yolo\"\n"), "w.toml", 4);
    assert!(
        msg.contains("unknown mode `yolo`; it is one of: read-only, auto, full-access"),
        "{msg}"
    );
    let msg = f.err(&format!("{BOB}transport = \"grpc\"\n"), "w.toml", 3);
    assert!(
        msg.contains("unknown transport `grpc`; it is one of: app-server, exec"),
        "{msg}"
    );
}

#[test]
fn max_concurrent_needs_the_concurrent_policy_and_a_range() {
    let f = Fixture::new();
    let conc = format!("{BOB}concurrency_policy = \"concurrent\"\n");
    let msg = f.err(&format!("{conc}max_concurrent = 0\n"), "w.toml", 4);
    assert!(
        msg.contains("`max_concurrent` must be between 1 and 64, not 0"),
        "{msg}"
    );
    let msg = f.err(&format!("{conc}max_concurrent = 65\n"), "w.toml", 4);
    assert!(msg.contains("not 65"), "{msg}");
    let msg = f.err(&format!("{BOB}max_concurrent = 2\n"), "w.toml", 3);
    assert!(
        msg.contains("`max_concurrent` is set but the policy of `bob@t` is `queue`"),
        "{msg}"
    );
    let text = format!("{BOB}max_concurrent = 2\nconcurrency_policy = \"reject\"\n");
    let msg = f.err(&text, "w.toml", 3);
    assert!(msg.contains("policy of `bob@t` is `reject`"), "{msg}");
    let ok = f.parse(&format!(
        "{BOB}max_concurrent = 2\nconcurrency_policy = \"concurrent\"\n"
    ));
    assert_eq!(ok.unwrap().agents[&bob()].max_concurrent, 2);
}

#[test]
fn zero_intervals_are_refused() {
    let f = Fixture::new();
    let msg = f.err("[workers]\nhealth_check_interval_secs = 0\n", "w.toml", 2);
    assert!(
        msg.contains("`health_check_interval_secs` must be at least 1, not 0"),
        "{msg}"
    );
    let msg = f.err("[workers]\n\n\nshutdown_timeout_secs = 0\n", "w.toml", 4);
    assert!(
        msg.contains("`shutdown_timeout_secs` must be at least 1"),
        "{msg}"
    );
}

#[test]
fn cwd_must_be_an_existing_absolute_directory() {
    let f = Fixture::new();
    let msg = f.err("[workers.agents.\"bob@t\"]\ncwd = \"src/repo\"\n", "w.toml", 2);
    assert!(msg.contains("`cwd` is the relative path `src/repo`"), "{msg}");
    let msg = f.err("[workers.agents.\"bob@t\"]\ncwd = \"REPO/nope\"\n", "w.toml", 2);
    assert!(msg.contains("does not exist"), "{msg}");
    std::fs::write(f.repo().join("file"), "").unwrap();
    let msg = f.err("[workers.agents.\"bob@t\"]\n\ncwd = \"REPO/file\"\n", "w.toml", 3);
    assert!(msg.contains("is not a directory"), "{msg}");
    let msg = f.err("\n[workers.agents.\"bob@t\"]\nmode = \"auto\"\n", "w.toml", 2);
    assert!(msg.contains("agent `bob@t` has no `cwd`"), "{msg}");
    let msg = f.err("[workers.agents.\"bob@t\"]\ncwd = \"\"\n", "w.toml", 2);
    assert!(msg.contains("`cwd` is empty"), "{msg}");
}

#[test]
fn home_is_expanded_in_paths() {
    let f = Fixture::new();
    let c = f.parse("[workers.agents.\"bob@t\"]\ncwd = \"~/repo\"\n").unwrap();
    assert_eq!(c.agents[&bob()].cwd, f.repo());
    let no_home = parse_with_home(
        "[workers.agents.\"bob@t\"]\ncwd = \"~/repo\"\n",
        Path::new("w.toml"),
        &|_| true,
        None,
    )
    .unwrap_err();
    assert!(no_home.to_string().contains("HOME is not set"), "{no_home}");
}

#[test]
fn a_missing_composer_file_is_refused() {
    let f = Fixture::new();
    let msg = f.err(&format!("{BOB}composer = \"~/none.toml\"\n"), "w.toml", 3);
    assert!(msg.contains("`composer` file"), "{msg}");
    assert!(msg.contains("does not exist"), "{msg}");
    let msg = f.err(&format!("{BOB}composer = \"none.toml\"\n"), "w.toml", 3);
    assert!(msg.contains("relative path"), "{msg}");
}

#[test]
fn templates_are_checked_at_their_line() {
    let f = Fixture::new();
    let msg = f.err(&format!("{BOB}prompt_template = \"{{msg}}\"\n"), "w.toml", 3);
    assert!(msg.contains("unknown placeholder `{msg}`"), "{msg}");
    let msg = f.err(
        &format!("{BOB}prompt_template = \"From {{from}}\"\n"),
        "w.toml",
        3,
    );
    assert!(msg.contains("the mail would never reach the agent"), "{msg}");
    let c = f
        .parse(&format!("{BOB}prompt_template = \"{{{{x}}}} {{message}}\"\n"))
        .unwrap();
    let mut out = Bounded::new(100);
    let fields = Fields {
        message: "m",
        from: "",
        summary: "",
    };
    render_prompt(&c.agents[&bob()].prompt_template, &fields, &mut out).unwrap();
    assert_eq!(out.into_string(), "{x} m");
}

#[test]
fn syntax_errors_have_a_line() {
    let f = Fixture::new();
    let msg = f.err("[workers]\nenabled = true\nlog_dir = \n", "w.toml", 3);
    assert!(msg.contains("hint:"), "{msg}");
    f.err(&format!("{BOB}{BOB}"), "w.toml", 3);
}

#[test]
fn load_reports_missing_unreadable_and_non_utf8_files() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("workers.toml");
    let e = load(&file, &|_| true).unwrap_err();
    assert!(matches!(e, ConfigError::Missing { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!("`{}` does not exist", file.display())),
        "{msg}"
    );
    assert!(
        msg.contains("hint: create it") && msg.contains("[workers.agents.\"bob@myteam\"]"),
        "{msg}"
    );
    std::fs::write(&file, b"[workers]\n# caf\xe9\n").unwrap();
    let msg = load(&file, &|_| true).unwrap_err().to_string();
    assert!(
        msg.starts_with(&format!(
            "{}:2: the file is not valid UTF-8 (byte 0xe9)",
            file.display()
        )),
        "{msg}"
    );
    std::fs::write(&file, "[workers]\nenabled = false\n").unwrap();
    assert!(!load(&file, &|_| true).unwrap().settings.enabled);
}

#[test]
fn default_path_prefers_xdg_config_home() {
    let env = |k: &str| match k {
        "XDG_CONFIG_HOME" => Some("/x".to_owned()),
        "HOME" => Some("/h".to_owned()),
        _ => None,
    };
    assert_eq!(default_path(env), Some(PathBuf::from("/x/acplb/workers.toml")));
    let env = |k: &str| (k == "HOME").then(|| "/h".to_owned());
    assert_eq!(
        default_path(env),
        Some(PathBuf::from("/h/.config/acplb/workers.toml"))
    );
    assert_eq!(default_path(|_| None), None);
}

#[test]
fn log_dir_defaults_to_the_state_dir() {
    let env = |k: &str| (k == "ACPLB_STATE_DIR").then(|| "/s".to_owned());
    let s = WorkerSettings::default();
    assert_eq!(s.log_dir_or_default(env), Some(PathBuf::from("/s/workers/logs")));
    let set = WorkerSettings {
        log_dir: Some("/l".into()),
        ..s
    };
    assert_eq!(set.log_dir_or_default(env), Some(PathBuf::from("/l")));
}

#[test]
fn a_trusted_repository_overrides_the_shared_keys() {
    let f = Fixture::new();
    f.write_repo_file(
        "[core]\nidentity = \"bob\"\n\n[workers.agents.\"bob@t\"]\nprompt_template = \"R: {message}\"\n\
         concurrency_policy = \"concurrent\"\nmax_concurrent = 8\nmodel = \"o3\"\n",
    );
    let seen = std::cell::RefCell::new(Vec::new());
    let trusted = |p: &Path| {
        seen.borrow_mut().push(p.to_path_buf());
        true
    };
    let c = f
        .parse_trusting(&format!("{BOB}model = \"gpt-5\"\n"), &trusted)
        .unwrap();
    let a = &c.agents[&bob()];
    assert_eq!(a.prompt_template, "R: {message}");
    assert_eq!((a.policy, a.max_concurrent), (Policy::Concurrent, 8));
    assert_eq!(a.model.as_deref(), Some("o3"));
    assert_eq!(a.origin, "w.toml:1");
    assert_eq!(*seen.borrow(), [f.repo()]);
    assert!(c.notes.is_empty(), "{:?}", c.notes);
}

#[test]
fn an_untrusted_repository_is_ignored_with_a_note() {
    let f = Fixture::new();
    let file = f.write_repo_file("[workers.agents.\"bob@t\"]\ncwd = \"/\"\nmodel = \"o3\"\n");
    let c = f.parse_trusting(BOB, &|_| false).unwrap();
    assert_eq!(c.agents[&bob()].model, None);
    assert_eq!(
        c.notes,
        [format!(
            "ignored {}: workspace not trusted (acplb trust {})",
            file.display(),
            f.repo().display()
        )]
    );
}

#[test]
fn a_repository_may_not_set_machine_keys() {
    let f = Fixture::new();
    let file = f.write_repo_file("[core]\nx = 1\n[workers.agents.\"bob@t\"]\nmodel = \"o3\"\ncwd = \"/\"\n");
    let file = file.display().to_string();
    let msg = f.err(BOB, &file, 5);
    assert!(msg.contains("`cwd` may only be set in the machine file (w.toml), not in a repository"));
    assert!(
        msg.contains("a repository may set only prompt_template, concurrency_policy"),
        "{msg}"
    );
    for key in [
        "composer = \"/c\"",
        "mode = \"full-access\"",
        "transport = \"exec\"",
        "enabled = false",
    ] {
        f.write_repo_file(&format!("[workers.agents.\"bob@t\"]\n{key}\n"));
        let msg = f.err(BOB, &file, 2);
        assert!(
            msg.contains("may only be set in the machine file"),
            "{key}: {msg}"
        );
    }
    f.write_repo_file("[workers]\nenabled = false\n");
    let msg = f.err(BOB, &file, 2);
    assert!(
        msg.contains("`[workers]` key `enabled` may only be set in the machine file"),
        "{msg}"
    );
    f.write_repo_file("[workers.agents.\"bob@t\"]\n\nmodle = \"o3\"\n");
    let msg = f.err(BOB, &file, 3);
    assert!(msg.contains("unknown key `modle` in agent `bob@t`"), "{msg}");
    assert!(msg.contains("did you mean `model`?"), "{msg}");
}

#[test]
fn repository_values_are_checked_at_their_line() {
    let f = Fixture::new();
    let file = f.write_repo_file("[workers.agents.\"bob@t\"]\nmax_concurrent = 2\n");
    let file = file.display().to_string();
    let msg = f.err(BOB, &file, 2);
    assert!(msg.contains("policy of `bob@t` is `queue`"), "{msg}");
    f.write_repo_file("[workers.agents.\"bob@t\"]\nprompt_template = \"{from}\"\n");
    f.err(BOB, &file, 2);
    f.write_repo_file("[workers.agents]\n\"bob@t\" = 1\n");
    let msg = f.err(BOB, &file, 2);
    assert!(msg.contains("`bob@t` must be a table, not an integer"), "{msg}");
    f.write_repo_file("[workers.agents.\"bob@t\"\n");
    f.err(BOB, &file, 1);
    // A repository that makes the agent queue drops the machine's unused number.
    f.write_repo_file("[workers.agents.\"bob@t\"]\nconcurrency_policy = \"queue\"\n");
    let machine = format!("{BOB}concurrency_policy = \"concurrent\"\nmax_concurrent = 9\n");
    let a = &f.parse(&machine).unwrap().agents[&bob()];
    assert_eq!((a.policy, a.max_concurrent), (Policy::Queue, 4));
}

#[test]
fn repository_tables_for_other_agents_are_ignored_with_a_note() {
    let f = Fixture::new();
    let file = f.write_repo_file("[workers.agents.\"eve@t\"]\nmodel = \"o3\"\n[other]\nk = 1\n");
    let c = f.parse(BOB).unwrap();
    assert_eq!(c.agents[&bob()].model, None);
    assert_eq!(c.notes.len(), 1);
    let note = &c.notes[0];
    assert!(
        note.starts_with(&format!("ignored the table of `eve@t` at {}:1", file.display())),
        "{note}"
    );
    f.write_repo_file("[core]\nidentity = \"x\"\n");
    assert!(f.parse(BOB).unwrap().notes.is_empty());
}

#[test]
fn agents_sharing_a_repository_read_its_file_once() {
    let f = Fixture::new();
    f.write_repo_file(
        "[workers.agents.\"bob@t\"]\nmodel = \"a\"\n[workers.agents.\"amy@t\"]\nmodel = \"b\"\n",
    );
    let calls = std::cell::Cell::new(0);
    let trusted = |_: &Path| {
        calls.set(calls.get() + 1);
        true
    };
    let text = format!("{BOB}[workers.agents.\"amy@t\"]\ncwd = \"REPO\"\n");
    let c = f.parse_trusting(&text, &trusted).unwrap();
    assert_eq!(calls.get(), 1);
    let models: Vec<_> = c.agents.values().map(|a| a.model.as_deref()).collect();
    assert_eq!(models, [Some("b"), Some("a")]);
}

#[test]
fn an_unquoted_agent_name_is_a_syntax_error_with_a_hint() {
    let f = Fixture::new();
    let msg = f.err("[workers]\n[workers.agents.bob@t]\ncwd = \"REPO\"\n", "w.toml", 2);
    assert!(msg.contains("invalid unquoted key"), "{msg}");
    assert!(
        msg.contains("agent names need quotes: `[workers.agents.\"bob@myteam\"]`"),
        "{msg}"
    );
}

#[test]
fn a_template_that_would_multiply_a_mail_is_refused_at_its_line() {
    let f = Fixture::new();
    // 20,000 `{message}`s would make a 16 KiB mail a prompt of 1.3 GiB.
    let many = "{message}".repeat(20_000);
    let msg = f.err(&format!("{BOB}prompt_template = \"{many}\"\n"), "w.toml", 3);
    assert!(msg.contains("`prompt_template` is 180000 bytes"), "{msg}");
    let file = f.write_repo_file(&format!(
        "[workers.agents.\"bob@t\"]\n\nprompt_template = \"{many}\"\n"
    ));
    let msg = f.err(BOB, &file.display().to_string(), 3);
    assert!(msg.contains("at most 16384"), "{msg}");
    std::fs::remove_file(&file).unwrap();
    // Short, but the mail twice.
    let msg = f.err(
        &format!("{BOB}prompt_template = \"{{message}}\\n{{message}}\"\n"),
        "w.toml",
        3,
    );
    assert!(msg.contains("`{message}` 2 times"), "{msg}");
    // At the limit is fine.
    let longest = format!("{}{{message}}", "x".repeat(MAX_TEMPLATE_BYTES - 9));
    let c = f
        .parse(&format!("{BOB}prompt_template = \"{longest}\"\n"))
        .unwrap();
    assert_eq!(c.agents[&bob()].prompt_template.len(), MAX_TEMPLATE_BYTES);
    f.err(&format!("{BOB}prompt_template = \"x{longest}\"\n"), "w.toml", 3);
}

#[test]
fn mail_from_non_members_is_refused_unless_the_machine_file_says_otherwise() {
    let f = Fixture::new();
    assert!(!f.parse(BOB).unwrap().agents[&bob()].accept_from_non_members);
    let c = f
        .parse(&format!("{BOB}accept_from_non_members = true\n"))
        .unwrap();
    assert!(c.agents[&bob()].accept_from_non_members);
    let msg = f.err(&format!("{BOB}accept_from_non_members = \"yes\"\n"), "w.toml", 3);
    assert!(msg.contains("must be `true` or `false`"), "{msg}");
    // Who may give the agent work is not the repository's to say.
    let file = f.write_repo_file("[workers.agents.\"bob@t\"]\naccept_from_non_members = true\n");
    let msg = f.err(BOB, &file.display().to_string(), 2);
    assert!(msg.contains("may only be set in the machine file"), "{msg}");
}
