//! The object store: every object as JSON under (resource, namespace, name), one global
//! resourceVersion counter, a bounded history of changes for watches, and the write rules of
//! the API server (create/update/patch/delete, finalizers, status subresources, namespaces,
//! PodDisruptionBudget status and evictions).

use super::kinds::{KINDS, Kind, stamp};
use super::patch::{self, PatchType};
use super::selectors::LabelSelector;
use super::status::ApiError;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use tokio::sync::broadcast;

/// (storage plural, namespace or "", name).
pub(crate) type Key = (&'static str, String, String);

/// How many changes watches can resume from; older resourceVersions get 410 Expired.
const HISTORY: usize = 4096;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventType {
    Added,
    Modified,
    Deleted,
}

/// One write, as watches see it. Objects are in the storage kind's shape.
#[derive(Debug)]
pub(crate) struct Change {
    pub rv: u64,
    pub storage: &'static str,
    pub namespace: String,
    pub event: EventType,
    pub object: Value,
    /// The object before a modification: watches with selectors turn an object leaving (or
    /// entering) their selection into DELETED (or ADDED), as the real watch cache does.
    pub previous: Option<Value>,
}

/// Which part of an object a write may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    Main,
    Status,
}

/// How a write is made.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Write {
    /// `dryRun=All`: validate and answer, store nothing.
    pub dry_run: bool,
    /// A test fixture rather than an API request: status is taken as given (no kubelet or
    /// controller is there to write it) and a missing namespace is created.
    pub fixture: bool,
}

pub(crate) struct Store {
    objects: BTreeMap<Key, Value>,
    rv: u64,
    history: VecDeque<Arc<Change>>,
    /// Watches and continue tokens must be at or after this version.
    compacted: u64,
    changes: broadcast::Sender<Arc<Change>>,
}

pub(crate) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// A random version 4 UUID, as `metadata.uid` has.
pub(crate) fn uid() -> String {
    let mut b: [u8; 16] = rand::random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

fn str_at<'a>(object: &'a Value, pointer: &str) -> Option<&'a str> {
    object.pointer(pointer).and_then(Value::as_str).filter(|s| !s.is_empty())
}

fn name_of(object: &Value) -> &str {
    str_at(object, "/metadata/name").unwrap_or_default()
}

fn finalizers(object: &Value) -> Vec<Value> {
    object["metadata"]["finalizers"].as_array().cloned().unwrap_or_default()
}

fn deleting(object: &Value) -> bool {
    str_at(object, "/metadata/deletionTimestamp").is_some()
}

/// `metadata` as a mutable map; callers made sure (in [`Store::prepare`]) it is an object.
fn meta(object: &mut Value) -> &mut Map<String, Value> {
    if !object["metadata"].is_object() {
        object["metadata"] = json!({});
    }
    match &mut object["metadata"] {
        Value::Object(m) => m,
        _ => unreachable!("metadata was just made an object"),
    }
}

/// Sets a nested field, making the maps on the way (and replacing what is not a map).
pub(crate) fn set(object: &mut Value, path: &[&str], value: Value) {
    let Some((last, parents)) = path.split_last() else { return };
    let mut at = object;
    for field in parents {
        if !at.is_object() {
            *at = json!({});
        }
        at = &mut at[*field];
    }
    if !at.is_object() {
        *at = json!({});
    }
    at[*last] = value;
}

/// What generation counts: everything but metadata and status.
fn spec_of(object: &Value) -> Value {
    match object {
        Value::Object(fields) => fields
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "metadata" | "status" | "apiVersion" | "kind"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        _ => Value::Null,
    }
}

fn kind_of(storage: &str) -> &'static Kind {
    KINDS.iter().find(|k| k.plural == storage && k.storage == storage).unwrap_or(&KINDS[0])
}

fn pods() -> &'static Kind {
    kind_of("pods")
}

