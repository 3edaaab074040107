//! Per-program rules: which programs only read or search, and which of their arguments are files.

use std::path::Path;

use super::lex::Word;
use super::{FileRef, Step, basename, resolve};

/// Classifies the first stage of a pipeline (its words are all literal).
pub(super) fn classify_stage(words: &[&Word], cwd: &Path) -> Step {
    let Some((program, args)) = words.split_first() else {
        return Step::Execute;
    };
    if program.glob || program.text.contains('=') {
        return Step::Execute;
    }
    match basename(&program.text) {
        "cat" => read_files(args, &[], &[], cwd),
        "nl" => read_files(args, NL_VALUE_FLAGS, &[], cwd),
        "wc" => read_files(args, &[], &["--files0-from"], cwd),
        "head" => read_files(args, HEAD_VALUE_FLAGS, &[], cwd),
        "tail" => read_files(args, TAIL_VALUE_FLAGS, TAIL_FORBIDDEN, cwd),
        "less" | "more" if args.iter().all(|a| !a.text.starts_with('-')) => read_files(args, &[], &[], cwd),
        "sed" => sed(args, cwd),
        "rg" if !has_flag(args, &["--pre", "--pre-glob"]) => Step::Search,
        "grep" | "egrep" | "fgrep" | "ls" => Step::Search,
        "find" if !has_flag(args, FIND_FORBIDDEN) => Step::Search,
        "fd" | "fdfind" if !has_flag(args, FD_FORBIDDEN) => Step::Search,
        "git" => git(args),
        "cd" => cd(args, cwd),
        _ => Step::Execute,
    }
}

/// Whether a later pipeline stage only filters what it is given (`| head -20`, `| sed -n 1,9p`).
pub(super) fn is_filter(words: &[&Word]) -> bool {
    let Some((program, args)) = words.split_first() else {
        return false;
    };
    let no_files = |value_flags: &[&str], forbidden: &[&str]| {
        split_args(args, value_flags, forbidden).is_some_and(|positional| positional.is_empty())
    };
    match basename(&program.text) {
        "head" => no_files(HEAD_VALUE_FLAGS, &[]),
        "tail" => no_files(TAIL_VALUE_FLAGS, TAIL_FORBIDDEN),
        "wc" | "cat" => no_files(&[], &["--files0-from"]),
        "nl" => no_files(NL_VALUE_FLAGS, &[]),
        "sort" => no_files(
            &["-k", "-t", "-S", "-T"],
            &["-o", "--output", "--compress-program"],
        ),
        "uniq" => no_files(&["-f", "-s", "-w"], &[]),
        "grep" | "egrep" | "fgrep" => split_args(args, &["-A", "-B", "-C", "-m", "-e"], &["-f", "--file"])
            .is_some_and(|positional| positional.len() <= 1),
        "sed" => sed_parts(args).is_some_and(|(_, files)| files.is_empty()),
        _ => false,
    }
}

const NL_VALUE_FLAGS: &[&str] = &["-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"];
const HEAD_VALUE_FLAGS: &[&str] = &["-n", "-c", "--lines", "--bytes"];
const TAIL_VALUE_FLAGS: &[&str] = &["-n", "-c", "--lines", "--bytes"];
/// `tail -f` never ends and `--pid`/`-s` only make sense with it.
const TAIL_FORBIDDEN: &[&str] = &[
    "-f",
    "-F",
    "--follow",
    "--retry",
    "--pid",
    "-s",
    "--sleep-interval",
];
const FIND_FORBIDDEN: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
];
const FD_FORBIDDEN: &[&str] = &["-x", "-X", "--exec", "--exec-batch"];

/// Splits arguments into positional ones, skipping flags and the values of `value_flags`.
/// Returns `None` when a `forbidden` flag is present (as `-f`, `--flag`, `--flag=x`, or inside a
/// bundle of short flags like `-nf`).
fn split_args<'w>(args: &[&'w Word], value_flags: &[&str], forbidden: &[&str]) -> Option<Vec<&'w Word>> {
    let mut positional = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let text = arg.text.as_str();
        if text == "--" {
            positional.extend(iter.by_ref());
            break;
        }
        if !text.starts_with('-') || text == "-" {
            positional.push(*arg);
            continue;
        }
        if is_forbidden(text, forbidden) {
            return None;
        }
        if value_flags.contains(&text) {
            iter.next()?;
        }
    }
    Some(positional)
}

