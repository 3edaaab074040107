//! Data-driven snapshot tests of the decoder: one snapshot per `tests/fixtures/*.jsonl`.
//!
//! [`check`] decodes a fixture's stdout lines, then its `.stderr` lines when present, then
//! closes the stream as a crashed process would be closed, and renders every update and signal
//! as one JSON line. Adding a fixture adds a snapshot; `INSTA_UPDATE=always cargo test -p
//! acplb-codex` (or `cargo insta review`) blesses them.
//!
//! File contents for `file_change` diffs come from an optional `<fixture>.files.json`:
//! `{"before": {path: text | null}, "after": {path: text}}` (`null`: the file did not exist).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use acplb_codex::exec::decode::{Decoder, DecoderOptions, FileTexts, OldText};
use agent_client_protocol::v1::schema::{SessionUpdate, ToolCallStatus};
use serde::Deserialize;

use crate::snapshot_all::{Fixtures, check_all};

/// The session cwd the fixtures were recorded in (rewritten from the capture's repo path).
const CWD: &str = "/workspace";

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// File texts recorded next to a fixture.
#[derive(Debug, Default, Deserialize)]
struct RecordedFiles {
    #[serde(default)]
    before: BTreeMap<String, Option<String>>,
    #[serde(default)]
    after: BTreeMap<String, String>,
}

impl FileTexts for RecordedFiles {
    fn before(&mut self, path: &Path) -> OldText {
        match self.before.get(&path.display().to_string()) {
            Some(Some(text)) => OldText::Known(text.clone()),
            Some(None) => OldText::Absent,
            None => OldText::Unknown {
                reason: "not recorded with the fixture".into(),
            },
        }
    }

    fn after(&mut self, path: &Path) -> Option<String> {
        self.after.get(&path.display().to_string()).cloned()
    }
}

/// Decodes one fixture and renders the result, one JSON line per update or signal.
fn check(jsonl: &Path) -> String {
    let mut files: RecordedFiles = match fs::read_to_string(jsonl.with_extension("files.json")) {
        Ok(text) => serde_json::from_str(&text).unwrap(),
        Err(_) => RecordedFiles::default(),
    };
    let options = DecoderOptions {
        id_prefix: "t1/".into(),
        ..DecoderOptions::new(CWD)
    };
    let mut decoder = Decoder::new(options);
    let mut rendered = Vec::new();
    let mut out = Vec::new();
    for line in fs::read_to_string(jsonl).unwrap().lines() {
        match decoder.line(line, &mut files, &mut out) {
            Ok(signal) => {
                render(&mut rendered, &mut out);
                rendered.extend(signal.map(|s| serde_json::to_string(&s).unwrap()));
            }
            Err(e) => rendered.push(format!("decode error: {e}")),
        }
    }
    if let Ok(stderr) = fs::read_to_string(jsonl.with_extension("stderr")) {
        for line in stderr.lines() {
            decoder.stderr_line(line, &mut out);
        }
        if !out.is_empty() {
            rendered.push("--- stderr ---".into());
            render(&mut rendered, &mut out);
        }
    }
    decoder.finish(&mut out);
    decoder.close_open_tool_calls(ToolCallStatus::Failed, &mut out);
    if !out.is_empty() {
        rendered.push("--- end of stream ---".into());
        render(&mut rendered, &mut out);
    }
    if !decoder.unknown_counts().is_empty() {
        rendered.push(format!("unknown types: {:?}", decoder.unknown_counts()));
    }
    rendered.join("\n") + "\n"
}

fn render(rendered: &mut Vec<String>, out: &mut Vec<SessionUpdate>) {
    rendered.extend(out.drain(..).map(|u| serde_json::to_string(&u).unwrap()));
}

#[test]
fn fixtures() {
    let fixtures = Fixtures {
        dir: fixtures_dir(),
        label: "tests/fixtures",
        snapshots: "../snapshots",
        at_least: 1,
        cwd: CWD,
        filters: &[],
    };
    check_all(&fixtures, check);
}
