//! The `GPUProvisioningRequest` custom resource (`egs.io/v1alpha1`, short name `gpr`): its
//! Rust type (the CRD in `api/crds/` is generated from it), its status and conditions, and how
//! its spec becomes a gateway GPR's spec or changes. The controller is [`super::resources`].

use chrono::{DateTime, Utc};
use egs_domain::error::UserError;
use egs_domain::gpr::spec::{DEFAULT_PRIORITY, GprChanges, GprSource, GprSpec};
use egs_entities::gpr;
use kube::{CustomResource, CustomResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The finalizer that keeps a resource until its GPR is finished.
pub const FINALIZER: &str = "egs.io/gpr";
/// `status.phase` of a resource EGS did not accept (no GPR was created).
pub const PHASE_INVALID: &str = "Invalid";
/// Condition: EGS accepted the resource and holds a GPR for it.
pub const CONDITION_ACCEPTED: &str = "Accepted";
/// Condition: the GPR's nodes belong to the slice.
pub const CONDITION_PROVISIONED: &str = "Provisioned";
/// Condition: the latest spec (`metadata.generation`) was passed on to the GPR.
pub const CONDITION_SPEC_APPLIED: &str = "SpecApplied";

/// Asks EGS for whole GPU nodes for the slice that owns this namespace, for a strict reserved
/// window. EGS creates a GPU Provision Request (GPR) for it and writes its progress to the
/// status; deleting the resource cancels a waiting GPR or gives provisioned nodes back early.
// Clippy reads the printcolumns' `type_ = "string"` as one attribute given twice.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "egs.io",
    version = "v1alpha1",
    kind = "GPUProvisioningRequest",
    shortname = "gpr",
    namespaced,
    status = "GPUProvisioningRequestStatus",
    doc = "A request for whole GPU nodes for the slice that owns the namespace, served by EGS.",
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(name = "Nodes", type_ = "integer", json_path = ".spec.nodes"),
    // Future times: `date` columns print ages, which kubectl shows as `<invalid>` for them.
    printcolumn(name = "Estimated start", type_ = "string", json_path = ".status.estimatedStartAt"),
    printcolumn(name = "Exit", type_ = "string", json_path = ".status.exitAt"),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp")
)]
#[serde(rename_all = "camelCase")]
pub struct GPUProvisioningRequestSpec {
    /// How many whole nodes, all from one pool.
    #[schemars(range(min = 1))]
    pub nodes: i32,
    /// GPUs wanted on each node; absent means every GPU of the node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus_per_node: Option<i32>,
    /// GPU product, e.g. `NVIDIA-H100-80GB-HBM3`; absent lets the scheduler pick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_shape: Option<String>,
    /// Node instance type, e.g. `p5.48xlarge`; absent lets the scheduler pick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_type: Option<String>,
    /// 1–300, higher runs first; default 101.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// The strict reserved window: `2h30m`, `90m`, `1d12h` or ISO 8601 `PT2H30M`.
    pub duration: String,
    /// Release the nodes once all their GPUs stay idle this long (same format as `duration`);
    /// absent: the slice's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout: Option<String>,
    /// Whether a higher-priority GPR may take the nodes back; default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemptible: Option<bool>,
    /// An advance reservation: not before this time (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earliest_start_at: Option<String>,
    /// Labels of the GPR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// The slice to ask for; absent: the slice that owns the namespace (the only one allowed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice: Option<String>,
}

/// What EGS reports about the request.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GPUProvisioningRequestStatus {
    /// The GPR's phase (`PENDING_APPROVAL`, `QUEUED`, `PROVISIONING`, `PROVISIONED`, `RELEASING`,
    /// `COMPLETED`, `CANCELLED`, `REJECTED`, `FAILED`), or `Invalid` when EGS did not accept
    /// the resource (see the `Accepted` condition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// The GPR's id in the EGS GraphQL API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpr_id: Option<String>,
    /// 1-based position in its queue while waiting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_position: Option<i32>,
    /// Expected start, allowing for early releases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_start_at: Option<String>,
    /// Planned start: an upper bound unless higher-priority work arrives or a node fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_no_later_than: Option<String>,
    /// Names of the nodes handed to the slice.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioned_at: Option<String>,
    /// When the reserved window ends and the nodes are taken back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_at: Option<String>,
    /// Why the nodes were taken back (`EXPIRED`, `EARLY_RELEASED`, `IDLE_TIMEOUT`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_reason: Option<String>,
    /// More about the phase, when there is more to say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The `metadata.generation` EGS last acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// `Accepted`, `Provisioned` and `SpecApplied`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<GprCondition>,
}