fn is_forbidden(flag: &str, forbidden: &[&str]) -> bool {
    let name = flag.split_once('=').map_or(flag, |(name, _)| name);
    if forbidden.contains(&name) {
        return true;
    }
    // A bundle of short flags (`-nf`) contains each letter as a flag; numbers (`-20`) do not.
    if !flag.starts_with("--") && flag.len() > 2 && !flag[1..].starts_with(|c: char| c.is_ascii_digit()) {
        return flag[1..].chars().any(|c| {
            forbidden
                .iter()
                .any(|f| f.len() == 2 && f.starts_with('-') && f.ends_with(c))
        });
    }
    false
}

fn has_flag(args: &[&Word], flags: &[&str]) -> bool {
    args.iter()
        .any(|a| a.text.starts_with('-') && is_forbidden(&a.text, flags))
}

fn read_files(args: &[&Word], value_flags: &[&str], forbidden: &[&str], cwd: &Path) -> Step {
    match split_args(args, value_flags, forbidden) {
        Some(files) => read_step(&files, None, cwd),
        None => Step::Execute,
    }
}

/// A read of `files`; reading stdin (no file, or `-`) is not a file read.
fn read_step(files: &[&Word], line: Option<u32>, cwd: &Path) -> Step {
    if files.is_empty() || files.iter().any(|f| f.text == "-") {
        return Step::Execute;
    }
    let refs = files
        .iter()
        .filter(|f| !f.glob)
        .map(|f| FileRef {
            path: resolve(cwd, &f.text),
            line,
        })
        .collect();
    Step::Read(refs)
}

/// `sed -n '<address>p' FILE...` is a read; any other `sed` may edit (`-i`, `w`, `e`).
fn sed(args: &[&Word], cwd: &Path) -> Step {
    let Some((scripts, files)) = sed_parts(args) else {
        return Step::Execute;
    };
    if files.iter().any(|f| f.glob) {
        return Step::Execute;
    }
    let line = match scripts.as_slice() {
        [script] => first_line(script),
        _ => None,
    };
    read_step(&files, line, cwd)
}

/// Splits `sed` arguments into print-only scripts and files, or `None` for anything else.
fn sed_parts<'w>(args: &[&'w Word]) -> Option<(Vec<&'w str>, Vec<&'w Word>)> {
    let mut quiet = false;
    let mut scripts = Vec::new();
    let mut rest = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let text = arg.text.as_str();
        match text {
            "-n" | "--quiet" | "--silent" => quiet = true,
            "-E" | "-r" | "--regexp-extended" => {}
            "-e" | "--expression" => scripts.push(iter.next()?.text.as_str()),
            _ if text.starts_with('-') && text.len() > 1 => {
                if !text[1..].bytes().all(|b| matches!(b, b'n' | b'E' | b'r')) {
                    return None;
                }
                quiet |= text.contains('n');
            }
            _ => rest.push(*arg),
        }
    }
    if scripts.is_empty() {
        scripts.push(rest.first()?.text.as_str());
        rest.remove(0);
    }
    (quiet && scripts.iter().all(|s| is_print_script(s))).then_some((scripts, rest))
}

/// `10p`, `1,200p`, `$p`, `5,+3p`, `1p;3p`: line addresses followed by `p`, nothing else.
fn is_print_script(script: &str) -> bool {
    script
        .split(';')
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .all(|command| {
            command.strip_suffix('p').is_some_and(|address| {
                !address.is_empty()
                    && address
                        .bytes()
                        .all(|b| b.is_ascii_digit() || matches!(b, b',' | b'$' | b'+'))
            })
        })
        && script.contains('p')
}

fn first_line(script: &str) -> Option<u32> {
    let digits: String = script.trim().chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// `git grep` and `git ls-files` search; `-O`/`--open-files-in-pager` would run a program.
fn git(args: &[&Word]) -> Step {
    let mut iter = args
        .iter()
        .map(|a| a.text.as_str())
        .skip_while(|a| *a == "--no-pager");
    match iter.next() {
        Some("grep") if !iter.any(|a| a.starts_with("-O") || a.starts_with("--open-files-in-pager")) => {
            Step::Search
        }
        Some("ls-files") => Step::Search,
        _ => Step::Execute,
    }
}

fn cd(args: &[&Word], cwd: &Path) -> Step {
    match args {
        [dir] if !dir.glob && dir.text != "-" => Step::Cd(resolve(cwd, &dir.text)),
        _ => Step::Execute,
    }
}
