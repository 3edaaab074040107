//! Which lines the stand-in hands over one at a time, and its state files.

use super::*;
use crate::scenario::ProviderEvent;

fn run_of(kinds: &str) -> ProviderRun {
    let events = kinds
        .chars()
        .map(|c| {
            let kind = match c {
                'o' => EventKind::Stdout("{}".into()),
                'e' => EventKind::Stderr("warn".into()),
                'w' => EventKind::Write {
                    path: "a".into(),
                    text: String::new(),
                },
                _ => EventKind::Delete { path: "a".into() },
            };
            ProviderEvent {
                t_ms: 0,
                kind,
                line: 0,
            }
        })
        .collect();
    ProviderRun {
        session: "s".into(),
        turn: 1,
        events,
        end: End::Exit(0),
        line: 0,
    }
}

/// `o` stdout, `e` stderr, `w` write, `d` delete → `1` where the line waits to be read.
#[test]
fn lines_before_a_switch_of_pipe_wait() {
    let cases = [
        ("ooo", "000"),
        ("eee", "000"),
        ("eoo", "100"),
        ("ooe", "110"),
        ("oeoe", "1110"),
        ("ooweo", "11010"),
        ("eodo", "1100"),
        ("", ""),
    ];
    for (kinds, expected) in cases {
        let got: String = plan(&run_of(kinds))
            .iter()
            .map(|w| if *w { '1' } else { '0' })
            .collect();
        assert_eq!(got, expected, "{kinds}");
    }
}

#[test]
fn state_round_trip_and_claims() {
    let dir = tempfile::tempdir().unwrap();
    let state = State {
        scenario: "s.toml".into(),
        cwd: "/w".into(),
        speed: Speed::Real,
        runs: vec![run_of("oe")],
        transport: Transport::Exec,
        app_servers: Vec::new(),
    };
    write_state(dir.path(), &state).unwrap();
    let text = std::fs::read_to_string(dir.path().join("state.json")).unwrap();
    let back: State = serde_json::from_str(&text).unwrap();
    assert_eq!(back.runs, state.runs);
    assert_eq!(back.speed, Speed::Real);
    assert_eq!(
        (claim(dir.path(), "").unwrap(), claim(dir.path(), "").unwrap()),
        (1, 2)
    );
    assert_eq!(claim(dir.path(), "app-server-").unwrap(), 1);
    std::fs::write(
        dir.path().join("seen/1.json"),
        r#"{"argv":["exec"],"stdin_bytes":3}"#,
    )
    .unwrap();
    let seen = read_seen(dir.path());
    assert_eq!((seen.len(), seen[0].stdin_bytes), (1, 3));
    note(dir.path(), "first");
    note(dir.path(), "second");
    assert_eq!(read_notes(dir.path()), ["first", "second"]);
}