/// A condition in the Kubernetes convention.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GprCondition {
    #[serde(rename = "type")]
    pub type_: String,
    /// `True` or `False`.
    pub status: String,
    /// A CamelCase word for machines.
    pub reason: String,
    #[serde(default)]
    pub message: String,
    /// When `status` last changed (RFC 3339).
    pub last_transition_time: String,
}

/// The CustomResourceDefinition as YAML, as checked in at
/// `api/crds/gpuprovisioningrequests.egs.io.yaml` (`egs print-crd`).
pub fn crd_yaml() -> String {
    let crd = GPUProvisioningRequest::crd();
    match serde_saphyr::to_string(&crd) {
        Ok(yaml) => yaml,
        // JSON is YAML too; never expected, as the CRD is plain data.
        Err(_) => serde_json::to_string_pretty(&crd).unwrap_or_default() + "\n",
    }
}

/// `PENDING_APPROVAL` → `PendingApproval`.
pub(super) fn camel_case(text: &str) -> String {
    text.split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map(|first| first.to_uppercase().chain(chars.flat_map(char::to_lowercase)).collect::<String>()).unwrap_or_default()
        })
        .collect()
}

/// The resource's name for a gateway input field.
pub(super) fn resource_field(field: &[String]) -> String {
    let gateway = field.last().map(String::as_str).unwrap_or_default();
    match gateway {
        "" => "spec".into(),
        "name" => "metadata.name".into(),
        "nodeCount" => "spec.nodes".into(),
        "sliceId" => "spec.slice".into(),
        "preferredClusterIds" => "cluster".into(),
        other => format!("spec.{other}"),
    }
}

/// `spec.nodes: must be at least 1; spec.duration: ...`.
pub(super) fn describe(errors: &[UserError]) -> String {
    let parts: Vec<String> = errors.iter().map(|e| format!("{}: {}", resource_field(&e.field), e.message)).collect();
    if parts.is_empty() { "invalid".into() } else { parts.join("; ") }
}

pub(super) struct Parsed {
    duration_secs: i64,
    idle_timeout_secs: Option<i64>,
    earliest_start_at: Option<DateTime<Utc>>,
}

/// The text fields of the spec, parsed; every problem at once.
pub(super) fn parse_fields(spec: &GPUProvisioningRequestSpec) -> Result<Parsed, Vec<UserError>> {
    let mut errors = Vec::new();
    let duration_secs = egs_wire::duration::parse_secs(&spec.duration).map_err(|e| errors.push(UserError::invalid("duration", e))).unwrap_or(0);
    let idle_timeout_secs = match &spec.idle_timeout {
        Some(text) => egs_wire::duration::parse_secs(text).map(Some).map_err(|e| errors.push(UserError::invalid("idleTimeout", e))).unwrap_or(None),
        None => None,
    };
    let earliest_start_at = match &spec.earliest_start_at {
        Some(text) => DateTime::parse_from_rfc3339(text.trim())
            .map(|t| Some(t.with_timezone(&Utc)))
            .map_err(|e| {
                errors.push(UserError::invalid("earliestStartAt", format!("`{text}` is not an RFC 3339 time ({e}), e.g. 2030-01-02T15:04:05Z")))
            })
            .unwrap_or(None),
        None => None,
    };
    if errors.is_empty() { Ok(Parsed { duration_secs, idle_timeout_secs, earliest_start_at }) } else { Err(errors) }
}

