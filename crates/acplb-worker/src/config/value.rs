//! Typed reads of one spanned TOML value: a wrong type is an error at the value's line, with an
//! example of the right one.

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::error::{ConfigError, Located};

/// A spanned value of the parsed document.
pub(crate) type Value<'i> = Spanned<DeValue<'i>>;

/// "a string", "an integer", ... for "must be X, not Y".
fn kind(v: &DeValue<'_>) -> &'static str {
    match v {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a datetime",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

fn wrong_type(at: &Located, key: &str, v: &Value<'_>, want: &str, example: &str) -> ConfigError {
    at.invalid(
        v.span().start,
        format!("`{key}` must be {want}, not {}", kind(v.get_ref())),
        Some(format!("e.g. `{example}`")),
    )
}

/// A string value.
pub(crate) fn string(at: &Located, key: &str, v: &Value<'_>, example: &str) -> Result<String, ConfigError> {
    match v.get_ref() {
        DeValue::String(s) => Ok(s.to_string()),
        _ => Err(wrong_type(at, key, v, "a string", example)),
    }
}

/// A boolean value.
pub(crate) fn boolean(at: &Located, key: &str, v: &Value<'_>) -> Result<bool, ConfigError> {
    match v.get_ref() {
        DeValue::Boolean(b) => Ok(*b),
        _ => Err(wrong_type(
            at,
            key,
            v,
            "`true` or `false`",
            &format!("{key} = true"),
        )),
    }
}

/// A non-negative integer (any radix TOML allows).
pub(crate) fn unsigned(at: &Located, key: &str, v: &Value<'_>, example: &str) -> Result<u64, ConfigError> {
    let DeValue::Integer(i) = v.get_ref() else {
        return Err(wrong_type(at, key, v, "a whole number", example));
    };
    let digits = i.as_str();
    if digits.starts_with('-') {
        return Err(at.invalid(
            v.span().start,
            format!("`{key}` must not be negative, not {digits}"),
            Some(format!("e.g. `{example}`")),
        ));
    }
    u64::from_str_radix(digits.trim_start_matches('+'), i.radix()).map_err(|_| {
        at.invalid(
            v.span().start,
            format!("`{key}` is too large: `{digits}`"),
            Some(format!("e.g. `{example}`")),
        )
    })
}

/// A table value.
pub(crate) fn table<'a, 'i>(
    at: &Located,
    key: &str,
    v: &'a Value<'i>,
    example: &str,
) -> Result<&'a DeTable<'i>, ConfigError> {
    match v.get_ref() {
        DeValue::Table(t) => Ok(t),
        _ => Err(wrong_type(at, key, v, "a table", example)),
    }
}

/// The entries of a table in the order they appear in the file, so the first error reported
/// is the first one a reader meets.
pub(crate) fn entries<'a, 'i>(t: &'a DeTable<'i>) -> Vec<(&'a str, usize, &'a Value<'i>)> {
    let mut v: Vec<_> = t
        .iter()
        .map(|(k, v)| (k.get_ref().as_ref(), k.span().start, v))
        .collect();
    v.sort_by_key(|(_, at, _)| *at);
    v
}
