//! The four PATCH media types: JSON patch (RFC 6902), merge patch (RFC 7386), strategic merge
//! patch (a subset) and server-side apply (as a merge patch).

use super::kinds::Kind;
use super::status::ApiError;
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PatchType {
    Json,
    Merge,
    Strategic,
    Apply,
}

impl PatchType {
    pub(crate) fn from_content_type(content_type: &str) -> Option<Self> {
        match content_type.split(';').next().unwrap_or_default().trim() {
            "application/json-patch+json" => Some(Self::Json),
            "application/merge-patch+json" => Some(Self::Merge),
            "application/strategic-merge-patch+json" => Some(Self::Strategic),
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => Some(Self::Apply),
            _ => None,
        }
    }
}

pub(crate) fn unsupported(kind: &Kind) -> ApiError {
    let types = if kind.custom {
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    } else {
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json"
    };
    ApiError::unsupported_media_type(format!("the body of the request was in an unknown format - accepted media types include: {types}"))
}

/// Applies `body` to `target` (the object in the requested kind's shape).
pub(crate) fn apply(kind: &Kind, patch_type: PatchType, target: &mut Value, body: &[u8]) -> Result<(), ApiError> {
    match patch_type {
        PatchType::Json => {
            let operations: json_patch::Patch = serde_json::from_slice(body).map_err(|e| ApiError::bad_request(e.to_string()))?;
            // A failed `test` or a bad path: the real server answers 422 with the patch error.
            json_patch::patch(target, &operations).map_err(|e| ApiError::new(422, "Invalid", e.to_string()))
        }
        PatchType::Merge | PatchType::Apply | PatchType::Strategic => {
            // kube sends apply bodies as JSON, which is YAML too; YAML proper is not parsed here.
            let patch: Value = serde_json::from_slice(body).map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
            if !patch.is_object() {
                return Err(ApiError::bad_request("the patch is not a JSON object"));
            }
            if patch_type == PatchType::Strategic {
                if kind.custom {
                    return Err(unsupported(kind));
                }
                strategic_merge(target, &patch, "");
            } else {
                json_patch::merge(target, &patch);
            }
            Ok(())
        }
    }
}

/// How a list field merges in a strategic merge patch (from the Go struct tags).
enum ListStrategy {
    /// `patchStrategy:"merge"` on a list of scalars: union; removal via `$deleteFromPrimitiveList`.
    Union,
    /// `patchStrategy:"merge" patchMergeKey:"..."`: entries merge by that key.
    ByKey(&'static str),
}

/// The built-in lists that do not simply replace. Everything else (taints, tolerations, RBAC
/// rules and subjects, PDB selectors...) replaces, as the Go types say.
fn list_strategy(path: &str) -> Option<ListStrategy> {
    Some(match path {
        ".metadata.finalizers" => ListStrategy::Union,
        ".metadata.ownerReferences" => ListStrategy::ByKey("uid"),
        ".spec.containers"
        | ".spec.initContainers"
        | ".spec.ephemeralContainers"
        | ".spec.volumes"
        | ".spec.imagePullSecrets"
        | ".secrets"
        | ".imagePullSecrets" => ListStrategy::ByKey("name"),
        ".spec.containers[].env" | ".spec.initContainers[].env" => ListStrategy::ByKey("name"),
        ".spec.containers[].ports" | ".spec.initContainers[].ports" => ListStrategy::ByKey("containerPort"),
        ".spec.containers[].volumeMounts" | ".spec.initContainers[].volumeMounts" => ListStrategy::ByKey("mountPath"),
        ".status.conditions" | ".status.addresses" => ListStrategy::ByKey("type"),
        _ => return None,
    })
}

/// Strategic merge patch for the lists in [`list_strategy`], with the `$patch: delete|replace`,
/// `$deleteFromPrimitiveList/...`, `$retainKeys` and `$setElementOrder/...` (ignored)
/// directives. Maps merge as in a merge patch.
fn strategic_merge(target: &mut Value, patch: &Value, path: &str) {
    let Some(patch) = patch.as_object() else {
        *target = patch.clone();
        return;
    };
    if patch.get("$patch").and_then(Value::as_str) == Some("replace") {
        *target = Value::Object(without_directives(patch));
        return;
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Some(fields) = target.as_object_mut() else { return };
    for (key, value) in patch {
        if key.starts_with("$setElementOrder/") || key == "$patch" || key == "$retainKeys" {
            continue;
        }
        if let Some(list) = key.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(items)), Some(remove)) = (fields.get_mut(list), value.as_array()) {
                items.retain(|item| !remove.contains(item));
            }
            continue;
        }
        let child = format!("{path}.{key}");
        match (value, list_strategy(&child), fields.get_mut(key)) {
            (Value::Null, _, _) => {
                fields.remove(key);
            }
            (Value::Array(items), Some(ListStrategy::Union), Some(Value::Array(existing))) => {
                for item in items {
                    if !existing.contains(item) {
                        existing.push(item.clone());
                    }
                }
            }
            (Value::Array(items), Some(ListStrategy::ByKey(merge_key)), Some(Value::Array(existing))) => {
                merge_by_key(existing, items, merge_key, &format!("{child}[]"))
            }
            (Value::Object(_), _, Some(existing)) => strategic_merge(existing, value, &child),
            (value, _, _) => {
                fields.insert(key.clone(), clean(value));
            }
        }
    }
    if let Some(retain) = patch.get("$retainKeys").and_then(Value::as_array) {
        fields.retain(|key, _| retain.iter().any(|k| k.as_str() == Some(key)));
    }
}

fn merge_by_key(existing: &mut Vec<Value>, items: &[Value], merge_key: &str, path: &str) {
    if items.iter().any(|item| item.get("$patch").and_then(Value::as_str) == Some("replace")) {
        *existing = items.iter().filter(|item| item.get("$patch").is_none()).map(clean).collect();
        return;
    }
    for item in items {
        let key = item.get(merge_key);
        let position = key.and_then(|key| existing.iter().position(|e| e.get(merge_key) == Some(key)));
        if item.get("$patch").and_then(Value::as_str) == Some("delete") {
            if let Some(key) = key {
                existing.retain(|e| e.get(merge_key) != Some(key));
            }
            continue;
        }
        match position {
            Some(i) => strategic_merge(&mut existing[i], item, path),
            None => existing.push(clean(item)),
        }
    }
}

fn without_directives(fields: &Map<String, Value>) -> Map<String, Value> {
    fields.iter().filter(|(k, _)| !k.starts_with('$')).map(|(k, v)| (k.clone(), clean(v))).collect()
}

/// A patch value as stored: directives dropped, nulls in maps meaning "absent".
fn clean(value: &Value) -> Value {
    match value {
        Value::Object(fields) => Value::Object(without_directives(fields).into_iter().filter(|(_, v)| !v.is_null()).collect()),
        Value::Array(items) => Value::Array(items.iter().map(clean).collect()),
        other => other.clone(),
    }
}
