//! What a real API server checks on custom resources: the CRD's structural schema from
//! `deploy/kustomize/base/crd.yaml` (types, nullability, required fields, minimums and
//! maximums, enums, lengths), so the fake refuses with 422 what a real server refuses, and
//! tests cannot build on states a cluster never holds. Unknown fields are pruned, as a real
//! server prunes them.

use super::kinds::Kind;
use super::status::ApiError;
use serde_json::Value;
use std::sync::OnceLock;

/// The `openAPIV3Schema` of the GPUProvisioningRequest CRD's served version.
fn gpr_schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let crd: Value = serde_saphyr::from_str(include_str!("../../deploy/kustomize/base/crd.yaml")).expect("the CRD parses");
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
    })
}

/// Checks (and prunes) a custom resource as its CRD's schema says; the first violation as the
/// real server words it.
pub(crate) fn validate(kind: &Kind, name: &str, object: &mut Value) -> Result<(), ApiError> {
    if kind.plural != "gpuprovisioningrequests" {
        return Ok(());
    }
    let schema = gpr_schema();
    for part in ["spec", "status"] {
        if let Some(value) = object.get_mut(part) {
            let mut problems = Vec::new();
            check(value, &schema["properties"][part], part, &mut problems);
            if let Some((field, cause)) = problems.into_iter().next() {
                return Err(ApiError::invalid(kind, name, &field, "FieldValueInvalid", &cause));
            }
        }
    }
    Ok(())
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn check(value: &mut Value, schema: &Value, path: &str, problems: &mut Vec<(String, String)>) {
    if schema.is_null() {
        return;
    }
    if value.is_null() {
        if !schema["nullable"].as_bool().unwrap_or(false) {
            let expected = schema["type"].as_str().unwrap_or("a value");
            problems.push((path.to_owned(), format!("Invalid value: \"null\": {path} in body must be of type {expected}: \"null\"")));
        }
        return;
    }
    if let Some(expected) = schema["type"].as_str() {
        let actual = type_name(value);
        let fits = actual == expected || (expected == "number" && actual == "integer");
        if !fits {
            problems.push((path.to_owned(), format!("Invalid value: \"{actual}\": {path} in body must be of type {expected}: \"{actual}\"")));
            return;
        }
    }
    if let Some(n) = value.as_f64() {
        if let Some(minimum) = schema["minimum"].as_f64().filter(|m| n < *m) {
            problems.push((path.to_owned(), format!("Invalid value: {value}: {path} in body should be greater than or equal to {minimum}")));
        }
        if let Some(maximum) = schema["maximum"].as_f64().filter(|m| n > *m) {
            problems.push((path.to_owned(), format!("Invalid value: {value}: {path} in body should be less than or equal to {maximum}")));
        }
    }
    if let Some(text) = value.as_str() {
        let length = text.chars().count() as u64;
        if let Some(max) = schema["maxLength"].as_u64().filter(|m| length > *m) {
            problems.push((path.to_owned(), format!("Too long: may not be more than {max} bytes")));
        }
        if let Some(min) = schema["minLength"].as_u64().filter(|m| length < *m) {
            problems.push((path.to_owned(), format!("Invalid value: \"{text}\": {path} in body should be at least {min} chars long")));
        }
    }
    if let Some(allowed) = schema["enum"].as_array().filter(|allowed| !allowed.contains(value)) {
        let listed: Vec<String> = allowed.iter().map(Value::to_string).collect();
        problems.push((path.to_owned(), format!("Unsupported value: {value}: supported values: {}", listed.join(", "))));
    }
    match value {
        Value::Object(fields) => {
            for required in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                if !fields.contains_key(required) {
                    problems.push((format!("{path}.{required}"), "Required value".to_owned()));
                }
            }
            if schema["x-kubernetes-preserve-unknown-fields"].as_bool() == Some(true) {
                return;
            }
            let properties = &schema["properties"];
            if properties.is_object() {
                fields.retain(|name, _| properties.get(name).is_some());
            }
            for (name, field) in fields.iter_mut() {
                check(field, &properties[name.as_str()], &format!("{path}.{name}"), problems);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                check(item, &schema["items"], &format!("{path}[{i}]"), problems);
            }
        }
        _ => {}
    }
}
