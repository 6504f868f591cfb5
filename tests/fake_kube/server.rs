//! The HTTP side: routing of `/api` and `/apis` paths, bearer-token authentication, RBAC,
//! fault injection and holds, the REST verbs, and watch streams.

use super::kinds::{KINDS, Kind};
use super::patch::{self, PatchType};
use super::rbac::{self, Attributes};
use super::selectors::{FieldSelector, LabelSelector};
use super::status::{ApiError, json_response};
use super::store::{Change, EventType, Scope, Store, Write, uid};
use super::{AuditEntry, WatchEntry};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State as AxumState;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc, oneshot, watch};

/// What the server and the test-side handle share.
pub(crate) struct Shared {
    state: Mutex<State>,
    /// Closes when the `FakeKube` is dropped: watch streams end then.
    pub shutdown: watch::Receiver<()>,
    /// `127.0.0.1:PORT`, for discovery.
    pub address: String,
}

impl Shared {
    pub(crate) fn new(state: State, shutdown: watch::Receiver<()>, address: String) -> Self {
        Self { state: Mutex::new(state), shutdown, address }
    }

    /// The state; a panic elsewhere does not make the fake unusable.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records writes in the audit log, whatever their outcome.
    fn finish(&self, request: &Request, user: &str, response: Response) -> Response {
        if matches!(request.method, Method::POST | Method::PUT | Method::PATCH | Method::DELETE) {
            let entry = AuditEntry {
                method: request.method.to_string(),
                path: request.path.clone(),
                status: response.status().as_u16(),
                user: user.to_owned(),
            };
            self.lock().audit.push(entry);
        }
        response
    }
}

/// Who a token belongs to.
#[derive(Debug, Clone)]
pub(crate) enum Identity {
    Admin,
    ServiceAccount { namespace: String, name: String, uid: String },
}

impl Identity {
    pub(crate) fn user(&self) -> String {
        match self {
            Self::Admin => "kubernetes-admin".to_owned(),
            Self::ServiceAccount { namespace, name, .. } => format!("system:serviceaccount:{namespace}:{name}"),
        }
    }
}

pub(crate) struct Token {
    identity: Identity,
    expires: Option<chrono::DateTime<chrono::Utc>>,
    /// Whom it is for (a TokenReview must ask for one of them).
    audiences: Vec<String>,
    /// The pod it is bound to, `(namespace, name, uid, node)`: it dies with the pod, and a
    /// review names the node.
    pod: Option<(String, String, String, Option<String>)>,
}

/// An injected error for the next matching requests.
pub(crate) struct Fault {
    pub method: String,
    pub path_contains: String,
    pub status: u16,
    pub remaining: usize,
}

/// Matching requests wait until `release` turns true; they wait forever if its sender goes.
pub(crate) struct HoldRule {
    pub id: u64,
    pub method: String,
    pub path_contains: String,
    pub release: watch::Receiver<bool>,
    pub arrived: watch::Sender<usize>,
}

fn method_matches(rule: &str, method: &Method) -> bool {
    rule.is_empty() || rule == "*" || rule.eq_ignore_ascii_case(method.as_str())
}

pub(crate) struct State {
    pub store: Store,
    tokens: HashMap<String, Token>,
    pub audit: Vec<AuditEntry>,
    /// Every watch opened, in order (reads are not audited; watches show who is watching).
    pub watches: Vec<WatchEntry>,
    pub faults: Vec<Fault>,
    pub holds: Vec<HoldRule>,
    pub next_hold: u64,
}

impl State {
    pub(crate) fn new(admin_token: &str) -> Self {
        let mut tokens = HashMap::new();
        tokens.insert(admin_token.to_owned(), Token { identity: Identity::Admin, expires: None, audiences: Vec::new(), pod: None });
        Self { store: Store::new(), tokens, audit: Vec::new(), watches: Vec::new(), faults: Vec::new(), holds: Vec::new(), next_hold: 0 }
    }

    /// The identity behind a bearer token. Service account tokens die with their account:
    /// they name its uid, so a new account of the same name does not revive them.
    fn authenticate(&self, token: &str) -> Option<Identity> {
        let found = self.tokens.get(token)?;
        if found.expires.is_some_and(|at| at <= chrono::Utc::now()) {
            return None;
        }
        if let Identity::ServiceAccount { namespace, name, uid } = &found.identity {
            let account = self.store.get(Kind::named("serviceaccounts")?, Some(namespace), name)?;
            if account["metadata"]["uid"] != uid.as_str() || !account["metadata"]["deletionTimestamp"].is_null() {
                return None;
            }
        }
        if let Some((namespace, name, uid, _)) = &found.pod {
            let pod = self.store.get(Kind::named("pods")?, Some(namespace), name)?;
            if pod["metadata"]["uid"] != uid.as_str() || !pod["metadata"]["deletionTimestamp"].is_null() {
                return None;
            }
        }
        Some(found.identity.clone())
    }