pub(super) fn to_gpr_spec(
    spec: &GPUProvisioningRequestSpec,
    slice_id: i64,
    name: &str,
    cluster_id: i64,
    uid: &str,
    reference: &str,
) -> Result<GprSpec, Vec<UserError>> {
    let parsed = parse_fields(spec)?;
    Ok(GprSpec {
        slice_id,
        name: name.to_owned(),
        node_count: spec.nodes,
        gpus_per_node: spec.gpus_per_node,
        min_gpu_memory_mib: None,
        gpu_shape: spec.gpu_shape.clone(),
        instance_type: spec.instance_type.clone(),
        preferred_cluster_ids: vec![cluster_id],
        priority: spec.priority.unwrap_or(DEFAULT_PRIORITY),
        duration_secs: parsed.duration_secs,
        idle_timeout_secs: parsed.idle_timeout_secs,
        preemptible: spec.preemptible.unwrap_or(true),
        requeue_on_failure: None,
        earliest_start_at: parsed.earliest_start_at,
        labels: spec.labels.clone().unwrap_or_default(),
        source: Some(GprSource { uid: uid.to_owned(), reference: reference.to_owned() }),
        template_id: None,
        workload: None,
    })
}

/// The earliest start to send with an edit. Always sent: `update_gpr` checks an unchanged one
/// against the minimum time, which overflows (a panic) in `check_spec_fields`. An unchanged
/// one that has passed is cleared instead (it no longer holds the GPR back), as a passed time
/// that is sent is refused as in the past.
pub(super) fn earliest_start_change(wanted: Option<DateTime<Utc>>, stored: Option<DateTime<Utc>>, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    match wanted {
        Some(at) if Some(at) == stored && at < now => None,
        other => other,
    }
}

/// The edits that bring a pending GPR in line with the spec. Fields the spec leaves out keep
/// what the gateway filled in (the slice's idle timeout, an admin's priority).
pub(super) fn to_changes(spec: &GPUProvisioningRequestSpec, found: &gpr::Model) -> Result<GprChanges, Vec<UserError>> {
    let parsed = parse_fields(spec)?;
    Ok(GprChanges {
        node_count: Some(spec.nodes),
        gpus_per_node: Some(spec.gpus_per_node),
        gpu_shape: Some(spec.gpu_shape.clone()),
        instance_type: Some(spec.instance_type.clone()),
        // Left out: as it is (an admin may have re-prioritised it).
        priority: spec.priority,
        duration_secs: Some(parsed.duration_secs),
        idle_timeout_secs: parsed.idle_timeout_secs.map(Some),
        preemptible: spec.preemptible,
        earliest_start_at: Some(earliest_start_change(parsed.earliest_start_at, found.earliest_start_at, Utc::now())),
        labels: Some(spec.labels.clone().unwrap_or_default()),
        ..Default::default()
    })
}

pub(super) fn condition<'a>(status: &'a GPUProvisioningRequestStatus, kind: &str) -> Option<&'a GprCondition> {
    status.conditions.iter().find(|c| c.type_ == kind)
}

