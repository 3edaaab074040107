//! `_session/batch_get` under bad input (ADR 0043): a blank id, an id named twice, too many ids
//! and params of the wrong shape are refused with the reason in the message; no ids and only
//! unknown ids answer an empty list. Both transports.

use serde_json::json;

use crate::batch_get::batch_get;
use crate::live::Live;
use crate::sessions::initialize;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_batch_gets_are_refused_with_the_reason_and_empty_ones_answer_nothing() {
    let mut live = Live::start();
    let updates = live.updates.clone();
    let (errors, empty, unknown) = live
        .acplb
        .client(&updates, async |cx| {
            initialize(&cx).await?;
            let many: Vec<String> = (0..201).map(|i| format!("s{i}")).collect();
            let mut errors = Vec::new();
            for ids in [json!([" "]), json!(["a", "a"]), json!(many), json!("not-a-list")] {
                let e = crate::batch_get::batch_get(&cx, ids).await.expect_err("refused");
                errors.push((e.code.value(), e.message));
            }
            let empty = batch_get(&cx, json!([])).await?;
            let unknown = batch_get(&cx, json!(["nobody", "nothing"])).await?;
            Ok((errors, empty, unknown))
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}\n{}", live.acplb.stderr()));
    for (code, _) in &errors {
        assert_eq!(
            *code,
            agent_client_protocol::ErrorCode::INVALID_PARAMS.value(),
            "{errors:?}"
        );
    }
    assert!(errors[0].1.contains("blank"), "{errors:?}");
    assert!(errors[1].1.contains("`a` twice"), "{errors:?}");
    assert!(errors[2].1.contains("at most 200"), "{errors:?}");
    assert!(
        errors[3].1.to_lowercase().contains("sessionids") || errors[3].1.contains("sequence"),
        "{errors:?}"
    );
    assert_eq!(empty, json!({ "sessions": [] }));
    assert_eq!(unknown, json!({ "sessions": [] }));
}
