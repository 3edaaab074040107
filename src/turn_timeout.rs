//! `--turn-timeout` / `ACPLB_TURN_TIMEOUT`: how long one turn may run before acplb stops it,
//! written as a duration (`90s`, `30m`, `1h 30m`) or `0` for no limit.

use std::time::Duration;

/// The default limit, as the flag's default value.
pub(crate) const DEFAULT: &str = "30m";

/// A parsed `--turn-timeout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TurnTimeout(Option<Duration>);

impl TurnTimeout {
    /// The limit, `None` for none.
    pub(crate) fn limit(self) -> Option<Duration> {
        self.0
    }
}

/// Parses the flag's value (clap `value_parser`).
pub(crate) fn parse(text: &str) -> Result<TurnTimeout, String> {
    let text = text.trim();
    if text.chars().all(|c| c == '0') && !text.is_empty() {
        return Ok(TurnTimeout(None));
    }
    match humantime::parse_duration(text) {
        Ok(d) if d.is_zero() => Ok(TurnTimeout(None)),
        Ok(d) => Ok(TurnTimeout(Some(d))),
        Err(e) => Err(format!(
            "`{text}` is not a duration ({e}); write it like `90s`, `30m` or `1h 30m`, or `0` for no limit"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_zero() {
        assert_eq!(parse("90s").unwrap().limit(), Some(Duration::from_secs(90)));
        assert_eq!(parse("30m").unwrap().limit(), Some(Duration::from_secs(1800)));
        assert_eq!(parse("1h 30m").unwrap().limit(), Some(Duration::from_secs(5400)));
        assert_eq!(parse(DEFAULT).unwrap().limit(), Some(Duration::from_secs(1800)));
        assert_eq!(parse("0").unwrap().limit(), None);
        assert_eq!(parse("0s").unwrap().limit(), None);
    }

    #[test]
    fn bad_values_say_what_is_accepted() {
        for bad in ["90", "soon", "", "-5s", "30 parsecs"] {
            let err = parse(bad).unwrap_err();
            assert!(err.contains("`30m`") && err.contains("`0`"), "{bad}: {err}");
        }
    }
}
