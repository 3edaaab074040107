//! `providers/*` for Codex: the editor may send Codex's OpenAI traffic to a gateway of its own
//! (an OpenAI-compatible Responses endpoint, with the headers it needs, an API key say). Set in
//! memory only, for sessions opened after it; each such session's Codex gets a model provider of
//! acplb's, [`PROVIDER_KEY`], pointing at the gateway.
//!
//! The header values are secrets. On app-server they travel in `thread/start`'s `config` over
//! the server's stdin (never a command line) and are redacted from transcripts like MCP headers;
//! on exec each goes through Codex's environment (`env_http_headers`), emptied for the commands
//! the model runs.

use std::cell::RefCell;
use std::collections::BTreeMap;

use acplb_core::routing::ModelRouting;
use acplb_core::secrets::KnownSecrets;
use acplb_core::toml_text::{basic as toml_str, key as toml_key};
use agent_client_protocol::v1::schema::{
    LlmProtocol, ProviderCurrentConfig, ProviderId, ProviderInfo, SetProviderRequest,
};
use serde_json::{Map, Value, json};

use crate::mcp::McpConfig;

/// The one provider an editor can route: Codex's OpenAI traffic (as the TS peer names it).
pub(crate) const OPENAI: &str = "openai";

/// Where Codex's OpenAI traffic goes unless routed.
const NATIVE_BASE_URL: &str = "https://api.openai.com/v1";

/// The model provider of Codex's configuration that sessions opened after `providers/set` use.
pub(crate) const PROVIDER_KEY: &str = "acplb_gateway";

/// Prefix of the variables that carry the gateway's header values to an exec Codex.
const HANDOFF_PREFIX: &str = "ACPLB_GATEWAY_";

/// Headers a client may not set: Codex and HTTP own them.
const RESERVED: [&str; 4] = ["content-type", "content-length", "host", "transfer-encoding"];

/// A gateway the editor set.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Gateway {
    pub(crate) base_url: String,
    /// Header name → value (the values are secrets).
    pub(crate) headers: BTreeMap<String, String>,
}

/// Never shows a header value.
impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field("base_url", &self.base_url)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Gateway {
    /// The header values, for redaction wherever the session's text goes.
    pub(crate) fn secrets(&self) -> KnownSecrets {
        KnownSecrets::new(self.headers.values().filter(|v| !v.is_empty()))
    }

    /// `thread/start` config entries (app-server): the provider with its headers, and its use.
    pub(crate) fn thread_config(&self) -> Map<String, Value> {
        let mut config = Map::new();
        config.insert("model_provider".into(), json!(PROVIDER_KEY));
        config.insert(
            format!("model_providers.{PROVIDER_KEY}"),
            json!({
                "name": "Editor's gateway",
                "base_url": self.base_url,
                "wire_api": "responses",
                "http_headers": self.headers,
            }),
        );
        config
    }

    /// Adds the provider to an exec run's overrides, each header value as a variable of Codex's
    /// environment that the model's commands see empty.
    pub(crate) fn add_to_exec(&self, out: &mut McpConfig) {
        let prefix = format!("model_providers.{PROVIDER_KEY}");
        out.overrides.extend([
            format!("model_provider={}", toml_str(PROVIDER_KEY)),
            format!("{prefix}.name=\"Editor's gateway\""),
            format!("{prefix}.base_url={}", toml_str(&self.base_url)),
            format!("{prefix}.wire_api=\"responses\""),
        ]);
        let mut by_env = Vec::new();
        for (n, (name, value)) in self.headers.iter().enumerate() {
            let var = format!("{HANDOFF_PREFIX}{n}");
            by_env.push(format!("{}={}", toml_key(name), toml_str(&var)));
            out.overrides.push(crate::mcp::hidden_from_commands(&var));
            out.env.push((var, value.clone()));
        }
        if !by_env.is_empty() {
            out.overrides
                .push(format!("{prefix}.env_http_headers={{{}}}", by_env.join(",")));
        }
    }
}

/// The editor's routing of Codex's model traffic, shared by the sessions of one acplb.
#[derive(Debug, Default)]
pub(crate) struct CodexRouting {
    gateway: RefCell<Option<Gateway>>,
}

impl CodexRouting {
    /// The gateway sessions opened now use, if one is set.
    pub(crate) fn current(&self) -> Option<Gateway> {
        self.gateway.borrow().clone()
    }
}

impl ModelRouting for CodexRouting {
    fn list(&self) -> Vec<ProviderInfo> {
        let base_url = self
            .gateway
            .borrow()
            .as_ref()
            .map_or_else(|| NATIVE_BASE_URL.to_owned(), |g| g.base_url.clone());
        vec![ProviderInfo::new(
            OPENAI,
            vec![LlmProtocol::OpenAi],
            true,
            ProviderCurrentConfig::new(LlmProtocol::OpenAi, base_url),
        )]
    }

    fn set(&self, req: &SetProviderRequest) -> Result<(), String> {
        let gateway = check(req)?;
        *self.gateway.borrow_mut() = Some(gateway);
        Ok(())
    }

    fn disable(&self, id: &ProviderId) -> Result<(), String> {
        if id.0.as_ref() == OPENAI {
            Err(format!(
                "provider `{OPENAI}` is required: Codex needs a model; set it to another base URL instead"
            ))
        } else {
            Err(unknown(id))
        }
    }
}

fn unknown(id: &ProviderId) -> String {
    format!("unknown provider `{id}`; the one this agent has is `{OPENAI}`")
}

