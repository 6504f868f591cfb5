//! Custom scalars. `DateTime` comes from async-graphql's chrono support (RFC 3339).

use async_graphql::{InputValueError, InputValueResult, Scalar, ScalarType, Value};

/// The longest duration anything in EGS accepts (ten years); longer is a typo.
pub const MAX_DURATION_SECS: i64 = 10 * 366 * 24 * 3600;

/// A span of time, at whole-second resolution. Accepts `2h30m`, `90m`, `45s`, `1d12h` and ISO
/// 8601 `PT2H30M` / `P1DT12H`; always written back as ISO 8601.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Duration(pub i64);

impl Duration {
    pub fn secs(self) -> i64 {
        self.0
    }
}

/// Parses a duration written as `2h30m` or ISO 8601 `PT2H30M`. Returns a message for people.
pub fn parse_duration(text: &str) -> Result<i64, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty duration; write e.g. `2h30m` or `PT2H30M`".into());
    }
    let secs = if let Some(iso) = text.strip_prefix('P').or_else(|| text.strip_prefix('p')) { parse_iso(iso) } else { parse_units(text) }
        .ok_or_else(|| format!("`{text}` is not a duration; write e.g. `2h30m`, `90m` or `PT2H30M`"))?;
    if secs > MAX_DURATION_SECS {
        return Err(format!("`{text}` is longer than the 10-year maximum"));
    }
    Ok(secs)
}

/// `1d2h3m4s` in any subset, in that order; each unit at most once.
fn parse_units(text: &str) -> Option<i64> {
    const UNITS: [(char, i64); 4] = [('d', 86_400), ('h', 3_600), ('m', 60), ('s', 1)];
    let mut rest = text;
    let mut total: i64 = 0;
    let mut next_unit = 0;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits == 0 || digits > 12 {
            return None;
        }
        let value: i64 = rest[..digits].parse().ok()?;
        let unit = rest[digits..].chars().next()?.to_ascii_lowercase();
        let position = UNITS.iter().position(|(u, _)| *u == unit)?;
        if position < next_unit {
            return None;
        }
        next_unit = position + 1;
        total = total.checked_add(value.checked_mul(UNITS[position].1)?)?;
        rest = &rest[digits + 1..];
    }
    Some(total)
}

/// The part of ISO 8601 after `P`: `[nD][T[nH][nM][nS]]`, whole numbers only.
fn parse_iso(text: &str) -> Option<i64> {
    let (date, time) = match text.find(['T', 't']) {
        Some(t) => (&text[..t], Some(&text[t + 1..])),
        None => (text, None),
    };
    let mut total: i64 = 0;
    if !date.is_empty() {
        // Digits only, as `parse_units` takes them: `i64::parse` would also take a sign.
        let days = date.strip_suffix(['D', 'd']).filter(|d| (1..=12).contains(&d.len()) && d.bytes().all(|b| b.is_ascii_digit()))?;
        total = days.parse::<i64>().ok()?.checked_mul(86_400)?;
    }
    if let Some(time) = time {
        if time.is_empty() {
            return None;
        }
        total = total.checked_add(parse_units(&time.to_ascii_lowercase()).filter(|_| !time.contains(['d', 'D']))?)?;
    } else if date.is_empty() {
        return None;
    }
    Some(total)
}

/// Formats seconds as ISO 8601, e.g. `PT2H30M`, `P1DT1S`, `PT0S`.
pub fn format_duration(secs: i64) -> String {
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    let mut out = String::from("P");
    if days > 0 {
        out += &format!("{days}D");
    }
    if rem > 0 || days == 0 {
        out.push('T');
        if h > 0 {
            out += &format!("{h}H");
        }
        if m > 0 {
            out += &format!("{m}M");
        }
        if s > 0 || rem == 0 {
            out += &format!("{s}S");
        }
    }
    out
}

/// A duration such as `2h30m` or ISO 8601 `PT2H30M`; results are always ISO 8601.
#[Scalar(name = "Duration")]
impl ScalarType for Duration {
    fn parse(value: Value) -> InputValueResult<Self> {
        match value {
            Value::String(text) => parse_duration(&text).map(Duration).map_err(InputValueError::custom),
            other => Err(InputValueError::expected_type(other)),
        }
    }

    /// Lets validation refuse a bad literal before execution (a 400, not a field error).
    fn is_valid(value: &Value) -> bool {
        matches!(value, Value::String(text) if parse_duration(text).is_ok())
    }

    fn to_value(&self) -> Value {
        Value::String(format_duration(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_and_iso_durations_parse_to_the_same_seconds() {
        for (text, secs) in [
            ("2h30m", 9000),
            ("PT2H30M", 9000),
            ("90m", 5400),
            ("45s", 45),
            ("1d12h", 129_600),
            ("P1DT12H", 129_600),
            ("P2D", 172_800),
            ("pt1h", 3600),
            (" 6h ", 21_600),
        ] {
            assert_eq!(parse_duration(text), Ok(secs), "{text}");
        }
    }

    #[test]
    fn malformed_durations_are_refused_with_a_hint() {
        for text in ["", "2", "h", "2x", "30m2h", "2h2h", "P", "PT", "-1h", "1.5h", "P1H", "PT1D", "99999999999999999h", "P-1D", "P+1D", "P-1DT1H"] {
            let error = parse_duration(text).expect_err(text);
            assert!(error.contains("duration") || error.contains("maximum"), "{text}: {error}");
        }
    }

    #[test]
    fn formatting_round_trips() {
        for secs in [0, 1, 59, 60, 3600, 9000, 86_400, 90_061] {
            assert_eq!(parse_duration(&format_duration(secs)), Ok(secs), "{secs}");
        }
        assert_eq!(format_duration(9000), "PT2H30M");
        assert_eq!(format_duration(0), "PT0S");
    }
}
