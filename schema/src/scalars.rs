//! Custom scalars. `DateTime` comes from async-graphql's chrono support (RFC 3339).

use async_graphql::{InputValueError, InputValueResult, Scalar, ScalarType, Value};
use egs_wire::duration::{format_iso, parse_secs};

/// A span of time, at whole-second resolution, in [`egs_wire::duration`]'s grammar: `2h30m`,
/// `90m`, `45s`, `1d12h` or ISO 8601 `PT2H30M` / `P1DT12H`; always written back as ISO 8601.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Duration(pub i64);

impl Duration {
    pub fn secs(self) -> i64 {
        self.0
    }
}

/// A duration such as `2h30m` or ISO 8601 `PT2H30M`; results are always ISO 8601.
#[Scalar(name = "Duration")]
impl ScalarType for Duration {
    fn parse(value: Value) -> InputValueResult<Self> {
        match value {
            Value::String(text) => parse_secs(&text).map(Duration).map_err(InputValueError::custom),
            other => Err(InputValueError::expected_type(other)),
        }
    }

    /// Lets validation refuse a bad literal before execution (a 400, not a field error).
    fn is_valid(value: &Value) -> bool {
        matches!(value, Value::String(text) if parse_secs(text).is_ok())
    }

    fn to_value(&self) -> Value {
        Value::String(format_iso(self.0))
    }
}
