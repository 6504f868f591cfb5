//! The resources the fake serves: one row per (group, version, plural), as discovery lists them.

use serde_json::{Map, Value};

/// A served resource.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Kind {
    pub group: &'static str,
    pub version: &'static str,
    pub plural: &'static str,
    pub singular: &'static str,
    pub kind: &'static str,
    pub namespaced: bool,
    /// Has a `/status` subresource: writes to the main resource keep the stored status.
    pub status: bool,
    /// PUT on a missing object creates it (true for events and RBAC objects on a real server).
    pub create_on_update: bool,
    /// A custom resource: no strategic merge patch, list items keep `apiVersion`/`kind`.
    pub custom: bool,
    /// The plural the objects are stored under: `events.k8s.io/v1` events are a second view
    /// of the core events, as on a real server.
    pub storage: &'static str,
    /// Field selector labels besides `metadata.name` and `metadata.namespace`.
    pub fields: &'static [&'static str],
    pub short_names: &'static [&'static str],
}

const POD_FIELDS: &[&str] = &[
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
];
const EVENT_FIELDS: &[&str] = &[
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
];
const EVENT_V1_FIELDS: &[&str] = &[
    "regarding.kind",
    "regarding.namespace",
    "regarding.name",
    "regarding.uid",
    "regarding.apiVersion",
    "regarding.resourceVersion",
    "regarding.fieldPath",
    "reason",
    "reportingController",
    "type",
];

const fn kind(
    group: &'static str,
    version: &'static str,
    plural: &'static str,
    singular: &'static str,
    kind: &'static str,
    namespaced: bool,
) -> Kind {
    Kind {
        group,
        version,
        plural,
        singular,
        kind,
        namespaced,
        status: false,
        create_on_update: false,
        custom: false,
        storage: plural,
        fields: &[],
        short_names: &[],
    }
}

pub(crate) static KINDS: &[Kind] = &[
    Kind { status: true, fields: &["spec.unschedulable"], short_names: &["no"], ..kind("", "v1", "nodes", "node", "Node", false) },
    Kind { status: true, fields: &["status.phase"], short_names: &["ns"], ..kind("", "v1", "namespaces", "namespace", "Namespace", false) },
    Kind { status: true, fields: POD_FIELDS, short_names: &["po"], ..kind("", "v1", "pods", "pod", "Pod", true) },
    Kind { create_on_update: true, fields: EVENT_FIELDS, short_names: &["ev"], ..kind("", "v1", "events", "event", "Event", true) },
    Kind { short_names: &["sa"], ..kind("", "v1", "serviceaccounts", "serviceaccount", "ServiceAccount", true) },
    Kind { create_on_update: true, ..kind("rbac.authorization.k8s.io", "v1", "roles", "role", "Role", true) },
    Kind { create_on_update: true, ..kind("rbac.authorization.k8s.io", "v1", "rolebindings", "rolebinding", "RoleBinding", true) },
    Kind { status: true, short_names: &["pdb"], ..kind("policy", "v1", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", true) },
    Kind { create_on_update: true, fields: EVENT_V1_FIELDS, short_names: &["ev"], ..kind("events.k8s.io", "v1", "events", "event", "Event", true) },
    // Create only: a review is answered, never stored.
    kind("authentication.k8s.io", "v1", "tokenreviews", "tokenreview", "TokenReview", false),
    Kind {
        status: true,
        custom: true,
        ..kind("egs.io", "v1alpha1", "gpuprovisioningrequests", "gpuprovisioningrequest", "GPUProvisioningRequest", true)
    },
];

impl Kind {
    /// The served resource at `group/version/plural`.
    pub(crate) fn find(group: &str, version: &str, plural: &str) -> Option<&'static Kind> {
        KINDS.iter().find(|k| k.group == group && k.version == version && k.plural == plural)
    }

    /// A kind by any of the names tests use: `Node`, `node`, `nodes`, `no`, `pods.v1`...
    /// Core events win over `events.k8s.io` for `Event`; ask for `events.events.k8s.io` for those.
    pub(crate) fn named(name: &str) -> Option<&'static Kind> {
        KINDS.iter().find(|k| {
            name.eq_ignore_ascii_case(k.kind)
                || name == k.plural
                || name == k.singular
                || name == k.qualified()
                || (!k.group.is_empty() && name == format!("{}.{}", k.kind, k.group))
                || k.short_names.contains(&name)
        })
    }

    pub(crate) fn api_version(&self) -> String {
        if self.group.is_empty() { self.version.to_owned() } else { format!("{}/{}", self.group, self.version) }
    }

    /// `pods`, `gpuprovisioningrequests.egs.io`: how errors name the resource.
    pub(crate) fn qualified(&self) -> String {
        if self.group.is_empty() { self.plural.to_owned() } else { format!("{}.{}", self.plural, self.group) }
    }

    /// `Pod`, `GPUProvisioningRequest.egs.io`: how validation errors name the kind.
    pub(crate) fn qualified_kind(&self) -> String {
        if self.group.is_empty() { self.kind.to_owned() } else { format!("{}.{}", self.kind, self.group) }
    }

    /// The kind whose shape objects are stored in.
    pub(crate) fn storage_kind(&'static self) -> &'static Kind {
        KINDS.iter().find(|k| k.plural == self.storage && k.storage == self.storage).unwrap_or(self)
    }

    /// The object as this kind's clients see it (stored objects are in the storage kind's shape).
    pub(crate) fn to_view(&'static self, stored: Value) -> Value {
        if std::ptr::eq(self.storage_kind(), self) {
            stored
        } else {
            convert_event(stored, self, EVENT_RENAMES.iter().map(|(new, old)| (*old, *new)))
        }
    }

    /// The object as it is stored, from this kind's shape.
    pub(crate) fn to_storage(&'static self, view: Value) -> Value {
        let storage = self.storage_kind();
        if std::ptr::eq(storage, self) { view } else { convert_event(view, storage, EVENT_RENAMES.iter().map(|(new, old)| (*new, *old))) }
    }
}

/// `events.k8s.io/v1` field names and their `core/v1` counterparts; the other fields are shared.
const EVENT_RENAMES: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
    ("reportingController", "reportingComponent"),
];

fn convert_event<'a>(object: Value, to: &Kind, renames: impl Iterator<Item = (&'a str, &'a str)>) -> Value {
    let Value::Object(mut fields) = object else { return object };
    for (from, into) in renames {
        if let Some(value) = fields.remove(from) {
            fields.insert(into.to_owned(), value);
        }
    }
    stamp(&mut fields, to);
    Value::Object(fields)
}

/// Sets `apiVersion` and `kind` to this kind's.
pub(crate) fn stamp(fields: &mut Map<String, Value>, kind: &Kind) {
    fields.insert("apiVersion".into(), Value::String(kind.api_version()));
    fields.insert("kind".into(), Value::String(kind.kind.to_owned()));
}
