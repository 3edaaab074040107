//! A malformed `JetBrains` AIR declaration (ADR 0049) breaks nothing: a `_meta.jetbrains.air`
//! that is not an object (a string, an array, `null`, or `jetbrains` itself a string) leaves the
//! client plain, with not one AIR key in what it sees; an object with a wrong `version`, a
//! `capabilities` that is not an array, or names acplb does not know is an AIR client that
//! declared nothing it can use: its modes have their kinds, its edits stay plain diffs. Every
//! session opens, and a prompt runs to its end.

use serde_json::{Value, json};

use crate::air::{diffs, has_air_keys, run};
use crate::live::Live;
use crate::terminal_output::caps;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_air_declaration_falls_back_to_plain_behaviour() {
    let mut live = Live::start();
    for meta in [
        json!({ "jetbrains": { "air": "diffPatch" } }),
        json!({ "jetbrains": { "air": ["diffPatch"] } }),
        json!({ "jetbrains": { "air": null } }),
        json!({ "jetbrains": "air" }),
    ] {
        let seen = run(&mut live, caps(meta.clone()), None).await;
        assert!(!has_air_keys(&seen.init), "{meta}: {}", seen.init);
        assert!(!has_air_keys(&seen.session), "{meta}: {}", seen.session);
        assert!(
            !has_air_keys(&Value::Array(seen.updates.clone())),
            "{meta}: {:?}",
            seen.updates
        );
    }
    for air in [
        json!({ "version": 1, "capabilities": "diffPatch" }),
        json!({ "version": 1, "capabilities": [42, { "diffPatch": true }, null, "noSuchCapability"] }),
        json!({ "version": 0, "capabilities": ["diffPatch"] }),
    ] {
        let seen = run(&mut live, caps(json!({ "jetbrains": { "air": air } })), None).await;
        assert!(
            has_air_keys(&seen.session),
            "{air}: an AIR client still: {}",
            seen.session
        );
    }
    let wrong_version = json!({ "jetbrains": { "air": { "version": "1", "capabilities": ["diffPatch"] } } });
    let seen = run(&mut live, caps(wrong_version), Some("scenario:patch edit")).await;
    let diffs = diffs(&seen.updates);
    assert!(!diffs.is_empty(), "the edit ran: {:?}", seen.updates);
    assert!(
        !has_air_keys(&Value::Array(diffs.clone())),
        "no patch without a version: {diffs:?}"
    );
}