/// The gateway `req` asks for, or why it cannot be used.
fn check(req: &SetProviderRequest) -> Result<Gateway, String> {
    if req.provider_id.0.as_ref() != OPENAI {
        return Err(unknown(&req.provider_id));
    }
    if req.api_type != LlmProtocol::OpenAi {
        return Err(format!(
            "provider `{OPENAI}` speaks only the OpenAI protocol (apiType `openai`), which Codex uses"
        ));
    }
    let url = req.base_url.trim();
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or_else(|| format!("baseUrl must be an http(s) URL, not `{url}`"))?;
    if rest.is_empty() || rest.starts_with('/') || url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("baseUrl `{url}` names no host"));
    }
    // Codex takes the URL from its configuration (on exec, its command line): no credential in it.
    let (_, userinfo) = crate::mcp::url_credentials::split(url).map_err(|e| format!("baseUrl: {e}"))?;
    if userinfo.is_some() {
        return Err(
            "baseUrl carries a user and password; send them as an `Authorization` header instead".into(),
        );
    }
    let mut headers = BTreeMap::new();
    for (name, value) in &req.headers {
        let token = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !token {
            return Err(format!(
                "header name `{}` is not a valid HTTP header name",
                name.escape_debug()
            ));
        }
        if RESERVED.contains(&name.to_ascii_lowercase().as_str()) {
            return Err(format!("header `{name}` is set by Codex itself"));
        }
        if value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
            return Err(format!("the value of header `{name}` holds a line break or NUL"));
        }
        headers.insert(name.clone(), value.clone());
    }
    Ok(Gateway {
        base_url: url.trim_end_matches('/').to_owned(),
        headers,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn req(url: &str, headers: &[(&str, &str)]) -> SetProviderRequest {
        SetProviderRequest::new(OPENAI, LlmProtocol::OpenAi, url).headers(
            headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<HashMap<_, _>>(),
        )
    }

    #[test]
    fn a_gateway_is_checked_then_used_and_listed_without_its_headers() {
        let routing = CodexRouting::default();
        assert_eq!(
            routing.list()[0].current.as_ref().map(|c| c.base_url.as_str()),
            Some(NATIVE_BASE_URL)
        );
        routing
            .set(&req(
                "https://gw.example/v1/",
                &[("Authorization", "Bearer s3cret")],
            ))
            .unwrap();
        let listed = serde_json::to_string(&routing.list()).unwrap();
        assert!(listed.contains("https://gw.example/v1\""), "{listed}");
        assert!(!listed.contains("s3cret"), "{listed}");
        let gateway = routing.current().unwrap();
        assert!(!format!("{gateway:?}").contains("s3cret"));
        assert!(!gateway.secrets().redact("x Bearer s3cret").contains("s3cret"));
        let config = gateway.thread_config();
        assert_eq!(config["model_provider"], PROVIDER_KEY);
        assert_eq!(
            config[&format!("model_providers.{PROVIDER_KEY}")]["http_headers"]["Authorization"],
            "Bearer s3cret"
        );
    }

    #[test]
    fn on_exec_header_values_travel_in_the_environment_only() {
        let gateway = check(&req(
            "http://127.0.0.1:9/v1",
            &[("X-Key", "k1"), ("Authorization", "Bearer b")],
        ))
        .unwrap();
        let mut out = McpConfig::default();
        gateway.add_to_exec(&mut out);
        let line = out.overrides.join(" ");
        assert!(!line.contains("k1") && !line.contains("Bearer b"), "{line}");
        assert!(
            line.contains(r#"env_http_headers={Authorization="ACPLB_GATEWAY_0",X-Key="ACPLB_GATEWAY_1"}"#),
            "{line}"
        );
        assert!(
            line.contains(r#"shell_environment_policy.set.ACPLB_GATEWAY_1="""#),
            "{line}"
        );
        assert_eq!(
            out.env,
            vec![
                ("ACPLB_GATEWAY_0".into(), "Bearer b".into()),
                ("ACPLB_GATEWAY_1".into(), "k1".into())
            ]
        );
    }

    #[test]
    fn what_cannot_be_routed_is_refused_with_the_reason() {
        let routing = CodexRouting::default();
        let err = |r: SetProviderRequest| routing.set(&r).unwrap_err();
        assert!(
            err(SetProviderRequest::new(
                "anthropic",
                LlmProtocol::OpenAi,
                "https://x"
            ))
            .contains("unknown provider `anthropic`")
        );
        assert!(
            err(SetProviderRequest::new(
                OPENAI,
                LlmProtocol::Anthropic,
                "https://x"
            ))
            .contains("only the OpenAI protocol")
        );
        assert!(err(req("ftp://x", &[])).contains("http(s) URL"));
        assert!(err(req("https://", &[])).contains("names no host"));
        assert!(err(req("https://u:p@gw.example/v1", &[])).contains("user and password"));
        assert!(err(req("https://gw.example/v1?api_key=1", &[])).contains("query parameter"));
        assert!(
            err(req("https://gw.example", &[("Bad Name", "v")])).contains("not a valid HTTP header name")
        );
        assert!(err(req("https://gw.example", &[("X-A", "v\r\nInjected: 1")])).contains("line break"));
        assert!(err(req("https://gw.example", &[("Host", "h")])).contains("set by Codex"));
        assert!(routing.current().is_none(), "nothing refused was kept");
        assert!(
            routing
                .disable(&ProviderId::new(OPENAI))
                .unwrap_err()
                .contains("required")
        );
        assert!(
            routing
                .disable(&ProviderId::new("x"))
                .unwrap_err()
                .contains("unknown provider")
        );
    }
}
