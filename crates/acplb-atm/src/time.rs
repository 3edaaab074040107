//! ISO-8601 timestamps without a date crate: formatting `…sssZ` and parsing mixed RFC 3339 forms.
//!
//! Inbox timestamps come as `.000Z` (Claude), `Z` (atm-agent-mcp), `+00:00` with nanoseconds
//! (ATM 0.x); they are compared as instants, never as strings.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, now.
pub fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Formats epoch milliseconds like JavaScript's `toISOString()`: `2026-02-11T14:30:00.000Z`.
pub fn format_millis(ms: u64) -> String {
    let secs = ms / 1000;
    let days = i64::try_from(secs / 86_400).unwrap_or(i64::MAX);
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

/// Parses an RFC 3339 timestamp (`T` or space, optional fraction, `Z` or `±HH:MM`) into
/// nanoseconds since the epoch; `None` when it is not one.
pub fn parse_nanos(s: &str) -> Option<i128> {
    let b = s.trim().as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let year = digits(&b[0..4])?;
    let (month, day) = (digits(&b[5..7])?, digits(&b[8..10])?);
    let (hour, min, sec) = (digits(&b[11..13])?, digits(&b[14..16])?, digits(&b[17..19])?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || min > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut nanos: i128 = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let frac = &b[start..i];
        if frac.is_empty() {
            return None;
        }
        let mut scale = 100_000_000_i128;
        for &c in frac.iter().take(9) {
            nanos += i128::from(c - b'0') * scale;
            scale /= 10;
        }
    }
    let offset_secs: i64 = match b.get(i..)? {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let off = digits(&[*h1, *h2])? * 3600 + digits(&[*m1, *m2])? * 60;
            if *sign == b'+' { off } else { -off }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + min * 60 + sec - offset_secs;
    Some(i128::from(secs) * 1_000_000_000 + nanos)
}

fn digits(b: &[u8]) -> Option<i64> {
    b.iter().try_fold(0_i64, |acc, &c| {
        c.is_ascii_digit().then(|| acc * 10 + i64::from(c - b'0'))
    })
}

// Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian, 1970-01-01 = day 0).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_to_iso_string() {
        assert_eq!(format_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_millis(1_770_820_200_123), "2026-02-11T14:30:00.123Z");
        assert_eq!(format_millis(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn parses_every_form_seen_in_inboxes() {
        let base = parse_nanos("2026-02-11T14:30:00.000Z").unwrap();
        assert_eq!(base, 1_770_820_200_000_000_000);
        assert_eq!(parse_nanos("2026-02-11T14:30:00Z"), Some(base));
        assert_eq!(parse_nanos("2026-02-11T14:30:00+00:00"), Some(base));
        assert_eq!(parse_nanos("2026-02-11T16:30:00+02:00"), Some(base));
        assert_eq!(
            parse_nanos("2026-02-11T14:30:00.123456789+00:00"),
            Some(base + 123_456_789)
        );
        assert_eq!(
            parse_nanos("2026-11-22T02:59:03.731601299Z").map(|n| n % 1_000_000_000),
            Some(731_601_299)
        );
    }

    #[test]
    fn round_trips() {
        for ms in [0, 1, 999, 86_399_999, 1_795_316_319_309] {
            assert_eq!(parse_nanos(&format_millis(ms)), Some(i128::from(ms) * 1_000_000));
        }
    }

    #[test]
    fn rejects_garbage() {
        for s in [
            "",
            "yesterday",
            "2026-02-11",
            "2026-13-11T00:00:00Z",
            "2026-02-11T14:30:00",
            "2026-02-11T14:30:00.Z",
        ] {
            assert_eq!(parse_nanos(s), None, "{s}");
        }
    }
}