fn check_name(kind: &Kind, name: &str) -> Result<(), ApiError> {
    let segment = |s: &str| {
        !s.is_empty() && s.bytes().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-') && !s.starts_with('-') && !s.ends_with('-')
    };
    let label = |s: &str| s.len() <= 63 && segment(s);
    let problem = match kind.plural {
        "namespaces" if !label(name) => Some(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        ),
        // RBAC objects only need to be valid path segments.
        "roles" | "rolebindings" if name == "." || name == ".." || name.contains('/') || name.contains('%') => {
            Some("may not contain '/' or '%' and may not be '.' or '..'")
        }
        "namespaces" | "roles" | "rolebindings" => None,
        _ if name.len() > 253 || !name.split('.').all(segment) => Some(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
        ),
        _ => None,
    };
    match problem {
        Some(problem) => Err(ApiError::invalid(kind, name, "metadata.name", "FieldValueInvalid", &format!("Invalid value: \"{name}\": {problem}"))),
        None => Ok(()),
    }
}

/// The QoS class the API server gives a new pod (cpu and memory only, as upstream).
fn qos_class(pod: &Value) -> &'static str {
    let containers: Vec<&Value> =
        ["containers", "initContainers"].iter().flat_map(|list| pod["spec"][list].as_array().into_iter().flatten()).collect();
    let (mut any, mut guaranteed) = (false, !containers.is_empty());
    for container in containers {
        let (requests, limits) = (&container["resources"]["requests"], &container["resources"]["limits"]);
        for resource in ["cpu", "memory"] {
            any |= !requests[resource].is_null() || !limits[resource].is_null();
            guaranteed &= !limits[resource].is_null() && (requests[resource].is_null() || requests[resource] == limits[resource]);
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

/// A pod the disruption controller counts as healthy: Ready (or Running when no Ready
/// condition is recorded) and not being deleted.
fn healthy(pod: &Value) -> bool {
    if deleting(pod) || pod["status"]["phase"] != "Running" {
        return false;
    }
    let conditions = pod["status"]["conditions"].as_array().into_iter().flatten();
    conditions.filter(|c| c["type"] == "Ready").all(|c| c["status"] == "True")
}

/// `minAvailable`/`maxUnavailable` as a count of `expected` pods; percentages round up.
fn scaled(value: &Value, expected: i64) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => match s.strip_suffix('%') {
            Some(percent) => percent.parse::<i64>().ok().map(|p| (p * expected + 99) / 100),
            None => s.parse().ok(),
        },
        _ => None,
    }
}

/// The numbers the disruption controller keeps in a PDB's status.
#[derive(Debug, PartialEq, Eq)]
struct Budget {
    expected: i64,
    desired: i64,
    current: i64,
    allowed: i64,
}

fn budget(pdb: &Value, pods: &[&Value]) -> Budget {
    let selector = LabelSelector::from_object(&pdb["spec"]["selector"]);
    let matching: Vec<&&Value> = pods.iter().filter(|p| selector.as_ref().is_some_and(|s| s.matches(p))).collect();
    let expected = matching.len() as i64;
    let current = matching.iter().filter(|p| healthy(p)).count() as i64;
    let desired = if let Some(min) = scaled(&pdb["spec"]["minAvailable"], expected) {
        min
    } else if let Some(max) = scaled(&pdb["spec"]["maxUnavailable"], expected) {
        (expected - max).max(0)
    } else {
        // Neither set: validation rejects this on a real server; allow no disruption.
        expected
    };
    Budget { expected, desired, current, allowed: (current - desired).max(0) }
}

impl Store {
    pub(crate) fn new() -> Self {
        let (changes, _) = broadcast::channel(HISTORY);
        Self { objects: BTreeMap::new(), rv: 0, history: VecDeque::new(), compacted: 0, changes }
    }

