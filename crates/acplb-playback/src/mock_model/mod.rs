//! A scripted mock of the `OpenAI` Responses API, so the real Codex CLI runs offline against scripted turns.
//!
//! [`MockModel::start`] binds 127.0.0.1 and answers `POST …/responses` with Server-Sent Events (or an
//! HTTP error) chosen by a [`Script`]: the scenario is the last `scenario:<name>` token in a user
//! message of the request `input`; the step is the number of tool outputs after that message. The
//! script format and the built-in scenarios are described in `README.md` next to this file.
//! [`codex_env`] prepares a throwaway Codex home and workspace pointed at the mock.

mod action;
pub mod codex_env;
mod error;
mod http;
mod log;
mod oauth;
mod reply;
mod request;
mod script;
mod server;
mod sse;

pub use action::{Action, Phase, PlanItem, PlanStatus, Usage, Verdict};
pub use error::MockError;
pub use log::{LOGGED_HEADERS, LoggedRequest};
pub use oauth::{OAUTH_MCP_PATH, REFUSED_CODE};
pub use script::{DEFAULT_SCENARIO, Scenario, Script, Step, StreamEnd, StreamStep};
pub use server::{DEFAULT_MAX_BODY_BYTES, MockConfig, MockModel, MockModelHandle};
