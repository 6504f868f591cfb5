//! Label selectors (the query string syntax and `metav1.LabelSelector` objects) and field
//! selectors, with the matching rules of `k8s.io/apimachinery/pkg/labels` and `fields`.

use super::kinds::Kind;
use super::status::ApiError;
use serde_json::Value;

#[derive(Debug, Clone)]
enum Op {
    Eq(String),
    NotEq(String),
    In(Vec<String>),
    NotIn(Vec<String>),
    Exists,
    DoesNotExist,
    Gt(i64),
    Lt(i64),
}

#[derive(Debug, Clone)]
struct Requirement {
    key: String,
    op: Op,
}

/// A conjunction of label requirements; the empty selector matches everything.
#[derive(Debug, Clone, Default)]
pub(crate) struct LabelSelector(Vec<Requirement>);

fn parse_error(what: impl std::fmt::Display) -> ApiError {
    ApiError::bad_request(format!("unable to parse requirement: {what}"))
}

/// Splits on commas that are not inside `(...)`.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn valid_key(key: &str) -> bool {
    !key.is_empty() && key.len() <= 317 && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/'))
}

fn valid_value(value: &str) -> bool {
    value.len() <= 63 && value.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
}

fn value(text: &str) -> Result<String, ApiError> {
    let text = text.trim();
    if valid_value(text) { Ok(text.to_owned()) } else { Err(parse_error(format!("invalid label value: \"{text}\""))) }
}

fn parse_set(rest: &str) -> Result<Vec<String>, ApiError> {
    let inner =
        rest.trim().strip_prefix('(').and_then(|r| r.strip_suffix(')')).ok_or_else(|| parse_error(format!("found '{rest}', expected: '('")))?;
    inner.split(',').map(value).collect()
}

fn parse_requirement(term: &str) -> Result<Requirement, ApiError> {
    let term = term.trim();
    if let Some(key) = term.strip_prefix('!') {
        let key = key.trim();
        return if valid_key(key) {
            Ok(Requirement { key: key.to_owned(), op: Op::DoesNotExist })
        } else {
            Err(parse_error(format!("invalid key: \"{key}\"")))
        };
    }
    let end = term.find(|c: char| c.is_whitespace() || matches!(c, '!' | '=' | '<' | '>' | '(')).unwrap_or(term.len());
    let (key, rest) = term.split_at(end);
    if !valid_key(key) {
        return Err(parse_error(format!("invalid key: \"{key}\"")));
    }
    let key = key.to_owned();
    let rest = rest.trim_start();
    let op = if rest.is_empty() {
        Op::Exists
    } else if let Some(v) = rest.strip_prefix("!=") {
        Op::NotEq(value(v)?)
    } else if let Some(v) = rest.strip_prefix("==").or_else(|| rest.strip_prefix('=')) {
        Op::Eq(value(v)?)
    } else if let Some(v) = rest.strip_prefix('>') {
        Op::Gt(v.trim().parse().map_err(|_| parse_error(format!("for 'Gt', 'Lt' operators, the value must be an integer: {v}")))?)
    } else if let Some(v) = rest.strip_prefix('<') {
        Op::Lt(v.trim().parse().map_err(|_| parse_error(format!("for 'Gt', 'Lt' operators, the value must be an integer: {v}")))?)
    } else if let Some(set) = rest.strip_prefix("notin") {
        Op::NotIn(parse_set(set)?)
    } else if let Some(set) = rest.strip_prefix("in") {
        Op::In(parse_set(set)?)
    } else {
        return Err(parse_error(format!("found '{rest}', expected: in, notin, =, ==, !=, gt, lt")));
    };
    Ok(Requirement { key, op })
}

impl LabelSelector {
    /// Parses the `labelSelector` query parameter: `k=v`, `k==v`, `k!=v`, `k`, `!k`,
    /// `k in (a,b)`, `k notin (a,b)`, `k>1`, `k<1`, joined by commas (AND).
    pub(crate) fn parse(text: &str) -> Result<Self, ApiError> {
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        split_top_level(text).into_iter().map(parse_requirement).collect::<Result<_, _>>().map(Self)
    }