    /// What a TokenReview answers for `token` and `audiences` (the API server's by default).
    fn review(&self, token: &str, audiences: &[String]) -> Value {
        let refused = |error: &str| json!({ "authenticated": false, "error": error });
        let Some(identity) = self.authenticate(token) else {
            return refused("[invalid bearer token, service account token has been invalidated]");
        };
        let Some(found) = self.tokens.get(token) else { return refused("invalid bearer token") };
        let wanted: Vec<String> = if audiences.is_empty() { vec![API_AUDIENCE.to_owned()] } else { audiences.to_vec() };
        let valid_for: Vec<&String> = match &identity {
            Identity::Admin => wanted.iter().filter(|a| *a == API_AUDIENCE).collect(),
            Identity::ServiceAccount { .. } => wanted.iter().filter(|a| found.audiences.contains(a)).collect(),
        };
        if valid_for.is_empty() {
            return refused("[invalid bearer token, token audiences don't match]");
        }
        let mut extra = serde_json::Map::new();
        if let Some((_, pod, pod_uid, node)) = &found.pod {
            extra.insert("authentication.kubernetes.io/pod-name".into(), json!([pod]));
            extra.insert("authentication.kubernetes.io/pod-uid".into(), json!([pod_uid]));
            if let Some(node) = node {
                extra.insert("authentication.kubernetes.io/node-name".into(), json!([node]));
            }
        }
        let (uid, groups) = match &identity {
            Identity::Admin => (String::new(), json!(["system:masters", "system:authenticated"])),
            Identity::ServiceAccount { namespace, uid, .. } => {
                (uid.clone(), json!(["system:serviceaccounts", format!("system:serviceaccounts:{namespace}"), "system:authenticated"]))
            }
        };
        json!({
            "authenticated": true,
            "user": { "username": identity.user(), "uid": uid, "groups": groups, "extra": extra },
            "audiences": valid_for,
        })
    }

    /// A bound service account token (a JWT-shaped string) valid for `seconds`; 404 when the
    /// account does not exist. Returns the token and its expiry (RFC 3339).
    pub(crate) fn issue_token(
        &mut self,
        namespace: &str,
        name: &str,
        seconds: i64,
        audiences: &Value,
        bound: &Value,
    ) -> Result<(String, String), ApiError> {
        let kind = Kind::named("serviceaccounts").ok_or_else(|| ApiError::internal("no serviceaccounts resource"))?;
        let account = self.store.get(kind, Some(namespace), name).ok_or_else(|| ApiError::not_found(kind, name))?;
        // Bound to a pod of the account's namespace: it lives no longer than the pod.
        let pod = match bound["kind"].as_str() {
            Some("Pod") => {
                let pods = Kind::named("pods").ok_or_else(|| ApiError::internal("no pods resource"))?;
                let pod_name = bound["name"].as_str().unwrap_or_default();
                let found = self.store.get(pods, Some(namespace), pod_name).ok_or_else(|| ApiError::not_found(pods, pod_name))?;
                if found["spec"]["serviceAccountName"].as_str().unwrap_or("default") != name {
                    return Err(ApiError::bad_request(format!(
                        "cannot bind token for serviceaccount \"{name}\" to pod running with different serviceaccount name."
                    )));
                }
                let pod_uid = found["metadata"]["uid"].as_str().unwrap_or_default().to_owned();
                if bound["uid"].as_str().is_some_and(|u| u != pod_uid) {
                    return Err(ApiError::new(
                        409,
                        "Conflict",
                        format!("the UID in the bound object reference ({}) does not match the UID in record", bound["uid"]),
                    ));
                }
                Some((namespace.to_owned(), pod_name.to_owned(), pod_uid, found["spec"]["nodeName"].as_str().map(str::to_owned)))
            }
            Some(other) => return Err(ApiError::bad_request(format!("cannot bind a token to a {other} in this fake"))),
            None => None,
        };
        let account_uid = account["metadata"]["uid"].as_str().unwrap_or_default().to_owned();
        let issued = chrono::Utc::now();
        let expires = issued + chrono::Duration::seconds(seconds);
        let claims = json!({
            "aud": audiences,
            "exp": expires.timestamp(),
            "iat": issued.timestamp(),
            "nbf": issued.timestamp(),
            "iss": "https://kubernetes.default.svc.cluster.local",
            "jti": uid(),
            "kubernetes.io": { "namespace": namespace, "serviceaccount": { "name": name, "uid": account_uid } },
            "sub": format!("system:serviceaccount:{namespace}:{name}"),
        });
        let signature: [u8; 32] = rand::random();
        let token = format!(
            "{}.{}.{}",
            URL_SAFE_NO_PAD.encode(r#"{"alg":"RS256","kid":"fake-kube"}"#),
            URL_SAFE_NO_PAD.encode(claims.to_string()),
            URL_SAFE_NO_PAD.encode(signature)
        );
        let identity = Identity::ServiceAccount { namespace: namespace.to_owned(), name: name.to_owned(), uid: account_uid };
        let audiences = audiences.as_array().into_iter().flatten().filter_map(|a| a.as_str().map(str::to_owned)).collect();
        self.tokens.insert(token.clone(), Token { identity, expires: Some(expires), audiences, pod });
        Ok((token, expires.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)))
    }

