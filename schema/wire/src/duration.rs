//! The one way EGS reads and writes a span of time, wherever it is written: a GPR's window
//! and idle timeout in GraphQL and in a `GPUProvisioningRequest`, a token's `--ttl`, the node
//! agent's `--interval`, `--buffer` and fault delays.
//!
//! Read: numbers each followed by a unit, largest first and each at most once (`1d12h`,
//! `2h30m`, `90m`, `45s`, `500ms`), or ISO 8601 with whole numbers (`PT2H30M`, `P1DT12H`).
//! Units and the ISO letters may be upper or lower case. Written: ISO 8601 for machines
//! ([`format_iso`]), `1h 5m` for people ([`format_human`]).

use std::time::Duration;

/// The longest span anything in EGS accepts (ten years); longer is a typo.
pub const MAX_SECS: i64 = 10 * 366 * 24 * 3600;

const HINT: &str = "write e.g. `2h30m`, `90m`, `500ms` or `PT2H30M`";

/// Parses a span as [this module](self) describes; the error is a message for people.
pub fn parse(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err(format!("empty duration; {HINT}"));
    }
    let millis = if let Some(iso) = text.strip_prefix(['P', 'p']) { parse_iso(iso) } else { parse_units(text) }
        .ok_or_else(|| format!("`{text}` is not a duration; {HINT}"))?;
    if millis > MAX_SECS as u64 * 1000 {
        return Err(format!("`{text}` is longer than the 10-year maximum"));
    }
    Ok(Duration::from_millis(millis))
}

/// [`parse`], for the places that count whole seconds (a GPR's window, a token's lifetime).
pub fn parse_secs(text: &str) -> Result<i64, String> {
    let span = parse(text)?;
    if span.subsec_millis() != 0 {
        return Err(format!("`{}` is not a whole number of seconds; this duration counts seconds", text.trim()));
    }
    Ok(span.as_secs() as i64)
}

/// Units, largest first, in milliseconds. `ms` is tried before `m`.
const UNITS: [(&str, u64); 5] = [("d", 86_400_000), ("h", 3_600_000), ("ms", 1), ("m", 60_000), ("s", 1000)];
/// The order units must come in (`ms` last).
const RANK: [usize; 5] = [0, 1, 4, 2, 3];

/// `1d2h3m4s5ms` in any subset, in that order; each unit at most once. Milliseconds.
fn parse_units(text: &str) -> Option<u64> {
    let mut rest = text;
    let mut total: u64 = 0;
    let mut next_rank = 0;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits == 0 || digits > 12 {
            return None;
        }
        let value: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit = UNITS.iter().position(|(name, _)| rest.get(..name.len()).is_some_and(|u| u.eq_ignore_ascii_case(name)))?;
        if RANK[unit] < next_rank {
            return None;
        }
        next_rank = RANK[unit] + 1;
        total = total.checked_add(value.checked_mul(UNITS[unit].1)?)?;
        rest = &rest[UNITS[unit].0.len()..];
    }
    Some(total)
}

/// The part of ISO 8601 after `P`: `[nD][T[nH][nM][nS]]`, whole numbers only. Milliseconds.
fn parse_iso(text: &str) -> Option<u64> {
    let (date, time) = match text.find(['T', 't']) {
        Some(t) => (&text[..t], Some(&text[t + 1..])),
        None => (text, None),
    };
    let mut total: u64 = 0;
    if !date.is_empty() {
        // Digits only, as `parse_units` takes them: `u64::parse` would also take a `+`.
        let days = date.strip_suffix(['D', 'd']).filter(|d| (1..=12).contains(&d.len()) && d.bytes().all(|b| b.is_ascii_digit()))?;
        total = days.parse::<u64>().ok()?.checked_mul(86_400_000)?;
    }
    match time {
        Some("") => return None,
        // Hours, minutes and seconds only: no days after `T`, no milliseconds in ISO.
        Some(time) if time.contains(['d', 'D']) || time.to_ascii_lowercase().contains("ms") => return None,
        Some(time) => total = total.checked_add(parse_units(time)?)?,
        None if date.is_empty() => return None,
        None => {}
    }
    Some(total)
}

/// Seconds as ISO 8601, e.g. `PT2H30M`, `P1DT1S`, `PT0S`.
pub fn format_iso(secs: i64) -> String {
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

/// Seconds as people say them, to the two largest units: `45s`, `22m 30s`, `1h 5m`, `1d 3h`.
pub fn format_human(secs: i64) -> String {
    let secs = secs.max(0);
    let (d, h, m, s) = (secs / 86_400, secs % 86_400 / 3600, secs % 3600 / 60, secs % 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) if s == 0 => format!("{m}m"),
        (0, 0, _) => format!("{m}m {s}s"),
        (0, _, 0) => format!("{h}h"),
        (0, _, _) => format!("{h}h {m}m"),
        (_, 0, _) => format!("{d}d"),
        _ => format!("{d}d {h}h"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_and_iso_spans_parse_to_the_same_seconds() {
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
            ("2m30s", 150),
            ("1D", 86_400),
            ("1000ms", 1),
        ] {
            assert_eq!(parse_secs(text), Ok(secs), "{text}");
        }
    }

    #[test]
    fn milliseconds_are_a_unit_after_seconds() {
        assert_eq!(parse("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse("1s500ms"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse("2MS"), Ok(Duration::from_millis(2)));
        assert!(parse("500ms1s").is_err(), "largest unit first");
        assert!(parse("PT0.5S").is_err() && parse("PT500MS").is_err(), "ISO takes whole numbers of H, M and S");
        let error = parse_secs("1500ms").expect_err("half a second");
        assert!(error.contains("whole number of seconds"), "{error}");
    }

    #[test]
    fn malformed_spans_are_refused_with_a_hint() {
        for text in [
            "",
            "2",
            "10",
            "h",
            "s",
            "2x",
            "30m2h",
            "2h2h",
            "P",
            "PT",
            "-1h",
            "1.5h",
            "P1H",
            "PT1D",
            "99999999999999999h",
            "P-1D",
            "P+1D",
            "P-1DT1H",
            "1h 30m",
        ] {
            let error = parse(text).expect_err(text);
            assert!(error.contains("duration") || error.contains("maximum"), "{text}: {error}");
        }
        assert!(parse(&format!("{}s", MAX_SECS + 1)).expect_err("too long").contains("maximum"));
    }

    #[test]
    fn iso_formatting_round_trips() {
        for secs in [0, 1, 59, 60, 3600, 9000, 86_400, 90_061] {
            assert_eq!(parse_secs(&format_iso(secs)), Ok(secs), "{secs}");
        }
        assert_eq!(format_iso(9000), "PT2H30M");
        assert_eq!(format_iso(0), "PT0S");
    }

    #[test]
    fn spans_read_like_people_write_them() {
        assert_eq!(format_human(45), "45s");
        assert_eq!(format_human(600), "10m");
        assert_eq!(format_human(1350), "22m 30s");
        assert_eq!(format_human(3900), "1h 5m");
        assert_eq!(format_human(7200), "2h");
        assert_eq!(format_human(97_200), "1d 3h");
    }
}
