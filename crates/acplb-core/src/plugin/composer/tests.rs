//! Tests of `composer.rs`.

use super::*;
use crate::plugin::registry::{BuildContext, Built, PluginFactory};

struct Fake;
impl PluginFactory for Fake {
    fn id(&self) -> &'static str {
        "atm-identity"
    }
    fn description(&self) -> &'static str {
        "test"
    }
    fn params(&self) -> &'static [ParamSpec] {
        &[
            ParamSpec {
                name: "identity",
                kind: ParamKind::String,
                doc: "the agent name",
            },
            ParamSpec {
                name: "team",
                kind: ParamKind::String,
                doc: "the team",
            },
        ]
    }
    fn build(&self, _: &PluginParams, _: &BuildContext) -> Result<Built, String> {
        Err("unused".into())
    }
}

fn reg() -> Registry {
    Registry::default().with(Fake)
}

#[test]
fn valid_file_keeps_order_values_and_origins() {
    let text = "# team\n[[plugin]]\nid = \"atm-identity\"\nrequired = true\nidentity = \"arch\"\n";
    let got = parse(text, "c.toml", &reg()).unwrap();
    assert_eq!(got.len(), 1);
    assert!(got[0].required);
    assert_eq!(got[0].line, 2);
    assert_eq!(got[0].params.str("identity"), Some("arch"));
    assert_eq!(got[0].params.origin("identity"), Some("c.toml:5"));
}

#[test]
fn unknown_plugin_names_file_line_and_suggests() {
    let err = parse("\n[[plugin]]\nid = \"atm-identiy\"\n", "c.toml", &reg()).unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with("c.toml:3: unknown plugin `atm-identiy`"), "{msg}");
    assert!(msg.contains("did you mean `atm-identity`?"), "{msg}");
}

#[test]
fn unknown_key_and_wrong_type_are_refused_with_line() {
    let err = parse(
        "[[plugin]]\nid = \"atm-identity\"\nteem = \"x\"\n",
        "c.toml",
        &reg(),
    )
    .unwrap_err();
    assert!(
        err.to_string().starts_with("c.toml:3: unknown key `teem`"),
        "{err}"
    );
    assert!(err.to_string().contains("did you mean `team`?"), "{err}");
    let err = parse(
        "[[plugin]]\nid = \"atm-identity\"\nidentity = 3\n",
        "c.toml",
        &reg(),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("c.toml:3: `identity` of plugin `atm-identity` must be a string, not integer"),
        "{err}"
    );
}

#[test]
fn a_value_outside_a_choice_is_refused_with_a_suggestion() {
    struct Mail;
    impl PluginFactory for Mail {
        fn id(&self) -> &'static str {
            "atm-mail"
        }
        fn description(&self) -> &'static str {
            "test"
        }
        fn params(&self) -> &'static [ParamSpec] {
            &[ParamSpec {
                name: "backend",
                kind: ParamKind::OneOf(&["files", "atm-cli"]),
                doc: "where mail lives",
            }]
        }
        fn build(&self, _: &PluginParams, _: &BuildContext) -> Result<Built, String> {
            Err("unused".into())
        }
    }
    let reg = Registry::default().with(Mail);
    let err = parse(
        "[[plugin]]\nid = \"atm-mail\"\nbackend = \"atm_cli\"\n",
        "c.toml",
        &reg,
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with(
            "c.toml:3: `backend` of plugin `atm-mail` must be one of `files`, `atm-cli`, not `atm_cli`"
        ),
        "{msg}"
    );
    assert!(msg.contains("did you mean `atm-cli`?"), "{msg}");
    let ok = parse(
        "[[plugin]]\nid = \"atm-mail\"\nbackend = \"files\"\n",
        "c.toml",
        &reg,
    )
    .unwrap();
    assert_eq!(ok[0].params.str("backend"), Some("files"));
}

#[test]
fn syntax_errors_have_a_line() {
    let err = parse("[[plugin]]\nid = \n", "c.toml", &reg()).unwrap_err();
    assert!(matches!(err, ComposerError::Invalid { line: 2, .. }), "{err}");
}

#[test]
fn top_level_junk_and_missing_id_are_refused() {
    assert!(
        parse("x = 1\n", "c", &reg())
            .unwrap_err()
            .to_string()
            .contains("unknown top-level key `x`")
    );
    assert!(
        parse("[[plugin]]\nrequired = true\n", "c", &reg())
            .unwrap_err()
            .to_string()
            .contains("has no `id`")
    );
}

