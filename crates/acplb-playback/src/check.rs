//! `playback check`: replays scenarios and compares their output with `[expect] output`; with
//! `--bless`, rewrites that table instead.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::PlaybackError;
use crate::replay::{self, ReplayOptions};
use crate::scenario::{Scenario, lint, toml_out};

/// How one scenario fared.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// The output matched.
    Passed,
    /// The output differed (a unified diff, expected → actual).
    Failed {
        /// The diff.
        diff: String,
        /// Notes from the replay (client stopped early, stand-in problems).
        notes: Vec<String>,
        /// The end of acplb's stderr.
        acplb_stderr: String,
    },
    /// The expectation was rewritten (`--bless`).
    Blessed {
        /// Whether it changed.
        changed: bool,
    },
    /// The scenario could not be loaded or replayed.
    Error(String),
}

/// The result for one file.
#[derive(Debug, Clone)]
pub struct CheckResult {
    /// The scenario file.
    pub path: PathBuf,
    /// What happened.
    pub outcome: Outcome,
    /// Lint warnings (`FILE:LINE: ...`).
    pub warnings: Vec<String>,
    /// Load plus replay time.
    pub elapsed: Duration,
}

impl CheckResult {
    /// Whether this counts as passed (blessed counts as passed).
    pub fn passed(&self) -> bool {
        matches!(self.outcome, Outcome::Passed | Outcome::Blessed { .. })
    }
}

/// The scenario files named by `paths`: files as given, directories' `*.toml`, sorted.
pub fn scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, PlaybackError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(PlaybackError::io(path))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "toml") && p.is_file())
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

/// Checks (or blesses) one scenario file.
pub async fn check_file(path: &Path, opts: &ReplayOptions, bless: bool) -> CheckResult {
    let started = Instant::now();
    let mut result = CheckResult {
        path: path.to_path_buf(),
        outcome: Outcome::Passed,
        warnings: Vec::new(),
        elapsed: Duration::ZERO,
    };
    result.outcome = match Scenario::load(path) {
        Err(e) => Outcome::Error(e.to_string()),
        Ok(scenario) => {
            result.warnings = lint::warnings(&scenario)
                .into_iter()
                .map(|w| format!("{}:{}: {}", path.display(), w.line, w.message))
                .collect();
            match replay::replay(&scenario, opts).await {
                Err(e) => Outcome::Error(e.to_string()),
                // A replay that went off the recording (an answer Codex never got, a message
                // it never saw) would bless output the recorded Codex side cannot produce.
                Ok(replay) if bless && !replay.notes.is_empty() => Outcome::Error(format!(
                    "not blessed: the replay did not go as recorded (re-record the scenario if acplb is right):\n  {}",
                    replay.notes.join("\n  ")
                )),
                Ok(replay) if bless => match bless_file(path, &scenario, &replay.output) {
                    Ok(changed) => Outcome::Blessed { changed },
                    Err(e) => Outcome::Error(e.to_string()),
                },
                Ok(replay) if replay.output == scenario.expect => Outcome::Passed,
                Ok(replay) => Outcome::Failed {
                    diff: diff(&scenario.expect, &replay.output, path),
                    notes: replay.notes,
                    acplb_stderr: replay.acplb_stderr,
                },
            }
        }
    };
    result.elapsed = started.elapsed();
    result
}

/// A unified diff of expected and actual output, one message per line.
pub fn diff(expected: &[String], actual: &[String], path: &Path) -> String {
    let (a, b) = (join(expected), join(actual));
    similar::TextDiff::from_lines(&a, &b)
        .unified_diff()
        .context_radius(2)
        .header(&format!("{} [expect] output", path.display()), "replay output")
        .to_string()
}

fn join(lines: &[String]) -> String {
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// Rewrites the `[expect]` table of `path` with `output`; returns whether it changed.
pub fn bless_file(path: &Path, scenario: &Scenario, output: &[String]) -> Result<bool, PlaybackError> {
    if scenario.expect == output {
        return Ok(false);
    }
    let text = std::fs::read_to_string(path).map_err(PlaybackError::io(path))?;
    let updated = replace_expect(&text, output);
    // Never leave a file playback cannot read back.
    Scenario::parse(&updated, path)?;
    std::fs::write(path, updated).map_err(PlaybackError::io(path))?;
    Ok(true)
}

/// `text` with its `[expect]` table replaced (or appended when there is none).
pub fn replace_expect(text: &str, output: &[String]) -> String {
    let section = toml_out::expect_section(output);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let Some(start) = lines.iter().position(|l| l.trim() == "[expect]") else {
        return format!("{}{section}", text.trim_end_matches('\n').to_owned() + "\n");
    };
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.starts_with('['))
        .map_or(lines.len(), |i| start + 1 + i);
    // Keep what came before, including the comment above `[expect]`.
    let table = section
        .find("[expect]")
        .map_or(section.as_str(), |i| &section[i..]);
    let mut out: String = lines[..start].concat();
    out.push_str(table);
    if end < lines.len() {
        out.push('\n');
        out.push_str(&lines[end..].concat());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_expect_keeps_the_rest() {
        let text = "version = 1\n# comment\n[expect]\noutput = [\n  'old',\n]\n";
        let got = replace_expect(text, &["new".to_owned()]);
        assert_eq!(got, "version = 1\n# comment\n[expect]\noutput = [\n  'new',\n]\n");
        let text = "version = 1\n[expect]\noutput = []\n[[codex]]\nturn = 1\n";
        let got = replace_expect(text, &["x".to_owned()]);
        assert_eq!(
            got,
            "version = 1\n[expect]\noutput = [\n  'x',\n]\n\n[[codex]]\nturn = 1\n"
        );
        let got = replace_expect("version = 1", &[]);
        assert!(got.starts_with("version = 1\n\n# What"), "{got}");
    }

    #[test]
    fn diff_is_unified_per_line() {
        let d = diff(
            &["a".into(), "b".into()],
            &["a".into(), "c".into()],
            Path::new("s.toml"),
        );
        assert!(d.contains("--- s.toml [expect] output"), "{d}");
        assert!(d.contains("-b\n+c"), "{d}");
    }
}