    pub(crate) fn resource_version(&self) -> u64 {
        self.rv
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<Change>> {
        self.changes.subscribe()
    }

    /// The changes after `rv`, or 410 Expired when the history no longer reaches back there.
    pub(crate) fn changes_after(&self, rv: u64) -> Result<Vec<Arc<Change>>, ApiError> {
        self.check_not_compacted(rv)?;
        Ok(self.history.iter().filter(|c| c.rv > rv).cloned().collect())
    }

    pub(crate) fn check_not_compacted(&self, rv: u64) -> Result<(), ApiError> {
        if rv < self.compacted { Err(ApiError::expired(format!("too old resource version: {rv} ({})", self.compacted))) } else { Ok(()) }
    }

    /// Forgets the history, as an etcd compaction does: older watches must re-list.
    pub(crate) fn compact(&mut self) {
        self.history.clear();
        self.compacted = self.rv;
    }

    fn stored(&self, kind: &Kind, namespace: &str, name: &str) -> Option<&Value> {
        self.objects.get(&(kind.storage, namespace.to_owned(), name.to_owned()))
    }

    /// One object as `kind`'s clients see it.
    pub(crate) fn get(&self, kind: &'static Kind, namespace: Option<&str>, name: &str) -> Option<Value> {
        self.stored(kind, namespace.unwrap_or_default(), name).map(|o| kind.to_view(o.clone()))
    }

    /// The objects of `kind` (in `namespace`, or all), in key order, as `kind`'s clients see them.
    pub(crate) fn list(&self, kind: &'static Kind, namespace: Option<&str>) -> Vec<((String, String), Value)> {
        self.objects
            .iter()
            .filter(|((storage, ns, _), _)| *storage == kind.storage && namespace.is_none_or(|n| n == ns))
            .map(|((_, ns, name), o)| ((ns.clone(), name.clone()), kind.to_view(o.clone())))
            .collect()
    }

    fn record(&mut self, change: Change) {
        let change = Arc::new(change);
        self.history.push_back(change.clone());
        while self.history.len() > HISTORY {
            if let Some(old) = self.history.pop_front() {
                self.compacted = old.rv;
            }
        }
        // No receivers is fine: nobody is watching.
        let _ = self.changes.send(change);
    }

    /// Stores `object` at a new resourceVersion and tells watches.
    fn put(&mut self, kind: &'static Kind, mut object: Value, event: EventType, previous: Option<Value>) -> Value {
        self.rv += 1;
        meta(&mut object).insert("resourceVersion".into(), json!(self.rv.to_string()));
        let namespace = str_at(&object, "/metadata/namespace").unwrap_or_default().to_owned();
        let key = (kind.storage, namespace.clone(), name_of(&object).to_owned());
        self.objects.insert(key, object.clone());
        self.record(Change { rv: self.rv, storage: kind.storage, namespace, event, object: object.clone(), previous });
        object
    }

    /// Removes an object for good; the DELETED event carries the deletion's resourceVersion.
    fn remove(&mut self, kind: &'static Kind, namespace: &str, name: &str) -> Option<Value> {
        let mut object = self.objects.remove(&(kind.storage, namespace.to_owned(), name.to_owned()))?;
        self.rv += 1;
        meta(&mut object).insert("resourceVersion".into(), json!(self.rv.to_string()));
        self.record(Change {
            rv: self.rv,
            storage: kind.storage,
            namespace: namespace.to_owned(),
            event: EventType::Deleted,
            object: object.clone(),
            previous: None,
        });
        Some(object)
    }

    /// Checks a request body and turns it into the stored shape: an object of this kind, in
    /// the URL's namespace and (when the URL names one) with the URL's name.
    fn prepare(kind: &'static Kind, namespace: Option<&str>, name: Option<&str>, body: Value) -> Result<Value, ApiError> {
        let Value::Object(fields) = &body else {
            return Err(ApiError::bad_request(format!("Object '{}' is missing in '{body}'", kind.kind)));
        };
        for (field, expected) in [("apiVersion", kind.api_version()), ("kind", kind.kind.to_owned())] {
            if let Some(given) = fields.get(field).and_then(Value::as_str).filter(|s| !s.is_empty())
                && given != expected
            {
                return Err(ApiError::bad_request(format!("the {field} in the data ({given}) does not match the expected {field} ({expected})")));
            }
        }
        let meta_value = fields.get("metadata").unwrap_or(&Value::Null);
        if !(meta_value.is_object() || meta_value.is_null())
            || ["labels", "annotations"].iter().any(|f| !(meta_value[f].is_object() || meta_value[f].is_null()))
            || !(meta_value["finalizers"].is_null() || meta_value["finalizers"].as_array().is_some_and(|a| a.iter().all(Value::is_string)))
        {
            return Err(ApiError::bad_request(format!(
                "{} in version \"{}\" cannot be handled as a {}: malformed metadata",
                kind.kind, kind.version, kind.kind
            )));
        }
        let mut object = kind.to_storage(body);
        if let Value::Object(fields) = &mut object {
            stamp(fields, kind.storage_kind());
        }
        let metadata = meta(&mut object);
        let given_namespace = metadata.get("namespace").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
        match (kind.namespaced, namespace, given_namespace) {
            (true, Some(url), Some(given)) if url != given => {
                return Err(ApiError::bad_request("the namespace of the provided object does not match the namespace sent on the request"));
            }
            (true, Some(url), _) => {
                metadata.insert("namespace".into(), json!(url));
            }
            (true, None, _) => return Err(ApiError::bad_request("a namespaced object needs a namespace")),
            (false, _, _) => {
                metadata.remove("namespace");
            }
        }
        if let Some(url_name) = name {
            match metadata.get("name").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                Some(given) if given != url_name => {
                    return Err(ApiError::bad_request(format!("the name of the object ({given}) does not match the name on the URL ({url_name})")));
                }
                _ => {
                    metadata.insert("name".into(), json!(url_name));
                }
            }
        }
        Ok(object)
    }