    /// A `metav1.LabelSelector` object (`matchLabels`, `matchExpressions`). `None` for a
    /// null selector, which selects nothing (the policy/v1 PDB rule).
    pub(crate) fn from_object(selector: &Value) -> Option<Self> {
        if selector.is_null() {
            return None;
        }
        let mut requirements = Vec::new();
        if let Some(labels) = selector["matchLabels"].as_object() {
            for (key, value) in labels {
                requirements.push(Requirement { key: key.clone(), op: Op::Eq(value.as_str().unwrap_or_default().to_owned()) });
            }
        }
        for expression in selector["matchExpressions"].as_array().into_iter().flatten() {
            let key = expression["key"].as_str().unwrap_or_default().to_owned();
            let values: Vec<String> = expression["values"].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(str::to_owned)).collect();
            let op = match expression["operator"].as_str().unwrap_or_default() {
                "In" => Op::In(values),
                "NotIn" => Op::NotIn(values),
                "Exists" => Op::Exists,
                "DoesNotExist" => Op::DoesNotExist,
                // An unknown operator is rejected by validation on a real server; select nothing.
                _ => return None,
            };
            requirements.push(Requirement { key, op });
        }
        Some(Self(requirements))
    }

    /// Whether an object's `metadata.labels` satisfy every requirement.
    pub(crate) fn matches(&self, object: &Value) -> bool {
        let labels = &object["metadata"]["labels"];
        self.0.iter().all(|r| {
            let label = labels.get(&r.key).and_then(Value::as_str);
            match &r.op {
                Op::Eq(v) => label == Some(v.as_str()),
                // `!=` and `notin` also select objects without the label.
                Op::NotEq(v) => label != Some(v.as_str()),
                Op::In(set) => label.is_some_and(|l| set.iter().any(|v| v == l)),
                Op::NotIn(set) => !label.is_some_and(|l| set.iter().any(|v| v == l)),
                Op::Exists => label.is_some(),
                Op::DoesNotExist => label.is_none(),
                Op::Gt(n) => label.and_then(|l| l.parse::<i64>().ok()).is_some_and(|l| l > *n),
                Op::Lt(n) => label.and_then(|l| l.parse::<i64>().ok()).is_some_and(|l| l < *n),
            }
        })
    }
}

/// A field selector: `field=value`, `field==value`, `field!=value`, joined by commas.
#[derive(Debug, Clone, Default)]
pub(crate) struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    /// Parses `fieldSelector` for `kind`; unsupported fields are a 400, as on a real server.
    pub(crate) fn parse(text: &str, kind: &Kind) -> Result<Self, ApiError> {
        let mut terms = Vec::new();
        for term in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (field, equal, value) = if let Some((f, v)) = term.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                (f, true, v)
            } else {
                return Err(ApiError::bad_request(format!("invalid selector: '{text}'; can't understand '{term}'")));
            };
            let field = field.trim();
            if !matches!(field, "metadata.name" | "metadata.namespace") && !kind.fields.contains(&field) {
                return Err(ApiError::bad_request(format!("field label not supported: {field}")));
            }
            terms.push((field.to_owned(), equal, value.trim().to_owned()));
        }
        Ok(Self(terms))
    }

    pub(crate) fn with_name(mut self, name: &str) -> Self {
        self.0.push(("metadata.name".into(), true, name.to_owned()));
        self
    }

    pub(crate) fn matches(&self, object: &Value) -> bool {
        self.0.iter().all(|(field, equal, value)| (field_value(object, field) == *value) == *equal)
    }
}

/// A field as the server's field set has it: strings as they are, other scalars printed, and
/// missing fields as "" (so `spec.nodeName=` selects unscheduled pods).
fn field_value(object: &Value, field: &str) -> String {
    // The few labels that are not plain paths, or default to "false" on a real server.
    let (path, missing) = match field {
        "source" => ("source.component", ""),
        "spec.unschedulable" | "spec.hostNetwork" => (field, "false"),
        _ => (field, ""),
    };
    let found = path.split('.').try_fold(object, |v, segment| v.get(segment));
    match found {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => missing.to_owned(),
        Some(other) => other.to_string(),
    }
}
