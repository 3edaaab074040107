//! Errors the ACP SDK answers by itself (a malformed request, an unknown method) carry a bare
//! title as their `message` ("Invalid params") and the reason in `data`, which editors do not
//! show. On their way to stdout such errors get the reason into the message and a stable
//! `data.reason` ([`Reason`]); acplb's own errors already have both (`error/wire.rs`) and pass
//! unchanged.

use serde_json::{Map, Value};

use crate::error::Reason;

/// The titles the SDK uses as messages, and the reason each gets.
const TITLES: [(&str, Reason); 5] = [
    ("Parse error", Reason::ParseError),
    ("Invalid request", Reason::InvalidRequest),
    ("Method not found", Reason::MethodNotFound),
    ("Invalid params", Reason::InvalidParams),
    ("Internal error", Reason::Internal),
];

/// `line` with an explained error message and a `data.reason`, or `None` when it needs
/// nothing.
pub(crate) fn explain(line: &str) -> Option<String> {
    // Cheap test first: only error responses can need it, and they are rare.
    if !line.contains(r#""error":{"#) {
        return None;
    }
    let mut message: Value = serde_json::from_str(line).ok()?;
    let error = message.get_mut("error")?.as_object_mut()?;
    let title = error.get("message")?.as_str()?.to_owned();
    let (_, sdk_reason) = TITLES.iter().find(|(t, _)| *t == title)?;
    if let Some(why) = reason(&title, error.get("data")) {
        error.insert("message".into(), Value::String(format!("{title}: {why}")));
    }
    // `data` keeps what the SDK put there (a bare value under `detail`) and gains the reason.
    let mut data = match error.remove("data") {
        Some(Value::Object(o)) => o,
        None | Some(Value::Null) => Map::new(),
        Some(other) => Map::from_iter([("detail".to_owned(), other)]),
    };
    data.entry("reason")
        .or_insert_with(|| Value::String(sdk_reason.as_str().to_owned()));
    error.insert("data".into(), Value::Object(data));
    serde_json::to_string(&message).ok()
}

fn reason(title: &str, data: Option<&Value>) -> Option<String> {
    let field = |name: &str| data?.get(name)?.as_str().map(str::to_owned);
    match data {
        // The SDK puts the offending line here: never echo it back in a message.
        _ if title == "Parse error" => Some("the line is not valid JSON; it was ignored".into()),
        Some(Value::String(s)) if title == "Method not found" => Some(format!("acplb has no method `{s}`")),
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => field("error")
            .or_else(|| field("message"))
            .or_else(|| field("reason")),
        None if title == "Invalid request" => {
            Some("not a JSON-RPC 2.0 request, notification or response".into())
        }
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message_of(line: &str) -> String {
        let out = explain(line).unwrap_or_else(|| line.to_owned());
        serde_json::from_str::<Value>(&out).unwrap()["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    #[test]
    fn sdk_errors_get_their_reason_into_the_message() {
        let cases = [
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"error":"missing field `cwd`","json":{},"phase":"deserialization"}}}"#,
                "Invalid params: missing field `cwd`",
            ),
            (
                r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found","data":"nope/x"}}"#,
                "Method not found: acplb has no method `nope/x`",
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"line":"secret stuff"}}}"#,
                "Parse error: the line is not valid JSON; it was ignored",
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request"}}"#,
                "Invalid request: not a JSON-RPC 2.0 request, notification or response",
            ),
            (
                r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid request","data":"ACP initialization must complete before `session/new` can be used"}}"#,
                "Invalid request: ACP initialization must complete before `session/new` can be used",
            ),
        ];
        for (line, want) in cases {
            assert_eq!(message_of(line), want, "{line}");
        }
    }

    #[test]
    fn sdk_errors_get_a_reason_and_keep_their_data() {
        let reason_of = |line: &str| -> Value {
            let out = explain(line).unwrap();
            serde_json::from_str::<Value>(&out).unwrap()["error"]["data"].clone()
        };
        let data = reason_of(
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found","data":"nope/x"}}"#,
        );
        assert_eq!(data["reason"], "method_not_found");
        assert_eq!(data["detail"], "nope/x");
        let data = reason_of(
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"error":"missing field `cwd`","phase":"deserialization"}}}"#,
        );
        assert_eq!(data["reason"], "invalid_params");
        assert_eq!(data["phase"], "deserialization");
        let data =
            reason_of(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#);
        assert_eq!(data["reason"], "parse_error");
        let data =
            reason_of(r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error"}}"#);
        assert_eq!(data["reason"], "internal");
    }

    #[test]
    fn explained_errors_and_other_lines_pass_unchanged() {
        for line in [
            r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"unknown session `zz`","data":{"message":"unknown session `zz`"}}}"#,
            r#"{"jsonrpc":"2.0","method":"session/update","params":{"update":{"rawOutput":{"error":{"message":"Invalid params"}}}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        ] {
            assert_eq!(explain(line), None, "{line}");
        }
    }
}
