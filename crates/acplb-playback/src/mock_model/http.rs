//! One HTTP request to the mock: routing, bounded body reading, logging, and the JSON or SSE response.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::header::{CACHE_CONTROL, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use super::log::{LOGGED_HEADERS, LoggedRequest, RequestLog};
use super::reply::{Reply, plan_reply};
use super::request::select;
use super::script::{DEFAULT_SCENARIO, Script};
use super::sse::{IdGen, SseEvent};

/// How many encoded events may wait for a slow client before the sender pauses.
const STREAM_BUFFER: usize = 16;

/// What every connection shares.
#[derive(Debug)]
pub(crate) struct State {
    pub(crate) script: Script,
    pub(crate) delay: Duration,
    pub(crate) max_body_bytes: usize,
    pub(crate) ids: IdGen,
    pub(crate) log: RequestLog,
}

/// Answers one request and logs it; never fails, every problem becomes an HTTP error status.
pub(crate) async fn handle(
    state: Arc<State>,
    request: Request<Incoming>,
) -> Result<Response<MockBody>, Infallible> {
    let mut entry = LoggedRequest {
        method: request.method().to_string(),
        path: request.uri().path().to_owned(),
        headers: logged_headers(request.headers()),
        body: Value::Null,
        scenario: None,
        step: 0,
        review: false,
        status: 0,
        received: std::time::Instant::now(),
    };
    let response = route(&state, request, &mut entry).await;
    entry.status = response.status().as_u16();
    tracing::debug!(path = %entry.path, scenario = ?entry.scenario, step = entry.step, status = entry.status, "mock request");
    state.log.record(entry);
    Ok(response)
}

async fn route(state: &State, request: Request<Incoming>, entry: &mut LoggedRequest) -> Response<MockBody> {
    let path = request.uri().path().trim_end_matches('/');
    if request.method() == Method::GET && path.ends_with("/models") {
        return json_response(StatusCode::OK, &json!({"object": "list", "data": []}));
    }
    if super::oauth::is_oauth_path(path) {
        return oauth_response(state, request).await;
    }
    if !path.ends_with("/responses") {
        let message = format!("no such endpoint `{} {}`", request.method(), request.uri().path());
        return error_response(StatusCode::NOT_FOUND, &message);
    }
    if request.method() != Method::POST {
        return error_response(StatusCode::METHOD_NOT_ALLOWED, "`/responses` only accepts POST");
    }
    // Codex 0.169.0 sends plain JSON to a custom provider (no `content-encoding`); refuse anything
    // else loudly rather than guess.
    if let Some(encoding) = request.headers().get(CONTENT_ENCODING)
        && !encoding.as_bytes().eq_ignore_ascii_case(b"identity")
    {
        let message = format!(
            "unsupported content-encoding `{}`",
            String::from_utf8_lossy(encoding.as_bytes())
        );
        return error_response(StatusCode::UNSUPPORTED_MEDIA_TYPE, &message);
    }
    let bytes = match read_body(request, state.max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(response) => return response,
    };
    let body: Value = match serde_json::from_slice(&bytes) {
        Ok(body) => body,
        Err(error) => {
            return error_response(StatusCode::BAD_REQUEST, &format!("malformed JSON body: {error}"));
        }
    };
    let selection = select(&body);
    entry.scenario = Some(
        selection
            .scenario
            .clone()
            .unwrap_or_else(|| DEFAULT_SCENARIO.to_owned()),
    );
    entry.step = selection.step;
    entry.review = selection.review;
    let model = body.get("model").and_then(Value::as_str).unwrap_or("mock");
    let reply = plan_reply(&state.script, &selection, model, &state.ids);
    entry.body = body;
    match reply {
        Reply::Http { status, body } => json_response(
            StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            &body,
        ),
        Reply::Stream { events, delay } => sse_response(events, delay.unwrap_or(state.delay)),
    }
}

/// The stand-in OAuth server and protected MCP endpoint ([`super::oauth`]).
async fn oauth_response(state: &State, request: Request<Incoming>) -> Response<MockBody> {
    let (method, path, headers) = (
        request.method().clone(),
        request.uri().path().to_owned(),
        request.headers().clone(),
    );
    let body = match read_body(request, state.max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(response) => return response,
    };
    match super::oauth::answer(&method, &path, &headers, &body) {
        Some(super::oauth::OAuthReply::Json(status, body)) => json_response(status, &body),
        Some(super::oauth::OAuthReply::Unauthorized { resource_metadata }) => {
            let mut response =
                error_response(StatusCode::UNAUTHORIZED, "this MCP server needs an OAuth login");
            if let Ok(value) = HeaderValue::from_str(&super::oauth::challenge(&resource_metadata)) {
                response
                    .headers_mut()
                    .insert(super::oauth::CHALLENGE_HEADER, value);
            }
            response
        }
        None => error_response(
            StatusCode::NOT_FOUND,
            &format!("no such endpoint `{method} {path}`"),
        ),
    }
}

/// Reads the whole body, answering 413 past `limit` bytes.
async fn read_body(request: Request<Incoming>, limit: usize) -> Result<Bytes, Response<MockBody>> {
    let too_large = || {
        error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!("request body exceeds {limit} bytes"),
        )
    };
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|len| usize::try_from(len).map_or(true, |len| len > limit)) {
        return Err(too_large());
    }
    match Limited::new(request.into_body(), limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.downcast_ref::<LengthLimitError>().is_some() => Err(too_large()),
        Err(error) => Err(error_response(
            StatusCode::BAD_REQUEST,
            &format!("failed to read the request body: {error}"),
        )),
    }
}

fn logged_headers(headers: &HeaderMap) -> Map<String, Value> {
    LOGGED_HEADERS
        .iter()
        .filter_map(|name| {
            let value = headers.get(*name)?;
            Some((
                (*name).to_owned(),
                Value::String(String::from_utf8_lossy(value.as_bytes()).into_owned()),
            ))
        })
        .collect()
}

fn error_response(status: StatusCode, message: &str) -> Response<MockBody> {
    json_response(
        status,
        &json!({"error": {"message": message, "type": "mock_error"}}),
    )
}

fn json_response(status: StatusCode, body: &Value) -> Response<MockBody> {
    let mut response = Response::new(MockBody::Full(Some(Bytes::from(body.to_string()))));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A chunked `text/event-stream`, one event per chunk, `delay` between events.
fn sse_response(events: Vec<SseEvent>, delay: Duration) -> Response<MockBody> {
    let (tx, rx) = mpsc::channel(STREAM_BUFFER);
    tokio::spawn(async move {
        for (index, event) in events.iter().enumerate() {
            if index > 0 && !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            if tx.send(event.encode()).await.is_err() {
                // The client went away; nobody is left to read the rest.
                return;
            }
        }
        // Dropping `tx` ends the body: after `response.completed`, or early for a truncated stream.
    });
    let mut response = Response::new(MockBody::Channel(rx));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// The response body: a whole buffer, or chunks fed by a task.
#[derive(Debug)]
pub(crate) enum MockBody {
    /// One buffer, taken on the first poll.
    Full(Option<Bytes>),
    /// Chunks until the sender is dropped.
    Channel(mpsc::Receiver<Bytes>),
}

impl Body for MockBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            MockBody::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            MockBody::Channel(rx) => rx.poll_recv(cx).map(|chunk| chunk.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, MockBody::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            MockBody::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            MockBody::Channel(_) => SizeHint::default(),
        }
    }
}
