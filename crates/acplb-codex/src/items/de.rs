//! Single-pass deserialization of [`Event`] and [`Item`].
//!
//! Both visitors read keys as field identifiers (no key strings are allocated) and fields
//! straight into their typed form, in one pass over the line. They tolerate what a derived
//! deserializer would reject: the duplicate `id` of `web_search` items, and string fields of an
//! unexpected JSON type (taken as absent). The structured fields (`changes`, `items`, `result`)
//! are typed directly because only one item type uses each of them; a malformed one fails the
//! line, which the caller logs and skips.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use super::{
    CollabToolCall, CommandExecution, ErrorItem, Event, FileChange, Item, ItemKind, ItemStatus, McpResult,
    McpToolCall, PathChange, TextItem, TodoEntry, TodoList, WebSearch,
};

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EventVisitor)
    }
}

/// Top-level keys the mirror reads; everything else is skipped without being built.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum EventKey {
    Type,
    Item,
    ThreadId,
    Usage,
    Error,
    Message,
    #[serde(other)]
    Other,
}

struct EventVisitor;

impl<'de> Visitor<'de> for EventVisitor {
    type Value = Event;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a codex exec event object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Event, A::Error> {
        let mut event_type: Option<Cow<'de, str>> = None;
        let mut item = None;
        let (mut thread_id, mut usage, mut error, mut message) = (None, None, None, None);
        while let Some(key) = map.next_key::<EventKey>()? {
            match key {
                EventKey::Type => event_type = map.next_value::<Lenient<'de>>()?.0,
                EventKey::Item => item = Some(map.next_value::<Item>()?),
                EventKey::ThreadId => thread_id = map.next_value::<Lenient<'de>>()?.owned(),
                EventKey::Usage => usage = Some(map.next_value::<Value>()?),
                EventKey::Error => error = Some(map.next_value::<Value>()?),
                EventKey::Message => message = map.next_value::<Lenient<'de>>()?.owned(),
                EventKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let event_type = event_type.ok_or_else(|| de::Error::missing_field("type"))?;
        let missing_item = || de::Error::missing_field("item");
        Ok(match event_type.as_ref() {
            "thread.started" => Event::ThreadStarted {
                thread_id: thread_id.unwrap_or_default(),
            },
            "turn.started" => Event::TurnStarted,
            "item.started" => Event::ItemStarted(item.ok_or_else(missing_item)?),
            "item.updated" => Event::ItemUpdated(item.ok_or_else(missing_item)?),
            "item.completed" => Event::ItemCompleted(item.ok_or_else(missing_item)?),
            "turn.completed" => Event::TurnCompleted {
                usage: typed(usage)?.unwrap_or_default(),
            },
            "turn.failed" => Event::TurnFailed {
                message: typed::<ErrorItem, A::Error>(error)?.unwrap_or_default().message,
            },
            "error" => Event::Error {
                message: message.unwrap_or_default(),
            },
            _ => Event::Unknown {
                event_type: event_type.into_owned(),
            },
        })
    }
}

impl<'de> Deserialize<'de> for Item {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(ItemVisitor)
    }
}

/// Every item key any known item type uses.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum ItemKey {
    Id,
    Type,
    Text,
    Command,
    AggregatedOutput,
    ExitCode,
    Status,
    Changes,
    Server,
    Tool,
    Arguments,
    Result,
    Error,
    Query,
    Action,
    Items,
    Message,
    Prompt,
    ReceiverThreadIds,
    #[serde(other)]
    Other,
}

/// The union of all item fields, filled in one pass and then sorted out by `type`.
#[derive(Default)]
struct RawItem<'de> {
    id: Option<String>,
    second_id: Option<String>,
    item_type: Option<Cow<'de, str>>,
    text: Option<String>,
    command: Option<String>,
    aggregated_output: Option<String>,
    exit_code: Option<i64>,
    status: Option<Cow<'de, str>>,
    changes: Option<Vec<PathChange>>,
    server: Option<String>,
    tool: Option<String>,
    arguments: Option<Value>,
    result: Option<McpResult>,
    error: Option<Value>,
    query: Option<String>,
    action: Option<Value>,
    items: Option<Vec<TodoEntry>>,
    message: Option<String>,
    prompt: Option<String>,
    receiver_thread_ids: Option<Value>,
}

struct ItemVisitor;