pub(super) fn set_condition(
    out: &mut Vec<GprCondition>,
    current: &GPUProvisioningRequestStatus,
    kind: &str,
    ok: bool,
    reason: &str,
    message: &str,
    now: &str,
) {
    let status = if ok { "True" } else { "False" };
    let since = condition(current, kind).filter(|c| c.status == status).map_or_else(|| now.to_owned(), |c| c.last_transition_time.clone());
    out.push(GprCondition {
        type_: kind.to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message: message.to_owned(),
        last_transition_time: since,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    const CHECKED_IN: &str = include_str!("../../crds/gpuprovisioningrequests.egs.io.yaml");

    #[test]
    fn the_checked_in_crd_matches_the_resource_type() {
        assert!(
            CHECKED_IN == crd_yaml(),
            "api/crds/gpuprovisioningrequests.egs.io.yaml is out of date with the GPUProvisioningRequest type; regenerate it with\n\n    \
             cargo run -p egs-api --bin egs -- print-crd > api/crds/gpuprovisioningrequests.egs.io.yaml\n"
        );
    }

    #[test]
    fn the_crd_names_the_group_kind_short_name_and_status_subresource() {
        let crd: Value = serde_json::to_value(GPUProvisioningRequest::crd()).expect("json");
        assert_eq!(crd["metadata"]["name"], "gpuprovisioningrequests.egs.io");
        assert_eq!(crd["spec"]["scope"], "Namespaced");
        assert_eq!(crd["spec"]["names"]["shortNames"], json!(["gpr"]));
        let version = &crd["spec"]["versions"][0];
        assert_eq!(version["name"], "v1alpha1");
        assert!(version["subresources"]["status"].is_object());
        let columns: Vec<&str> = version["additionalPrinterColumns"].as_array().expect("columns").iter().filter_map(|c| c["name"].as_str()).collect();
        assert_eq!(columns, ["Phase", "Nodes", "Estimated start", "Exit", "Age"]);
        let spec = &version["schema"]["openAPIV3Schema"]["properties"]["spec"];
        assert_eq!(spec["required"], json!(["duration", "nodes"]));
        assert_eq!(spec["properties"]["nodes"]["minimum"].as_f64(), Some(1.0));
    }

    fn spec(json: Value) -> GPUProvisioningRequestSpec {
        serde_json::from_value(json).expect("a spec")
    }

    #[test]
    fn a_spec_becomes_a_gpr_spec_with_its_source_and_cluster() {
        let s = spec(json!({ "nodes": 2, "duration": "2h30m", "idleTimeout": "PT30M", "gpuShape": "H100", "labels": { "team": "a" } }));
        let out = to_gpr_spec(&s, 7, "train", 3, "uid-1", "c1/team-a/train").expect("valid");
        assert_eq!((out.node_count, out.duration_secs, out.idle_timeout_secs), (2, 9000, Some(1800)));
        assert_eq!((out.priority, out.preemptible, out.preferred_cluster_ids.as_slice()), (DEFAULT_PRIORITY, true, &[3][..]));
        let source = out.source.expect("a source");
        assert_eq!((source.uid.as_str(), source.reference.as_str()), ("uid-1", "c1/team-a/train"));
    }

    #[test]
    fn unparsable_text_fields_are_all_reported_with_the_resource_field_names() {
        let s = spec(json!({ "nodes": 1, "duration": "soon", "idleTimeout": "2x", "earliestStartAt": "tomorrow" }));
        let errors = to_gpr_spec(&s, 1, "n", 1, "u", "r").expect_err("invalid");
        let text = describe(&errors);
        assert!(text.contains("spec.duration: `soon` is not a duration"), "{text}");
        assert!(text.contains("spec.idleTimeout:") && text.contains("spec.earliestStartAt:"), "{text}");
        assert_eq!(resource_field(&["input".into(), "nodeCount".into()]), "spec.nodes");
    }

    #[test]
    fn an_unchanged_earliest_start_is_sent_again_unless_it_has_passed() {
        let now = Utc::now();
        let (past, future) = (now - chrono::Duration::hours(1), now + chrono::Duration::hours(1));
        assert_eq!(earliest_start_change(Some(future), Some(future), now), Some(future));
        assert_eq!(earliest_start_change(Some(past), Some(past), now), None, "cleared: it no longer holds the GPR back");
        assert_eq!(earliest_start_change(Some(past), None, now), Some(past), "a new past time is sent, and refused");
        assert_eq!(earliest_start_change(None, Some(future), now), None);
    }

    #[test]
    fn conditions_keep_their_transition_time_until_their_status_flips() {
        let mut before = Vec::new();
        set_condition(&mut before, &Default::default(), CONDITION_ACCEPTED, true, "GprCreated", "", "t0");
        let current = GPUProvisioningRequestStatus { conditions: before, ..Default::default() };
        let mut same = Vec::new();
        set_condition(&mut same, &current, CONDITION_ACCEPTED, true, "GprCreated", "again", "t1");
        assert_eq!(same[0].last_transition_time, "t0");
        let mut flipped = Vec::new();
        set_condition(&mut flipped, &current, CONDITION_ACCEPTED, false, "Rejected", "", "t2");
        assert_eq!(flipped[0].last_transition_time, "t2");
        assert_eq!(camel_case("PENDING_APPROVAL"), "PendingApproval");
    }
}