    fn take_fault(&mut self, request: &Request) -> Option<u16> {
        let index = self.faults.iter().position(|f| method_matches(&f.method, &request.method) && request.path.contains(&f.path_contains))?;
        let fault = &mut self.faults[index];
        fault.remaining = fault.remaining.saturating_sub(1);
        let status = fault.status;
        if fault.remaining == 0 {
            self.faults.remove(index);
        }
        Some(status)
    }

    fn hold_for(&self, request: &Request) -> Option<watch::Receiver<bool>> {
        let rule = self.holds.iter().find(|h| method_matches(&h.method, &request.method) && request.path.contains(&h.path_contains))?;
        rule.arrived.send_modify(|n| *n += 1);
        Some(rule.release.clone())
    }
}

/// The parts of a request the handlers read.
struct Request {
    method: Method,
    path: String,
    query: HashMap<String, String>,
    content_type: String,
    body: Bytes,
}

impl Request {
    fn param(&self, name: &str) -> Option<&str> {
        self.query.get(name).map(String::as_str).filter(|v| !v.is_empty())
    }

    fn flag(&self, name: &str) -> bool {
        matches!(self.param(name), Some("true" | "1"))
    }

    fn write(&self) -> Write {
        Write { dry_run: self.param("dryRun") == Some("All"), fixture: false }
    }

    fn json(&self) -> Result<Value, ApiError> {
        serde_json::from_slice(&self.body).map_err(|e| ApiError::bad_request(format!("couldn't get version/kind; json parse error: {e}")))
    }

    /// The body, or `{}` when there is none (DELETE, eviction).
    fn json_or_empty(&self) -> Result<Value, ApiError> {
        if self.body.iter().all(u8::is_ascii_whitespace) { Ok(json!({})) } else { self.json() }
    }
}

enum Route {
    /// A discovery document; `true` for the aggregated (apidiscovery.k8s.io/v2) form.
    Discovery(Value, bool),
    Resource(Target),
}

/// The media type of aggregated discovery documents, which clients ask for in `Accept`.
const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// A resource path: `kind`, in `namespace`, maybe one object and a subresource of it.
struct Target {
    kind: &'static Kind,
    namespace: Option<String>,
    name: Option<String>,
    subresource: Option<String>,
}

impl Target {
    fn attributes<'a>(&'a self, verb: &'a str) -> Attributes<'a> {
        // Requests on a namespace object are "in" that namespace, as RBAC sees them.
        let namespace = if self.kind.plural == "namespaces" { self.name.as_deref() } else { self.namespace.as_deref() };
        Attributes { verb, kind: self.kind, subresource: self.subresource.as_deref(), namespace, name: self.name.as_deref() }
    }

    fn name(&self) -> &str {
        self.name.as_deref().unwrap_or_default()
    }

    fn scope(&self) -> Scope {
        if self.subresource.as_deref() == Some("status") { Scope::Status } else { Scope::Main }
    }
}

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new().fallback(handle).with_state(shared)
}

async fn handle(AxumState(shared): AxumState<Arc<Shared>>, method: Method, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let query = uri.query().map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect()).unwrap_or_default();
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let request = Request { method, path: uri.path().to_owned(), query, content_type, body };
    // The version is public on a real cluster (system:public-info-viewer).
    if request.path == "/version" && request.method == Method::GET {
        return json_response(StatusCode::OK, &version());
    }
    let token = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer ")).map(str::trim);
    let identity = token.and_then(|t| shared.lock().authenticate(t));
    let Some(identity) = identity else {
        return shared.finish(&request, "system:anonymous", ApiError::unauthorized().into_response());
    };
    let user = identity.user();
    let aggregated = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|accept| accept.contains("as=APIGroupDiscoveryList"));
    let route = match route(&request.path, &shared.address, aggregated) {
        Ok(route) => route,
        Err(error) => return shared.finish(&request, &user, error.into_response()),
    };
    let verb = match &route {
        Route::Resource(target) => match verb(&request, target) {
            Ok(verb) => verb,
            Err(error) => return shared.finish(&request, &user, error.into_response()),
        },
        Route::Discovery(..) => "get",
    };
    if let (Identity::ServiceAccount { namespace, name, .. }, Route::Resource(target)) = (&identity, &route) {
        let attributes = target.attributes(verb);
        let allowed = rbac::allows(&shared.lock().store, namespace, name, &attributes);
        if !allowed {
            let error = ApiError::forbidden(target.kind, target.name(), &attributes.denial(&user));
            return shared.finish(&request, &user, error.into_response());
        }
    }
    let held = shared.lock().hold_for(&request);
    let Some(mut release) = held else {
        return process(&shared, &request, route, verb, &user);
    };
    // Served from a task of its own: once released, a held request is applied even if its
    // client has hung up, as a real server applies a write it has received.
    let (answer, answered) = oneshot::channel();
    tokio::spawn(async move {
        if release.wait_for(|released| *released).await.is_err() {
            // The hold was dropped without release: the request stays frozen, never applied.
            std::future::pending::<()>().await;
        }
        let _ = answer.send(process(&shared, &request, route, verb, &user));
    });
    answered.await.unwrap_or_else(|_| ApiError::internal("the held request was dropped").into_response())
}