#[test]
fn workspace_and_user_files_are_found_only_when_they_exist() {
    let ws = tempfile::tempdir().unwrap();
    let cfg = tempfile::tempdir().unwrap();
    assert_eq!(workspace_file(ws.path()), None);
    assert_eq!(user_file(cfg.path()), None);
    std::fs::create_dir_all(cfg.path().join("acplb")).unwrap();
    std::fs::write(cfg.path().join("acplb/composer.toml"), "").unwrap();
    std::fs::write(ws.path().join("composer.toml"), "").unwrap();
    assert_eq!(workspace_file(ws.path()), Some(ws.path().join("composer.toml")));
    assert_eq!(
        user_file(cfg.path()),
        Some(cfg.path().join("acplb/composer.toml"))
    );
}

#[test]
fn a_plugin_configured_twice_is_refused_at_the_second() {
    let text = "[[plugin]]\nid = \"atm-identity\"\nidentity = \"a\"\n\n[[plugin]]\nid = \"atm-identity\"\nidentity = \"b\"\n";
    let msg = parse(text, "c.toml", &reg()).unwrap_err().to_string();
    assert!(
        msg.starts_with("c.toml:5: plugin `atm-identity` is configured twice (first at line 1)"),
        "{msg}"
    );
    assert!(msg.contains("hint: each plugin runs once per session"), "{msg}");
}

#[test]
fn out_of_range_integers_say_so_and_radixes_are_read() {
    struct Counts;
    impl PluginFactory for Counts {
        fn id(&self) -> &'static str {
            "counts"
        }
        fn description(&self) -> &'static str {
            "test"
        }
        fn params(&self) -> &'static [ParamSpec] {
            &[ParamSpec {
                name: "n",
                kind: ParamKind::PositiveInteger,
                doc: "how many",
            }]
        }
        fn build(&self, _: &PluginParams, _: &BuildContext) -> Result<Built, String> {
            Err("unused".into())
        }
    }
    let reg = Registry::default().with(Counts);
    let big = parse(
        "[[plugin]]\nid = \"counts\"\nn = 99999999999999999999\n",
        "c",
        &reg,
    )
    .unwrap_err();
    assert_eq!(
        big.to_string(),
        "c:3: `n` of plugin `counts` is too large: `99999999999999999999` (the largest integer is 9223372036854775807)\n  hint: how many"
    );
    let hex = parse("[[plugin]]\nid = \"counts\"\nn = 0x10\n", "c", &reg).unwrap();
    assert_eq!(hex[0].params.int("n"), Some(16));
    let zero = parse("[[plugin]]\nid = \"counts\"\nn = 0\n", "c", &reg).unwrap_err();
    assert!(
        zero.to_string()
            .starts_with("c:3: `n` of plugin `counts` must be at least 1, not 0"),
        "{zero}"
    );
}

#[test]
fn check_value_refuses_with_the_value_line() {
    struct Picky;
    impl PluginFactory for Picky {
        fn id(&self) -> &'static str {
            "picky"
        }
        fn description(&self) -> &'static str {
            "test"
        }
        fn params(&self) -> &'static [ParamSpec] {
            &[ParamSpec {
                name: "name",
                kind: ParamKind::String,
                doc: "a name without dots",
            }]
        }
        fn check_value(&self, _: &str, value: &toml::Value) -> Result<(), String> {
            match value.as_str() {
                Some(s) if s.contains('.') => Err("must not contain `.`".into()),
                _ => Ok(()),
            }
        }
        fn build(&self, _: &PluginParams, _: &BuildContext) -> Result<Built, String> {
            Err("unused".into())
        }
    }
    let reg = Registry::default().with(Picky);
    let err = parse("[[plugin]]\nid = \"picky\"\n\nname = \"a.b\"\n", "c", &reg).unwrap_err();
    assert_eq!(
        err.to_string(),
        "c:4: `name` of plugin `picky` must not contain `.`\n  hint: a name without dots"
    );
}

#[test]
fn invalid_utf8_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("composer.toml");
    std::fs::write(&file, b"[[plugin]]\nid = \"atm-identity\"\n# caf\xe9\n").unwrap();
    let err = load(Source::Flag(file.clone()), &reg()).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!(
            "{}:3: the file is not valid UTF-8 (byte 0xe9)",
            file.display()
        )),
        "{msg}"
    );
    assert!(msg.contains("hint: save composer.toml as UTF-8"), "{msg}");
}

#[test]
fn line_numbers_come_from_the_index() {
    let index = LineIndex::new("a\nbb\n\nc");
    let lines: Vec<usize> = (0..8).map(|o| index.line(o)).collect();
    assert_eq!(lines, [1, 1, 2, 2, 2, 3, 4, 4]);
    assert_eq!(LineIndex::new("").line(0), 1);
}