impl<'de> Visitor<'de> for ItemVisitor {
    type Value = Item;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a codex thread item object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Item, A::Error> {
        let mut raw = RawItem::default();
        while let Some(key) = map.next_key::<ItemKey>()? {
            let text = |map: &mut A| map.next_value::<Lenient<'de>>().map(Lenient::owned);
            let word = |map: &mut A| map.next_value::<Lenient<'de>>().map(|l| l.0);
            match key {
                // `web_search` repeats `id`: the first is the item id, the second the provider's.
                ItemKey::Id if raw.id.is_none() => raw.id = text(&mut map)?,
                ItemKey::Id => raw.second_id = text(&mut map)?,
                ItemKey::Type => raw.item_type = word(&mut map)?,
                ItemKey::Text => raw.text = text(&mut map)?,
                ItemKey::Command => raw.command = text(&mut map)?,
                ItemKey::AggregatedOutput => raw.aggregated_output = text(&mut map)?,
                ItemKey::ExitCode => raw.exit_code = map.next_value::<LenientInt>()?.0,
                ItemKey::Status => raw.status = word(&mut map)?,
                ItemKey::Changes => raw.changes = map.next_value()?,
                ItemKey::Server => raw.server = text(&mut map)?,
                ItemKey::Tool => raw.tool = text(&mut map)?,
                ItemKey::Arguments => raw.arguments = Some(map.next_value()?),
                ItemKey::Result => raw.result = map.next_value()?,
                ItemKey::Error => raw.error = Some(map.next_value()?),
                ItemKey::Query => raw.query = text(&mut map)?,
                ItemKey::Action => raw.action = Some(map.next_value()?),
                ItemKey::Items => raw.items = map.next_value()?,
                ItemKey::Message => raw.message = text(&mut map)?,
                ItemKey::Prompt => raw.prompt = text(&mut map)?,
                ItemKey::ReceiverThreadIds => raw.receiver_thread_ids = Some(map.next_value()?),
                ItemKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        raw.into_item()
    }
}

impl RawItem<'_> {
    fn into_item<E: de::Error>(self) -> Result<Item, E> {
        let item_type = self.item_type.ok_or_else(|| E::missing_field("type"))?;
        let status = self
            .status
            .as_deref()
            .map_or(ItemStatus::default(), ItemStatus::from_wire);
        let kind = match item_type.as_ref() {
            "agent_message" => ItemKind::AgentMessage(TextItem {
                text: self.text.unwrap_or_default(),
            }),
            "reasoning" => ItemKind::Reasoning(TextItem {
                text: self.text.unwrap_or_default(),
            }),
            "command_execution" => ItemKind::CommandExecution(CommandExecution {
                command: self.command.unwrap_or_default(),
                aggregated_output: self.aggregated_output.unwrap_or_default(),
                exit_code: self.exit_code,
                status,
            }),
            "file_change" => ItemKind::FileChange(FileChange {
                changes: self.changes.unwrap_or_default(),
                status,
            }),
            "mcp_tool_call" => ItemKind::McpToolCall(McpToolCall {
                server: self.server.unwrap_or_default(),
                tool: self.tool.unwrap_or_default(),
                arguments: self.arguments.unwrap_or_default(),
                result: self.result,
                error: typed(self.error)?,
                status,
            }),
            "web_search" => ItemKind::WebSearch(WebSearch {
                query: self.query.unwrap_or_default(),
                action: self.action.filter(|a| !a.is_null()),
                provider_id: self.second_id,
            }),
            "todo_list" => ItemKind::TodoList(TodoList {
                items: self.items.unwrap_or_default(),
            }),
            "collab_tool_call" => ItemKind::CollabToolCall(CollabToolCall {
                tool: self.tool.unwrap_or_default(),
                prompt: self.prompt,
                // Anything but a list of strings names no one.
                receiver_thread_ids: self
                    .receiver_thread_ids
                    .as_ref()
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|id| id.as_str().map(str::to_owned))
                    .collect(),
                status,
            }),
            "error" => ItemKind::Error(ErrorItem {
                message: self.message.unwrap_or_default(),
            }),
            _ => ItemKind::Unknown {
                item_type: item_type.into_owned(),
            },
        };
        Ok(Item {
            id: self.id.unwrap_or_default(),
            kind,
        })
    }
}

/// Converts a small JSON value to its typed form; `null` and absent are both `None`.
fn typed<T: DeserializeOwned, E: de::Error>(value: Option<Value>) -> Result<Option<T>, E> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(value) => serde_json::from_value(value).map(Some).map_err(E::custom),
    }
}

/// A string field, borrowed from the input when it has no escapes; any other JSON type is
/// skipped and reads as absent.
struct Lenient<'de>(Option<Cow<'de, str>>);

impl Lenient<'_> {
    fn owned(self) -> Option<String> {
        self.0.map(Cow::into_owned)
    }
}

impl<'de> Deserialize<'de> for Lenient<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LenientVisitor)
    }
}

struct LenientVisitor;

impl<'de> Visitor<'de> for LenientVisitor {
    type Value = Lenient<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Lenient(Some(Cow::Borrowed(v))))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Lenient(Some(Cow::Owned(v.to_owned()))))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Lenient(Some(Cow::Owned(v))))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Lenient(None))
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Lenient(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Lenient(None))
    }
}

/// An integer field; any other JSON type reads as absent.
struct LenientInt(Option<i64>);

impl<'de> Deserialize<'de> for LenientInt {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(LenientInt(value.as_i64()))
    }
}
