//! What a shell command Codex ran is: the script without its `bash -lc` wrapper, and whether it
//! only reads files, searches, or does anything else.
//!
//! The classification decides the ACP tool kind an editor shows. It is deliberately
//! conservative: a command is `Read` or `Search` only when every part of it is a known
//! read-only program with known-safe arguments; anything else (writes, redirections into files,
//! unknown programs, expansions that could inject flags) is `Execute`.

mod lex;
mod programs;

use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

use lex::{Op, Token, Word, lex};

/// A file a read-only command looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRef {
    /// Absolute path (resolved against the session cwd and any `cd` in the command).
    pub path: PathBuf,
    /// First line read, when the command says (`sed -n '10,20p' f` reads from line 10).
    pub line: Option<u32>,
}

/// What a command does, as far as its text tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandClass {
    /// Only reads these files (`cat`, `head`, `tail`, `sed -n`, `nl`, `less`, `wc`).
    Read(Vec<FileRef>),
    /// Only searches or lists (`rg`, `grep`, `find`, `fd`, `ls`, `git grep`).
    Search,
    /// Anything else.
    Execute,
}

/// Returns the script inside a `/bin/bash -lc '<script>'` style wrapper, or `command` itself
/// when it is not wrapped that way.
///
/// Codex reports commands as the shell-quoted argv it spawned; quoting is undone here
/// (including the `'\''` idiom for a quote inside single quotes). The common case, one plain
/// single-quoted script, is borrowed.
pub fn unwrap_shell(command: &str) -> Cow<'_, str> {
    if let Some(range) = shell_script(command) {
        return Cow::Borrowed(&command[range]);
    }
    let Some(tokens) = lex(command) else {
        return Cow::Borrowed(command);
    };
    match only_words(&tokens).as_deref() {
        Some([shell, flags @ .., script])
            if is_shell(shell)
                && is_command_flag(&flags.iter().map(|f| f.text.as_str()).collect::<Vec<_>>()) =>
        {
            Cow::Owned(script.text.clone())
        }
        _ => Cow::Borrowed(command),
    }
}

fn only_words(tokens: &[Token]) -> Option<Vec<&Word>> {
    tokens
        .iter()
        .map(|t| match t {
            Token::Word(w) => Some(w),
            Token::Op(_) => None,
        })
        .collect()
}

/// When the wrapper's script is one plain single-quoted string without embedded quotes, the
/// script is a substring of `command` and can be borrowed.
fn shell_script(command: &str) -> Option<std::ops::Range<usize>> {
    let rest = command.strip_suffix('\'')?;
    let open = rest.find(" '")? + 2;
    let script = &rest[open..];
    if script.contains('\'') {
        return None;
    }
    let head = &command[..open - 1];
    // The head is plain words (`/bin/bash -lc`) in every command Codex reports.
    if head
        .bytes()
        .any(|b| !(b.is_ascii_alphanumeric() || b"/-_. ".contains(&b)))
    {
        return None;
    }
    let mut words = head.split_ascii_whitespace();
    let shell = words.next()?;
    let flags: Vec<&str> = words.collect();
    (is_shell_name(shell) && is_command_flag(&flags)).then_some(open..rest.len())
}

fn is_shell(word: &Word) -> bool {
    word.literal && is_shell_name(&word.text)
}

fn is_shell_name(program: &str) -> bool {
    matches!(basename(program), "bash" | "sh" | "zsh" | "dash" | "ksh")
}

/// `-c`, `-lc`, `-cl` or `-l -c`: the flags before a `-c` script.
fn is_command_flag<S: AsRef<str>>(flags: &[S]) -> bool {
    !flags.is_empty()
        && flags.iter().map(AsRef::as_ref).all(|f: &str| {
            f.len() > 1 && f.starts_with('-') && f[1..].bytes().all(|b| b == b'l' || b == b'c')
        })
        && flags.last().is_some_and(|f| f.as_ref().contains('c'))
}

/// Classifies a script (already unwrapped) run in `cwd`.
pub fn classify(script: &str, cwd: &Path) -> CommandClass {
    let Some(tokens) = lex(script) else {
        return CommandClass::Execute;
    };
    let mut cwd = cwd.to_path_buf();
    let mut files = Vec::new();
    let mut searched = false;
    let mut acted = false;
    for segment in tokens.split(|t| matches!(t, Token::Op(Op::Seq | Op::And | Op::Or))) {
        if segment.is_empty() {
            continue;
        }
        match classify_pipeline(segment, &cwd) {
            Step::Read(more) => {
                files.extend(more);
                acted = true;
            }
            Step::Search => {
                searched = true;
                acted = true;
            }
            Step::Cd(dir) => cwd = dir,
            Step::Execute => return CommandClass::Execute,
        }
    }
    match (acted, searched) {
        (false, _) => CommandClass::Execute,
        (true, true) => CommandClass::Search,
        (true, false) => {
            files.dedup();
            CommandClass::Read(files)
        }
    }
}

/// What one pipeline (`a | b | c`) of a command does.
#[derive(Debug)]
pub(crate) enum Step {
    Read(Vec<FileRef>),
    Search,
    Cd(PathBuf),
    Execute,
}

fn classify_pipeline(tokens: &[Token], cwd: &Path) -> Step {
    let mut stages = Vec::new();
    for stage in tokens.split(|t| matches!(t, Token::Op(Op::Pipe))) {
        let mut words = Vec::new();
        for token in stage {
            match token {
                Token::Word(w) => words.push(w),
                Token::Op(Op::Redirect { harmless: true }) => {}
                Token::Op(_) => return Step::Execute,
            }
        }
        if words.is_empty() || words.iter().any(|w| !w.literal) {
            return Step::Execute;
        }
        stages.push(words);
    }
    let Some((first, filters)) = stages.split_first() else {
        return Step::Execute;
    };
    if !filters.iter().all(|f| programs::is_filter(f)) {
        return Step::Execute;
    }
    let step = programs::classify_stage(first, cwd);
    if matches!(step, Step::Cd(_)) && !filters.is_empty() {
        return Step::Execute;
    }
    step
}

/// The file name part of a program path (`/usr/bin/cat` → `cat`).
pub(crate) fn basename(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// Joins `path` to `cwd` and removes `.` and `..` without touching the file system.
pub(crate) fn resolve(cwd: &Path, path: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for component in cwd.join(path).components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests;