fn process(shared: &Shared, request: &Request, route: Route, verb: &str, user: &str) -> Response {
    let fault = shared.lock().take_fault(request);
    let response = match (fault, route) {
        (Some(code), Route::Resource(target)) => ApiError::injected(code, Some(target.kind), target.name()).into_response(),
        (Some(code), _) => ApiError::injected(code, None, "").into_response(),
        (None, Route::Discovery(body, aggregated)) => {
            let mut response = json_response(StatusCode::OK, &body);
            if aggregated {
                response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(AGGREGATED));
            }
            response
        }
        (None, Route::Resource(target)) => serve(shared, request, &target, verb).unwrap_or_else(IntoResponse::into_response),
    };
    shared.finish(request, user, response)
}

/// Maps a path to discovery documents or a served resource; anything else is a 404.
fn route(path: &str, address: &str, aggregated: bool) -> Result<Route, ApiError> {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let legacy = |document: Option<Value>| document.map(|d| Route::Discovery(d, false)).ok_or_else(ApiError::no_such_resource);
    let (group, version, rest) = match segments.as_slice() {
        ["api"] if aggregated => return Ok(Route::Discovery(aggregated_list(&[""]), true)),
        ["apis"] if aggregated => return Ok(Route::Discovery(aggregated_list(&groups()), true)),
        ["api"] => {
            return legacy(Some(
                json!({ "kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [{ "clientCIDR": "0.0.0.0/0", "serverAddress": address }] }),
            ));
        }
        ["apis"] => {
            return legacy(Some(
                json!({ "kind": "APIGroupList", "apiVersion": "v1", "groups": groups().iter().map(|g| group_document(g)).collect::<Vec<_>>() }),
            ));
        }
        ["apis", group] => {
            return legacy(groups().contains(group).then(|| json!({ "kind": "APIGroup", "apiVersion": "v1" }).merged(group_document(group))));
        }
        ["api", "v1"] => return legacy(resource_list("", "v1")),
        ["apis", group, version] => return legacy(resource_list(group, version)),
        ["api", "v1", rest @ ..] => ("", "v1", rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return Err(ApiError::no_such_resource()),
    };
    // `namespaces/{ns}/{resource}...`, except a namespace's own subresources.
    let namespace_subresource = rest.len() == 3 && group.is_empty() && matches!(rest[2], "status" | "finalize");
    let (namespace, rest) =
        if rest.len() >= 3 && rest[0] == "namespaces" && !namespace_subresource { (Some(rest[1]), &rest[2..]) } else { (None, rest) };
    let (plural, name, subresource) = match rest {
        [plural] => (*plural, None, None),
        [plural, name] => (*plural, Some(*name), None),
        [plural, name, sub] => (*plural, Some(*name), Some(*sub)),
        _ => return Err(ApiError::no_such_resource()),
    };
    let kind = Kind::find(group, version, plural).ok_or_else(ApiError::no_such_resource)?;
    let subresource_served = match subresource {
        None => true,
        Some("status") => kind.status,
        Some("eviction") => kind.plural == "pods" && kind.group.is_empty(),
        Some("token") => kind.plural == "serviceaccounts",
        Some(_) => false,
    };
    let placed = if kind.namespaced { namespace.is_some() || name.is_none() } else { namespace.is_none() };
    let named = [namespace, name, subresource].iter().flatten().all(|s| !s.is_empty());
    if !subresource_served || !placed || !named {
        return Err(ApiError::no_such_resource());
    }
    Ok(Route::Resource(Target {
        kind,
        namespace: namespace.map(str::to_owned),
        name: name.map(str::to_owned),
        subresource: subresource.map(str::to_owned),
    }))
}

/// The RBAC verb of a request, or 405 for methods the path does not take.
fn verb(request: &Request, target: &Target) -> Result<&'static str, ApiError> {
    let named = target.name.is_some();
    // All-namespaces paths of namespaced resources only list and watch.
    let collection_writable = target.namespace.is_some() || !target.kind.namespaced;
    let watch = request.flag("watch");
    Ok(match (&request.method, named, target.subresource.as_deref()) {
        (&Method::GET, false, None) if watch => "watch",
        (&Method::GET, false, None) => "list",
        (&Method::GET, true, None) if watch => "watch",
        (&Method::GET, true, None | Some("status")) => "get",
        (&Method::POST, false, None) if collection_writable => "create",
        (&Method::POST, true, Some("eviction" | "token")) => "create",
        (&Method::PUT, true, None | Some("status")) => "update",
        (&Method::PATCH, true, None | Some("status")) => "patch",
        (&Method::DELETE, true, None) => "delete",
        (&Method::DELETE, false, None) if collection_writable => "deletecollection",
        _ => return Err(ApiError::method_not_allowed()),
    })
}

fn serve(shared: &Shared, request: &Request, target: &Target, verb: &str) -> Result<Response, ApiError> {
    let kind = target.kind;
    let namespace = target.namespace.as_deref();
    let name = target.name();
    let ok = |code: StatusCode, body: Value| Ok(json_response(code, &body));
    match (verb, target.subresource.as_deref()) {
        ("list", _) => list(shared, request, target),
        ("watch", _) => watch_stream(shared, request, target),
        ("get", _) => {
            shared.lock().store.get(kind, namespace, name).map(|o| json_response(StatusCode::OK, &o)).ok_or_else(|| ApiError::not_found(kind, name))
        }
        ("create", None) if kind.plural == "tokenreviews" => token_review(shared, request),
        ("create", None) => ok(StatusCode::CREATED, shared.lock().store.create(kind, namespace, request.json()?, request.write())?),
        ("create", Some("eviction")) => {
            shared.lock().store.evict(namespace.unwrap_or_default(), name, &request.json_or_empty()?, request.write())?;
            ok(StatusCode::CREATED, json!({ "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201 }))
        }
        ("create", _) => token_request(shared, request, target),
        ("update", _) => {
            let (object, created) = shared.lock().store.update(kind, namespace, name, request.json()?, target.scope(), request.write())?;
            ok(if created { StatusCode::CREATED } else { StatusCode::OK }, object)
        }
        ("patch", _) => {
            let patch_type = PatchType::from_content_type(&request.content_type).ok_or_else(|| patch::unsupported(kind))?;
            let field_manager = request.param("fieldManager");
            let (object, created) =
                shared.lock().store.patch(kind, namespace, name, patch_type, &request.body, field_manager, target.scope(), request.write())?;
            ok(if created { StatusCode::CREATED } else { StatusCode::OK }, object)
        }
        ("delete", _) => {
            let options = request.json_or_empty()?;
            let mut write = request.write();
            write.dry_run |= options["dryRun"].as_array().is_some_and(|d| d.iter().any(|v| v == "All"));
            ok(StatusCode::OK, shared.lock().store.delete(kind, namespace, name, &options, write)?)
        }
        ("deletecollection", _) => {
            let labels = LabelSelector::parse(request.param("labelSelector").unwrap_or_default())?;
            let fields = FieldSelector::parse(request.param("fieldSelector").unwrap_or_default(), kind)?;
            let mut state = shared.lock();
            let doomed: Vec<String> =
                state.store.list(kind, namespace).into_iter().filter(|(_, o)| labels.matches(o) && fields.matches(o)).map(|((_, n), _)| n).collect();
            let deleted: Vec<Value> =
                doomed.iter().filter_map(|n| state.store.delete(kind, namespace, n, &json!({}), request.write()).ok()).collect();
            let rv = state.store.resource_version().to_string();
            ok(
                StatusCode::OK,
                json!({ "kind": format!("{}List", kind.kind), "apiVersion": kind.api_version(), "metadata": { "resourceVersion": rv }, "items": deleted }),
            )
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}

/// A continue token: where the previous page ended and the resourceVersion of the first page.
fn encode_continue(rv: u64, after: &(String, String)) -> String {
    URL_SAFE_NO_PAD.encode(json!({ "v": "meta.k8s.io/v1", "rv": rv, "start": [after.0, after.1] }).to_string())
}

fn decode_continue(token: &str) -> Result<(u64, (String, String)), ApiError> {
    let invalid = || ApiError::bad_request(format!("continue key is not valid: {token}"));
    let decoded: Value = URL_SAFE_NO_PAD.decode(token).ok().and_then(|b| serde_json::from_slice(&b).ok()).ok_or_else(invalid)?;
    match (decoded["rv"].as_u64(), decoded["start"][0].as_str(), decoded["start"][1].as_str()) {
        (Some(rv), Some(ns), Some(name)) => Ok((rv, (ns.to_owned(), name.to_owned()))),
        _ => Err(invalid()),
    }
}

fn list(shared: &Shared, request: &Request, target: &Target) -> Result<Response, ApiError> {
    let kind = target.kind;
    let labels = LabelSelector::parse(request.param("labelSelector").unwrap_or_default())?;
    let fields = FieldSelector::parse(request.param("fieldSelector").unwrap_or_default(), kind)?;
    let limit = request.param("limit").and_then(|l| l.parse::<usize>().ok()).filter(|l| *l > 0);
    let from = request.param("continue").map(decode_continue).transpose()?;
    let state = shared.lock();
    let rv = match &from {
        Some((rv, _)) => {
            state.store.check_not_compacted(*rv).map_err(|_| ApiError::expired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter."))?;
            *rv
        }
        None => state.store.resource_version(),
    };
    // Pages continue after the last key served (from the current objects, where a real server
    // reads a snapshot at the first page's resourceVersion).
    let matching = state
        .store
        .list(kind, target.namespace.as_deref())
        .into_iter()
        .filter(|(key, _)| from.as_ref().is_none_or(|(_, after)| key > after))
        .filter(|(_, object)| labels.matches(object) && fields.matches(object));
    let (mut items, mut last, mut remaining) = (Vec::new(), None, 0u64);
    for (key, mut object) in matching {
        if limit.is_some_and(|l| items.len() >= l) {
            remaining += 1;
            continue;
        }
        // Items of built-in lists carry no apiVersion/kind; custom resources' do.
        if !kind.custom
            && let Value::Object(fields) = &mut object
        {
            fields.remove("apiVersion");
            fields.remove("kind");
        }
        items.push(object);
        last = Some(key);
    }
    drop(state);
    let mut metadata = json!({ "resourceVersion": rv.to_string() });
    if let (true, Some(last)) = (remaining > 0, last) {
        metadata["continue"] = json!(encode_continue(rv, &last));
        metadata["remainingItemCount"] = json!(remaining);
    }
    Ok(json_response(
        StatusCode::OK,
        &json!({ "kind": format!("{}List", kind.kind), "apiVersion": kind.api_version(), "metadata": metadata, "items": items }),
    ))
}

/// The audience of tokens for the API server itself.
const API_AUDIENCE: &str = "https://kubernetes.default.svc.cluster.local";

/// POST /apis/authentication.k8s.io/v1/tokenreviews: who a token speaks for, and for whom.
fn token_review(shared: &Shared, request: &Request) -> Result<Response, ApiError> {
    let body = request.json()?;
    let token = body["spec"]["token"].as_str().unwrap_or_default();
    if token.is_empty() {
        return Err(ApiError::new(422, "Invalid", "TokenReview.authentication.k8s.io \"\" is invalid: spec.token: Required value".to_owned()));
    }
    let audiences: Vec<String> = body["spec"]["audiences"].as_array().into_iter().flatten().filter_map(|a| a.as_str().map(str::to_owned)).collect();
    let status = shared.lock().review(token, &audiences);
    let answer = json!({
        "kind": "TokenReview",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": { "creationTimestamp": null },
        "spec": { "token": token, "audiences": audiences },
        "status": status,
    });
    Ok(json_response(StatusCode::CREATED, &answer))
}

/// POST .../serviceaccounts/{name}/token (authentication.k8s.io/v1 TokenRequest).
fn token_request(shared: &Shared, request: &Request, target: &Target) -> Result<Response, ApiError> {
    let body = request.json_or_empty()?;
    let name = target.name();
    let seconds = body["spec"]["expirationSeconds"].as_i64().unwrap_or(3600);
    let too = if seconds < 600 {
        Some("may not specify a duration less than 10 minutes")
    } else if seconds > 1 << 32 {
        Some("may not specify a duration larger than 2^32 seconds")
    } else {
        None
    };
    if let Some(problem) = too {
        let cause = format!("Invalid value: {seconds}: {problem}");
        return Err(ApiError::new(
            422,
            "Invalid",
            format!("TokenRequest.authentication.k8s.io \"{name}\" is invalid: spec.expirationSeconds: {cause}"),
        )
        .with_details(json!({
            "name": name, "group": "authentication.k8s.io", "kind": "TokenRequest",
            "causes": [{ "reason": "FieldValueInvalid", "message": cause, "field": "spec.expirationSeconds" }],
        })));
    }
    let audiences = match &body["spec"]["audiences"] {
        Value::Array(a) if !a.is_empty() => Value::Array(a.clone()),
        _ => json!([API_AUDIENCE]),
    };
    let namespace = target.namespace.as_deref().unwrap_or_default();
    let (token, expires) = shared.lock().issue_token(namespace, name, seconds, &audiences, &body["spec"]["boundObjectRef"])?;
    let answer = json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": { "name": name, "namespace": namespace },
        "spec": { "audiences": audiences, "expirationSeconds": seconds, "boundObjectRef": body["spec"]["boundObjectRef"] },
        "status": { "token": token, "expirationTimestamp": expires },
    });
    Ok(json_response(StatusCode::CREATED, &answer))
}

/// Which changes a watch sends, and how.
struct WatchFilter {
    kind: &'static Kind,
    namespace: Option<String>,
    labels: LabelSelector,
    fields: FieldSelector,
}

impl WatchFilter {
    fn matches(&self, object: &Value) -> bool {
        self.labels.matches(object) && self.fields.matches(object)
    }

    /// The watch event line for `change`, if this watch sees it. An object that leaves the
    /// selection is sent as DELETED and one that enters it as ADDED, as a real server does.
    fn line(&self, change: &Change) -> Option<String> {
        if change.storage != self.kind.storage || self.namespace.as_ref().is_some_and(|ns| *ns != change.namespace) {
            return None;
        }
        let object = self.kind.to_view(change.object.clone());
        let now = self.matches(&object);
        let event = match change.event {
            EventType::Added => now.then_some("ADDED"),
            EventType::Deleted => now.then_some("DELETED"),
            EventType::Modified => {
                let before = change.previous.as_ref().is_some_and(|p| self.matches(&self.kind.to_view(p.clone())));
                match (before, now) {
                    (true, true) => Some("MODIFIED"),
                    (false, true) => Some("ADDED"),
                    (true, false) => Some("DELETED"),
                    (false, false) => None,
                }
            }
        }?;
        Some(event_line(event, &object))
    }
}

fn event_line(event: &str, object: &Value) -> String {
    format!("{}\n", json!({ "type": event, "object": object }))
}

fn bookmark(kind: &Kind, rv: u64, initial_events_end: bool) -> String {
    let mut metadata = json!({ "resourceVersion": rv.to_string() });
    if initial_events_end {
        metadata["annotations"] = json!({ "k8s.io/initial-events-end": "true" });
    }
    event_line("BOOKMARK", &json!({ "kind": kind.kind, "apiVersion": kind.api_version(), "metadata": metadata }))
}

/// GET ...?watch=true: newline-delimited watch events, from the history after
/// `resourceVersion`, or (without one, or with "0") ADDED for every current object first.
fn watch_stream(shared: &Shared, request: &Request, target: &Target) -> Result<Response, ApiError> {
    shared.lock().watches.push(WatchEntry { path: request.path.clone(), label_selector: request.param("labelSelector").map(str::to_owned) });
    let kind = target.kind;
    let labels = LabelSelector::parse(request.param("labelSelector").unwrap_or_default())?;
    let mut fields = FieldSelector::parse(request.param("fieldSelector").unwrap_or_default(), kind)?;
    if let Some(name) = &target.name {
        fields = fields.with_name(name);
    }
    let bookmarks = request.flag("allowWatchBookmarks");
    let initial_events = request.flag("sendInitialEvents");
    if initial_events && request.param("resourceVersionMatch") != Some("NotOlderThan") {
        return Err(ApiError::new(
            422,
            "Invalid",
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ));
    }
    let timeout = Duration::from_secs(request.param("timeoutSeconds").and_then(|t| t.parse().ok()).unwrap_or(1800));
    let filter = WatchFilter { kind, namespace: target.namespace.clone(), labels, fields };
    // Everything up to `current` is read and the live feed subscribed under one lock: no
    // change is lost or sent twice.
    let state = shared.lock();
    let current = state.store.resource_version();
    let mut lines = Vec::new();
    let mut live = true;
    // Without a resourceVersion (or with "0", or asking for initial events) a watch starts
    // with the current objects, as ADDED events.
    match request.param("resourceVersion").filter(|rv| *rv != "0" && !initial_events) {
        None => {
            lines.extend(
                state
                    .store
                    .list(kind, filter.namespace.as_deref())
                    .into_iter()
                    .filter(|(_, o)| filter.matches(o))
                    .map(|(_, o)| event_line("ADDED", &o)),
            );
            if initial_events {
                lines.push(bookmark(kind, current, true));
            }
        }
        Some(rv) => {
            let rv: u64 = rv.parse().map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv}")))?;
            match state.store.changes_after(rv) {
                Ok(changes) => lines.extend(changes.iter().filter_map(|c| filter.line(c))),
                Err(expired) => {
                    // A real server answers 200 and sends the 410 as an ERROR event.
                    lines.push(event_line("ERROR", &expired.status()));
                    live = false;
                }
            }
        }
    }
    let changes = live.then(|| state.store.subscribe());
    drop(state);
    let (sender, receiver) = mpsc::channel::<Result<String, std::convert::Infallible>>(64);
    let shutdown = shared.shutdown.clone();
    tokio::spawn(feed_watch(sender, lines, changes, filter, timeout, bookmarks, current, shutdown));
    let stream = futures_util::stream::unfold(receiver, |mut receiver| async move { receiver.recv().await.map(|line| (line, receiver)) });
    let mut response = Response::new(Body::from_stream(stream));
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Ok(response)
}

/// Writes a watch's events until its timeout, the client leaving, or the fake stopping.
#[allow(clippy::too_many_arguments)]
async fn feed_watch(
    sender: mpsc::Sender<Result<String, std::convert::Infallible>>,
    lines: Vec<String>,
    changes: Option<broadcast::Receiver<Arc<Change>>>,
    filter: WatchFilter,
    timeout: Duration,
    bookmarks: bool,
    mut last_rv: u64,
    mut shutdown: watch::Receiver<()>,
) {
    for line in lines {
        if sender.send(Ok(line)).await.is_err() {
            return;
        }
    }
    let Some(mut changes) = changes else { return };
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            _ = &mut deadline => {
                if bookmarks {
                    let _ = sender.send(Ok(bookmark(filter.kind, last_rv, false))).await;
                }
                return;
            }
            _ = sender.closed() => return,
            _ = shutdown.changed() => return,
            change = changes.recv() => match change {
                Ok(change) => {
                    last_rv = change.rv;
                    if let Some(line) = filter.line(&change)
                        && sender.send(Ok(line)).await.is_err()
                    {
                        return;
                    }
                }
                // A watch that falls too far behind is closed; the client resumes from the
                // last resourceVersion it saw.
                Err(_) => return,
            },
        }
    }
}

fn version() -> Value {
    json!({
        "major": "1",
        "minor": "34",
        "emulationMajor": "1",
        "emulationMinor": "34",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "33",
        "gitVersion": "v1.34.1",
        "gitCommit": "93248f9ae092f571eb870b7664c534bfc7d00f03",
        "gitTreeState": "clean",
        "buildDate": "2025-09-09T19:44:50Z",
        "goVersion": "go1.24.6",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

/// The API groups besides the core one.
fn groups() -> Vec<&'static str> {
    let mut groups: Vec<&str> = KINDS.iter().map(|k| k.group).filter(|g| !g.is_empty()).collect();
    groups.dedup();
    groups
}

fn group_document(group: &str) -> Value {
    let version = KINDS.iter().find(|k| k.group == group).map(|k| k.version).unwrap_or("v1");
    let group_version = json!({ "groupVersion": format!("{group}/{version}"), "version": version });
    json!({ "name": group, "versions": [group_version], "preferredVersion": group_version })
}

const VERBS: [&str; 8] = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

/// A kind's subresources: (name, group, version, kind of the body, verbs).
fn subresources(kind: &Kind) -> Vec<(&'static str, &'static str, &'static str, &'static str, Vec<&'static str>)> {
    let mut subresources = Vec::new();
    if kind.status {
        subresources.push(("status", kind.group, kind.version, kind.kind, vec!["get", "patch", "update"]));
    }
    match (kind.group, kind.plural) {
        ("", "pods") => subresources.push(("eviction", "policy", "v1", "Eviction", vec!["create"])),
        ("", "serviceaccounts") => subresources.push(("token", "authentication.k8s.io", "v1", "TokenRequest", vec!["create"])),
        _ => {}
    }
    subresources
}

/// `/api/v1` and `/apis/{group}/{version}`: an APIResourceList.
fn resource_list(group: &str, version: &str) -> Option<Value> {
    let kinds: Vec<&Kind> = KINDS.iter().filter(|k| k.group == group && k.version == version).collect();
    if kinds.is_empty() {
        return None;
    }
    let mut resources = Vec::new();
    for kind in kinds {
        let mut main =
            json!({ "name": kind.plural, "singularName": kind.singular, "namespaced": kind.namespaced, "kind": kind.kind, "verbs": VERBS });
        if !kind.short_names.is_empty() {
            main["shortNames"] = json!(kind.short_names);
        }
        resources.push(main);
        for (name, sub_group, sub_version, sub_kind, verbs) in subresources(kind) {
            let mut sub = json!({ "name": format!("{}/{name}", kind.plural), "singularName": "", "namespaced": kind.namespaced, "kind": sub_kind, "verbs": verbs });
            if sub_group != kind.group || sub_version != kind.version {
                sub["group"] = json!(sub_group);
                sub["version"] = json!(sub_version);
            }
            resources.push(sub);
        }
    }
    let group_version = if group.is_empty() { version.to_owned() } else { format!("{group}/{version}") };
    Some(json!({ "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources }))
}

/// `/api` or `/apis` as aggregated discovery (apidiscovery.k8s.io/v2) for `groups`.
fn aggregated_list(groups: &[&str]) -> Value {
    let items: Vec<Value> = groups
        .iter()
        .map(|group| {
            let mut versions: Vec<&str> = KINDS.iter().filter(|k| k.group == *group).map(|k| k.version).collect();
            versions.dedup();
            let versions: Vec<Value> = versions
                .iter()
                .map(|version| {
                    let resources: Vec<Value> = KINDS
                        .iter()
                        .filter(|k| k.group == *group && k.version == *version)
                        .map(|kind| {
                            let subresources: Vec<Value> = subresources(kind)
                                .into_iter()
                                .map(|(name, g, v, k, verbs)| json!({ "subresource": name, "responseKind": { "group": g, "version": v, "kind": k }, "verbs": verbs }))
                                .collect();
                            json!({
                                "resource": kind.plural,
                                "responseKind": { "group": kind.group, "version": kind.version, "kind": kind.kind },
                                "scope": if kind.namespaced { "Namespaced" } else { "Cluster" },
                                "singularResource": kind.singular,
                                "verbs": VERBS,
                                "shortNames": kind.short_names,
                                "subresources": subresources,
                            })
                        })
                        .collect();
                    json!({ "version": version, "resources": resources, "freshness": "Current" })
                })
                .collect();
            let metadata = if group.is_empty() { json!({ "creationTimestamp": null }) } else { json!({ "name": group, "creationTimestamp": null }) };
            json!({ "metadata": metadata, "versions": versions })
        })
        .collect();
    json!({ "kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items })
}

/// `json!` objects merged, for the few documents built from parts.
trait Merged {
    fn merged(self, other: Value) -> Value;
}

impl Merged for Value {
    fn merged(mut self, other: Value) -> Value {
        if let (Value::Object(into), Value::Object(from)) = (&mut self, other) {
            into.extend(from);
        }
        self
    }
}
