//! Unit tests of shell unwrapping and command classification.

use std::path::{Path, PathBuf};

use super::*;

const CWD: &str = "/workspace";

fn class(script: &str) -> CommandClass {
    classify(script, Path::new(CWD))
}

fn read(paths: &[(&str, Option<u32>)]) -> CommandClass {
    CommandClass::Read(
        paths
            .iter()
            .map(|(p, line)| FileRef {
                path: PathBuf::from(p),
                line: *line,
            })
            .collect(),
    )
}

#[test]
fn unwraps_the_bash_wrapper() {
    let cases = [
        ("/bin/bash -lc 'ls -la'", "ls -la"),
        ("/bin/bash -lc ls", "ls"),
        ("bash -c 'echo hi'", "echo hi"),
        ("/bin/zsh -lc 'cat a.txt'", "cat a.txt"),
        ("/bin/sh -l -c 'pwd'", "pwd"),
        (r"/bin/bash -lc 'echo '\''quoted'\'' word'", "echo 'quoted' word"),
        (r#"/bin/bash -lc "echo \"hi\" \$HOME""#, r#"echo "hi" $HOME"#),
        (
            "/bin/bash -lc 'ls /definitely/not/here; exit 3'",
            "ls /definitely/not/here; exit 3",
        ),
        ("/bin/bash -lc 'line one\nline two'", "line one\nline two"),
        // Not a wrapper: returned as is.
        ("ls -la", "ls -la"),
        ("/bin/bash script.sh", "/bin/bash script.sh"),
        ("/bin/bash -lc 'a' 'b'", "/bin/bash -lc 'a' 'b'"),
        ("python3 -c 'print(1)'", "python3 -c 'print(1)'"),
        ("/bin/bash -lc 'unterminated", "/bin/bash -lc 'unterminated"),
        ("", ""),
    ];
    for (command, script) in cases {
        assert_eq!(unwrap_shell(command), script, "{command}");
    }
}

#[test]
fn plain_single_quoted_scripts_are_borrowed() {
    assert!(matches!(
        unwrap_shell("/bin/bash -lc 'ls -la'"),
        Cow::Borrowed("ls -la")
    ));
}

#[test]
fn reads() {
    let cases = [
        ("cat README.md", read(&[("/workspace/README.md", None)])),
        (
            "cat -n a.txt b/c.txt",
            read(&[("/workspace/a.txt", None), ("/workspace/b/c.txt", None)]),
        ),
        (
            "head -n 20 src/main.rs",
            read(&[("/workspace/src/main.rs", None)]),
        ),
        ("head -20 /etc/hosts", read(&[("/etc/hosts", None)])),
        ("tail -n +5 log.txt", read(&[("/workspace/log.txt", None)])),
        (
            "sed -n '10,20p' src/lib.rs",
            read(&[("/workspace/src/lib.rs", Some(10))]),
        ),
        ("sed -n 1,200p ../x.rs", read(&[("/x.rs", Some(1))])),
        ("sed -n -e '5p' -e '9p' f", read(&[("/workspace/f", None)])),
        ("nl -ba main.py", read(&[("/workspace/main.py", None)])),
        ("nl -b a main.py", read(&[("/workspace/main.py", None)])),
        (
            "nl -ba main.py | sed -n '1,120p'",
            read(&[("/workspace/main.py", None)]),
        ),
        (
            "wc -l a b",
            read(&[("/workspace/a", None), ("/workspace/b", None)]),
        ),
        ("less notes.md", read(&[("/workspace/notes.md", None)])),
        ("cat a.txt 2>/dev/null", read(&[("/workspace/a.txt", None)])),
        ("cd src && cat lib.rs", read(&[("/workspace/src/lib.rs", None)])),
        ("cat ./a/../b.txt", read(&[("/workspace/b.txt", None)])),
        (
            "cat a && head b",
            read(&[("/workspace/a", None), ("/workspace/b", None)]),
        ),
        ("cat 'my file.txt'", read(&[("/workspace/my file.txt", None)])),
        ("cat *.md", read(&[])),
        ("cat README.md | head -5", read(&[("/workspace/README.md", None)])),
        ("/usr/bin/cat x", read(&[("/workspace/x", None)])),
    ];
    for (script, expected) in cases {
        assert_eq!(class(script), expected, "{script}");
    }
}

#[test]
fn searches() {
    for script in [
        "rg -n foo src",
        "rg --files",
        "grep -rn 'fn main' .",
        "find . -name '*.rs'",
        "fd -e rs",
        "ls",
        "ls -la",
        "git grep -n TODO",
        "git --no-pager grep x",
        "git ls-files",
        "rg foo | head -20",
        "rg -l foo | sort | uniq",
        "rg foo 2>/dev/null",
        "ls && cat README.md",
        "cd src && rg foo",
        "grep -r x . | grep -v test",
    ] {
        assert_eq!(class(script), CommandClass::Search, "{script}");
    }
}

#[test]
fn executes() {
    for script in [
        "echo hi > sandbox-test.txt && cat sandbox-test.txt",
        "ls /definitely/not/here; exit 3",
        "sleep 30; echo done",
        "cargo test",
        "python3 main.py",
        "sed -i 's/a/b/' f",
        "sed 's/a/b/' f",
        "sed -n '1w out' f",
        "sed -n 1p",
        "cat",
        "cat -",
        "cat a | python3",
        "cat a | xargs rm",
        "cat a > b",
        "cat a >> b",
        "cat < a",
        "rg --pre ./x foo",
        "rg --pre=./x foo",
        "find . -name x -delete",
        "find . -exec rm {} ;",
        "fd -x rm",
        "fd -HIx rm",
        "git status",
        "git grep -O vim x",
        "git commit -m x",
        "tail -f log",
        "tail -fn 5 log",
        "less -o out file",
        "cat $HOME/x",
        "cat ~/x",
        "cat \"$FILE\"",
        "echo $(id)",
        "cat `which ls`",
        "FOO=1 cat a",
        "cd src",
        "cd $X && cat a",
        "cd src | cat",
        "rg foo | sort -o out",
        "rg foo | head -n 5 file",
        "cat a | tee b",
        "rg x &",
        "(cat a)",
        "cat <<EOF\nx\nEOF",
        "wc --files0-from=list",
        "sed -n '1,5p' *.rs",
        "",
        "   ",
    ] {
        assert_eq!(class(script), CommandClass::Execute, "{script:?}");
    }
}