    /// POST: creates an object from a request body in `kind`'s shape.
    pub(crate) fn create(&mut self, kind: &'static Kind, namespace: Option<&str>, body: Value, write: Write) -> Result<Value, ApiError> {
        let object = Self::prepare(kind, namespace, None, body)?;
        self.create_prepared(kind, object, write)
    }

    fn create_prepared(&mut self, kind: &'static Kind, mut object: Value, write: Write) -> Result<Value, ApiError> {
        let skind = kind.storage_kind();
        let namespace = str_at(&object, "/metadata/namespace").unwrap_or_default().to_owned();
        let name = match (str_at(&object, "/metadata/name"), str_at(&object, "/metadata/generateName")) {
            (Some(name), _) => name.to_owned(),
            (None, Some(prefix)) => {
                const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
                let suffix: String = (0..5).map(|_| ALPHABET[rand::random_range(0..ALPHABET.len())] as char).collect();
                format!("{prefix}{suffix}")
            }
            (None, None) => {
                return Err(ApiError::invalid(kind, "", "metadata.name", "FieldValueRequired", "Required value: name or generateName is required"));
            }
        };
        check_name(kind, &name)?;
        if kind.namespaced {
            match self.stored(kind_of("namespaces"), "", &namespace) {
                None if write.fixture => {
                    self.add_namespace(&namespace);
                }
                None => return Err(ApiError::not_found(kind_of("namespaces"), &namespace)),
                Some(ns) if deleting(ns) => {
                    return Err(ApiError::new(
                        403,
                        "Forbidden",
                        format!(
                            "{} \"{name}\" is forbidden: unable to create new content in namespace {namespace} because it is being terminated",
                            kind.qualified()
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        if self.stored(skind, &namespace, &name).is_some() {
            return Err(ApiError::already_exists(kind, &name));
        }
        let metadata = meta(&mut object);
        if !write.fixture && metadata.get("resourceVersion").and_then(Value::as_str).is_some_and(|rv| !rv.is_empty()) {
            // What a real server answers (a 500, from its storage layer).
            return Err(ApiError::internal("resourceVersion should not be set on objects to be created"));
        }
        metadata.insert("name".into(), json!(name));
        metadata.insert("uid".into(), json!(uid()));
        metadata.insert("creationTimestamp".into(), json!(now()));
        metadata.insert("generation".into(), json!(1));
        for server_owned in ["deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion", "managedFields", "selfLink"] {
            metadata.remove(server_owned);
        }
        if !write.fixture {
            // What each kind's create strategy does to a client's status.
            match skind.plural {
                "pods" => object["status"] = json!({ "phase": "Pending", "qosClass": qos_class(&object) }),
                "poddisruptionbudgets" | "gpuprovisioningrequests" => {
                    if let Value::Object(fields) = &mut object {
                        fields.remove("status");
                    }
                }
                _ => {}
            }
        }
        if !write.fixture {
            super::schema::validate(skind, &name, &mut object)?;
        }
        if skind.plural == "namespaces" {
            meta(&mut object).entry("labels").or_insert_with(|| json!({}))["kubernetes.io/metadata.name"] = json!(name);
            if object["spec"]["finalizers"].is_null() {
                set(&mut object, &["spec", "finalizers"], json!(["kubernetes"]));
            }
            object["status"] = json!({ "phase": "Active" });
        }
        if write.dry_run {
            return Ok(kind.to_view(object));
        }
        let stored = self.put(skind, object, EventType::Added, None);
        if skind.plural == "namespaces" {
            // The service account controller gives every namespace a `default` account.
            let account = json!({ "apiVersion": "v1", "kind": "ServiceAccount", "metadata": { "name": "default", "namespace": name } });
            let _ = self.create_prepared(kind_of("serviceaccounts"), account, Write { fixture: true, dry_run: false });
        }
        self.settle(&namespace);
        Ok(kind.to_view(stored))
    }

    /// A namespace for fixtures (no-op when it exists).
    /// A namespace a test set up (no-op when it exists). One named like a slice is that
    /// slice's, as an admin hands a namespace over (`egs.io/slice=<name>`); the cluster's own
    /// are no one's.
    pub(crate) fn add_namespace(&mut self, name: &str) {
        let system = name == "default" || name.starts_with("kube-");
        let labels = if system { json!({}) } else { json!({ "egs.io/slice": name }) };
        self.add_namespace_labelled(name, labels);
    }

    pub(crate) fn add_namespace_labelled(&mut self, name: &str, labels: Value) {
        if self.stored(kind_of("namespaces"), "", name).is_none() {
            let namespace = json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name, "labels": labels } });
            let _ = self.create_prepared(kind_of("namespaces"), namespace, Write { fixture: true, dry_run: false });
        }
    }

    /// PUT: replaces an object (or its status). Returns the object and whether it was created.
    pub(crate) fn update(
        &mut self,
        kind: &'static Kind,
        namespace: Option<&str>,
        name: &str,
        body: Value,
        scope: Scope,
        write: Write,
    ) -> Result<(Value, bool), ApiError> {
        let new = Self::prepare(kind, namespace, Some(name), body)?;
        match self.stored(kind, namespace.unwrap_or_default(), name).cloned() {
            // Custom resources take no unconditional PUT (AllowUnconditionalUpdate is false).
            Some(_) if kind.custom && !write.fixture && str_at(&new, "/metadata/resourceVersion").is_none() => Err(ApiError::invalid(
                kind,
                name,
                "metadata.resourceVersion",
                "FieldValueInvalid",
                "Invalid value: 0x0: must be specified for an update",
            )),
            Some(stored) => self.write_over(kind, stored, new, scope, write).map(|o| (o, false)),
            None if (kind.create_on_update && scope == Scope::Main) || write.fixture => {
                if str_at(&new, "/metadata/resourceVersion").is_some() && !write.fixture {
                    return Err(ApiError::not_found(kind, name));
                }
                self.create_prepared(kind, new, write).map(|o| (o, true))
            }
            None => Err(ApiError::not_found(kind, name)),
        }
    }

    /// PATCH with any of the four patch types; apply creates missing objects, as SSA does.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn patch(
        &mut self,
        kind: &'static Kind,
        namespace: Option<&str>,
        name: &str,
        patch_type: PatchType,
        body: &[u8],
        field_manager: Option<&str>,
        scope: Scope,
        write: Write,
    ) -> Result<(Value, bool), ApiError> {
        if patch_type == PatchType::Apply && field_manager.is_none_or(str::is_empty) {
            return Err(ApiError::new(
                422,
                "Invalid",
                "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
            ));
        }
        match self.stored(kind, namespace.unwrap_or_default(), name).cloned() {
            Some(stored) => {
                let mut view = kind.to_view(stored.clone());
                patch::apply(kind, patch_type, &mut view, body)?;
                let new = Self::prepare(kind, namespace, Some(name), view)?;
                self.write_over(kind, stored, new, scope, write).map(|o| (o, false))
            }
            None if patch_type == PatchType::Apply && scope == Scope::Main => {
                let mut object = json!({});
                patch::apply(kind, patch_type, &mut object, body)?;
                let mut object = Self::prepare(kind, namespace, Some(name), object)?;
                meta(&mut object).remove("resourceVersion");
                self.create_prepared(kind, object, write).map(|o| (o, true))
            }
            None => Err(ApiError::not_found(kind, name)),
        }
    }

    /// The shared update path of PUT, PATCH and fixtures: optimistic concurrency, status
    /// isolation, server-owned metadata, generation, and deletion once finalizers are gone.
    fn write_over(&mut self, kind: &'static Kind, stored: Value, new: Value, scope: Scope, write: Write) -> Result<Value, ApiError> {
        let skind = kind.storage_kind();
        let name = name_of(&stored).to_owned();
        let namespace = str_at(&stored, "/metadata/namespace").unwrap_or_default().to_owned();
        let stored_rv = str_at(&stored, "/metadata/resourceVersion").unwrap_or_default();
        if str_at(&new, "/metadata/resourceVersion").is_some_and(|rv| rv != stored_rv) {
            return Err(ApiError::modified(kind, &name));
        }
        let stored_uid = str_at(&stored, "/metadata/uid").unwrap_or_default();
        if let Some(uid) = str_at(&new, "/metadata/uid").filter(|u| *u != stored_uid) {
            return Err(ApiError::conflict(
                kind,
                &name,
                &format!("Precondition failed: UID in precondition: {uid}, UID in object meta: {stored_uid}"),
            ));
        }
        let mut next = match scope {
            // A status write changes the status and nothing else.
            Scope::Status => {
                let mut next = stored.clone();
                next["status"] = new["status"].clone();
                next
            }
            Scope::Main => {
                let mut next = new;
                if skind.status && !write.fixture {
                    next["status"] = stored["status"].clone();
                }
                next
            }
        };
        if let Value::Object(fields) = &mut next
            && fields.get("status").is_some_and(Value::is_null)
        {
            fields.remove("status");
        }
        let kept = stored["metadata"].clone();
        let metadata = meta(&mut next);
        for server_owned in ["uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation", "resourceVersion"] {
            match kept.get(server_owned) {
                Some(value) => metadata.insert(server_owned.into(), value.clone()),
                None => metadata.remove(server_owned),
            };
        }
        if deleting(&stored) {
            let before = finalizers(&stored);
            let added: Vec<String> = finalizers(&next).iter().filter(|f| !before.contains(f)).map(|f| f.to_string()).collect();
            if !added.is_empty() {
                let cause = format!(
                    "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    added.join(", ")
                );
                return Err(ApiError::invalid(kind, &name, "metadata.finalizers", "FieldValueForbidden", &cause));
            }
        }
        if !write.fixture {
            super::schema::validate(skind, &name, &mut next)?;
        }
        if spec_of(&next) != spec_of(&stored) {
            let generation = stored["metadata"]["generation"].as_i64().unwrap_or(0) + 1;
            meta(&mut next).insert("generation".into(), json!(generation));
        }
        if next == stored {
            // A no-op write stores nothing: no new resourceVersion, no watch event.
            return Ok(kind.to_view(stored));
        }
        if write.dry_run {
            return Ok(kind.to_view(next));
        }
        let result = if deleting(&next) && finalizers(&next).is_empty() {
            // The last finalizer is gone: the object goes, with a single DELETED event.
            self.objects.insert((skind.storage, namespace.clone(), name.clone()), next);
            self.remove(skind, &namespace, &name).unwrap_or_default()
        } else {
            self.put(skind, next, EventType::Modified, Some(stored))
        };
        self.settle(&namespace);
        Ok(kind.to_view(result))
    }

    /// DELETE: with finalizers, marks the object as being deleted; otherwise removes it.
    /// `options` is a `DeleteOptions` (its `preconditions` are checked).
    pub(crate) fn delete(
        &mut self,
        kind: &'static Kind,
        namespace: Option<&str>,
        name: &str,
        options: &Value,
        write: Write,
    ) -> Result<Value, ApiError> {
        let stored = self.stored(kind, namespace.unwrap_or_default(), name).cloned().ok_or_else(|| ApiError::not_found(kind, name))?;
        Self::check_preconditions(kind, &stored, &options["preconditions"])?;
        if write.dry_run {
            return Ok(kind.to_view(stored));
        }
        let result = if kind.storage == "namespaces" { self.delete_namespace(stored) } else { self.delete_object(kind.storage_kind(), stored) };
        self.settle(namespace.unwrap_or_default());
        Ok(kind.to_view(result))
    }

    fn check_preconditions(kind: &Kind, stored: &Value, preconditions: &Value) -> Result<(), ApiError> {
        let name = name_of(stored);
        let uid = str_at(stored, "/metadata/uid").unwrap_or_default();
        if let Some(wanted) = preconditions["uid"].as_str().filter(|u| !u.is_empty() && *u != uid) {
            return Err(ApiError::conflict(kind, name, &format!("Precondition failed: UID in precondition: {wanted}, UID in object meta: {uid}")));
        }
        let rv = str_at(stored, "/metadata/resourceVersion").unwrap_or_default();
        if let Some(wanted) = preconditions["resourceVersion"].as_str().filter(|v| !v.is_empty() && *v != rv) {
            return Err(ApiError::conflict(
                kind,
                name,
                &format!("Precondition failed: ResourceVersion in precondition: {wanted}, ResourceVersion in object meta: {rv}"),
            ));
        }
        Ok(())
    }

    /// Deletes one stored object (not a namespace), honouring finalizers.
    fn delete_object(&mut self, skind: &'static Kind, stored: Value) -> Value {
        let namespace = str_at(&stored, "/metadata/namespace").unwrap_or_default().to_owned();
        let name = name_of(&stored).to_owned();
        if finalizers(&stored).is_empty() {
            return self.remove(skind, &namespace, &name).unwrap_or(stored);
        }
        if deleting(&stored) {
            return stored;
        }
        let mut next = stored.clone();
        let generation = stored["metadata"]["generation"].as_i64().unwrap_or(0) + 1;
        let metadata = meta(&mut next);
        metadata.insert("deletionTimestamp".into(), json!(now()));
        metadata.insert("deletionGracePeriodSeconds".into(), json!(0));
        metadata.insert("generation".into(), json!(generation));
        self.put(skind, next, EventType::Modified, Some(stored))
    }

    /// A namespace turns Terminating, its contents are deleted, and it goes once it is empty
    /// (at once here, where a real cluster's namespace controller takes a few seconds).
    fn delete_namespace(&mut self, stored: Value) -> Value {
        if deleting(&stored) {
            return stored;
        }
        let kind = kind_of("namespaces");
        let name = name_of(&stored).to_owned();
        let mut next = stored.clone();
        meta(&mut next).insert("deletionTimestamp".into(), json!(now()));
        set(&mut next, &["status", "phase"], json!("Terminating"));
        let terminating = self.put(kind, next, EventType::Modified, Some(stored));
        let contents: Vec<(Key, Value)> = self.objects.iter().filter(|((_, ns, _), _)| *ns == name).map(|(k, v)| (k.clone(), v.clone())).collect();
        for ((storage, _, _), object) in contents {
            self.delete_object(kind_of(storage), object);
        }
        self.settle(&name);
        terminating
    }

    /// What controllers do after a write in `namespace`: the disruption controller updates
    /// PDB status; the namespace controller removes an emptied Terminating namespace.
    fn settle(&mut self, namespace: &str) {
        if namespace.is_empty() {
            return;
        }
        self.refresh_budgets(namespace);
        let namespaces = kind_of("namespaces");
        if let Some(ns) = self.stored(namespaces, "", namespace)
            && deleting(ns)
            && finalizers(ns).is_empty()
            && !self.objects.keys().any(|(_, n, _)| n == namespace)
        {
            self.remove(namespaces, "", namespace);
        }
    }

    fn refresh_budgets(&mut self, namespace: &str) {
        let pdbs: Vec<Value> =
            self.objects.iter().filter(|((s, ns, _), _)| *s == "poddisruptionbudgets" && ns == namespace).map(|(_, v)| v.clone()).collect();
        for pdb in pdbs {
            let pods: Vec<&Value> = self.objects.iter().filter(|((s, ns, _), _)| *s == "pods" && ns == namespace).map(|(_, v)| v).collect();
            let numbers = budget(&pdb, &pods);
            let status = &pdb["status"];
            let generation = pdb["metadata"]["generation"].clone();
            let unchanged = status["expectedPods"] == numbers.expected
                && status["desiredHealthy"] == numbers.desired
                && status["currentHealthy"] == numbers.current
                && status["disruptionsAllowed"] == numbers.allowed
                && status["observedGeneration"] == generation;
            if unchanged {
                continue;
            }
            let (condition, reason) = if numbers.allowed > 0 { ("True", "SufficientPods") } else { ("False", "InsufficientPods") };
            let mut next = pdb.clone();
            next["status"] = json!({
                "observedGeneration": generation,
                "disruptionsAllowed": numbers.allowed,
                "currentHealthy": numbers.current,
                "desiredHealthy": numbers.desired,
                "expectedPods": numbers.expected,
                "conditions": [{
                    "type": "DisruptionAllowed",
                    "status": condition,
                    "reason": reason,
                    "message": "",
                    "observedGeneration": generation,
                    "lastTransitionTime": now(),
                }],
            });
            self.put(kind_of("poddisruptionbudgets"), next, EventType::Modified, Some(pdb));
        }
    }

    /// POST .../pods/{name}/eviction: a delete that PodDisruptionBudgets may refuse with 429.
    pub(crate) fn evict(&mut self, namespace: &str, name: &str, eviction: &Value, write: Write) -> Result<(), ApiError> {
        let pod = self.stored(pods(), namespace, name).cloned().ok_or_else(|| ApiError::not_found(pods(), name))?;
        if str_at(eviction, "/metadata/name").is_some_and(|n| n != name) {
            return Err(ApiError::bad_request("name in URL does not match name in Eviction object"));
        }
        // Terminal, pending and already-deleting pods are evicted without asking budgets.
        let ignores_budgets = matches!(pod["status"]["phase"].as_str(), Some("Succeeded" | "Failed" | "Pending")) || deleting(&pod);
        if !ignores_budgets {
            let pods: Vec<&Value> = self.objects.iter().filter(|((s, ns, _), _)| *s == "pods" && ns == namespace).map(|(_, v)| v).collect();
            let budgets: Vec<&Value> = self
                .objects
                .iter()
                .filter(|((s, ns, _), pdb)| {
                    *s == "poddisruptionbudgets"
                        && ns == namespace
                        && LabelSelector::from_object(&pdb["spec"]["selector"]).is_some_and(|sel| sel.matches(&pod))
                })
                .map(|(_, v)| v)
                .collect();
            if budgets.len() > 1 {
                return Err(ApiError::internal("This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."));
            }
            if let Some(pdb) = budgets.first() {
                let numbers = budget(pdb, &pods);
                if numbers.allowed == 0 {
                    let cause = format!(
                        "The disruption budget {} needs {} healthy pods and has {} currently",
                        name_of(pdb),
                        numbers.desired,
                        numbers.current
                    );
                    return Err(ApiError::too_many_requests(
                        "Cannot evict pod as it would violate the pod's disruption budget.",
                        json!([{ "reason": "DisruptionBudget", "message": cause }]),
                    ));
                }
            }
        }
        Self::check_preconditions(pods(), &pod, &eviction["deleteOptions"]["preconditions"])?;
        if !write.dry_run {
            self.delete_object(pods(), pod);
            self.settle(namespace);
        }
        Ok(())
    }

    /// Fixture upsert: stores `object` (in `kind`'s shape) as given, status included.
    pub(crate) fn put_fixture(&mut self, kind: &'static Kind, object: Value) -> Result<Value, ApiError> {
        let namespace = str_at(&object, "/metadata/namespace").map(str::to_owned);
        let namespace = if kind.namespaced { Some(namespace.unwrap_or_else(|| "default".into())) } else { None };
        let name = str_at(&object, "/metadata/name").ok_or_else(|| ApiError::bad_request("fixtures need metadata.name"))?.to_owned();
        let mut object = object;
        meta(&mut object).remove("resourceVersion");
        self.update(kind, namespace.as_deref(), &name, object, Scope::Main, Write { fixture: true, dry_run: false }).map(|(o, _)| o)
    }
}
