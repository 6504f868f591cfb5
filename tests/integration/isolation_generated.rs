//! Isolation cases generated from the schema: every query, mutation and subscription field
//! that takes an `ID` (as an argument or inside an input object) is tried by the owner of one
//! slice with another slice's objects of every kind. The list comes from introspection, so a
//! new field is covered without anyone remembering to add it.
//!
//! A probe passes when nothing of the other slice comes back (none of its ids in `data`, none
//! of its names anywhere) and, after every mutation, the other slice's objects are as before.

use egs_tests::fixtures;
use egs_tests::{TestApp, api_only, ws};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

const INTROSPECTION: &str = "{ __schema {
    queryType { name } mutationType { name } subscriptionType { name }
    types { name kind
        fields { name args { name type { ...T } defaultValue } type { ...T } }
        inputFields { name type { ...T } defaultValue }
        enumValues { name } } } }
    fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }";

/// The other slice's objects, by kind, and words that must never reach the prober.
struct Victim {
    objects: Vec<(&'static str, String)>,
    names: Vec<&'static str>,
    /// Shared inventory: the cluster both slices use and one of its nodes.
    cluster: String,
    node: String,
}

impl Victim {
    fn ids<'a>(&'a self, probe: &'a str) -> Ids<'a> {
        Ids { probe, cluster: &self.cluster, node: &self.node }
    }
}

/// What the prober learns of the schema.
struct Schema {
    types: HashMap<String, Value>,
}

impl Schema {
    fn of(&self, name: &str) -> &Value {
        &self.types[name]
    }

    /// The named type at the bottom of a type reference, and whether it is a list.
    fn named(reference: &Value) -> (String, bool) {
        let (mut at, mut list) = (reference, false);
        while at["name"].is_null() {
            list |= at["kind"] == "LIST";
            at = &at["ofType"];
        }
        (at["name"].as_str().unwrap_or_default().to_owned(), list)
    }

    fn required(reference: &Value, default: &Value) -> bool {
        reference["kind"] == "NON_NULL" && default.is_null()
    }

    /// Whether a value of this type can hold an ID somewhere (bounded depth).
    fn holds_id(&self, reference: &Value, depth: usize) -> bool {
        let (name, _) = Self::named(reference);
        if name == "ID" {
            return true;
        }
        depth < 3
            && self.of(&name)["kind"] == "INPUT_OBJECT"
            && self.of(&name)["inputFields"].as_array().is_some_and(|fields| fields.iter().any(|f| self.holds_id(&f["type"], depth + 1)))
    }

    /// A value of this type with `id` in every ID position, but for positions that name shared
    /// inventory (clusters, nodes), which get the prober's own; `None` to leave an optional out.
    fn value(&self, position: &str, reference: &Value, ids: &Ids, required: bool, depth: usize) -> Option<Value> {
        let (name, list) = Self::named(reference);
        let id = ids.for_position(position);
        if !required && !self.holds_id(reference, depth) {
            return None;
        }
        let kind = self.of(&name)["kind"].as_str().unwrap_or_default().to_owned();
        let one = match (kind.as_str(), name.as_str()) {
            (_, "ID") => json!(id),
            (_, "Int") => json!(1),
            (_, "Float") => json!(1.0),
            (_, "Boolean") => json!(false),
            (_, "DateTime") => json!(chrono::Utc::now().to_rfc3339()),
            (_, "Duration") => json!("1h"),
            ("ENUM", _) => self.of(&name)["enumValues"][0]["name"].clone(),
            ("INPUT_OBJECT", _) if depth < 4 => {
                let mut object = Map::new();
                for field in self.of(&name)["inputFields"].as_array().into_iter().flatten() {
                    let needed = Self::required(&field["type"], &field["defaultValue"]);
                    if let Some(value) = self.value(field["name"].as_str().unwrap_or_default(), &field["type"], ids, needed, depth + 1) {
                        object.insert(field["name"].as_str().unwrap_or_default().to_owned(), value);
                    }
                }
                Value::Object(object)
            }
            ("INPUT_OBJECT", _) => return None,
            _ => json!("x"),
        };
        Some(if list { json!([one]) } else { one })
    }

    /// A selection for a field of this type: typename, id and name, one level of objects
    /// below (connections through `nodes` and `edges`), enough to show what leaked.
    fn selection(&self, reference: &Value, depth: usize) -> String {
        let (name, _) = Self::named(reference);
        let ty = self.of(&name);
        match ty["kind"].as_str() {
            Some("OBJECT" | "INTERFACE" | "UNION") => {}
            _ => return String::new(),
        }
        let mut parts = vec!["__typename".to_owned()];
        for field in ty["fields"].as_array().into_iter().flatten() {
            let field_name = field["name"].as_str().unwrap_or_default();
            let needs_args = field["args"].as_array().is_some_and(|args| args.iter().any(|a| Self::required(&a["type"], &a["defaultValue"])));
            if needs_args {
                continue;
            }
            let (inner, _) = Self::named(&field["type"]);
            match self.of(&inner)["kind"].as_str() {
                Some("SCALAR" | "ENUM") if ["id", "name", "message", "code"].contains(&field_name) => parts.push(field_name.to_owned()),
                Some("OBJECT" | "INTERFACE") if depth < 1 || field_name == "node" => {
                    let below = self.selection(&field["type"], depth + 1);
                    if !below.is_empty() {
                        parts.push(format!("{field_name} {below}"));
                    }
                }
                _ => {}
            }
        }
        format!("{{ {} }}", parts.join(" "))
    }

    /// The operations that put `id` into every ID position of every field of `root` that has one.
    fn probes(&self, root: &str, keyword: &str, ids: &Ids) -> Vec<(String, String, Value)> {
        let mut probes = Vec::new();
        for field in self.of(root)["fields"].as_array().into_iter().flatten() {
            let args = field["args"].as_array().cloned().unwrap_or_default();
            if !args.iter().any(|a| self.holds_id(&a["type"], 0)) {
                continue;
            }
            let name = field["name"].as_str().unwrap_or_default();
            let (mut declared, mut passed, mut variables) = (Vec::new(), Vec::new(), Map::new());
            for (i, arg) in args.iter().enumerate() {
                let needed = Self::required(&arg["type"], &arg["defaultValue"]);
                let Some(value) = self.value(arg["name"].as_str().unwrap_or_default(), &arg["type"], ids, needed, 0) else { continue };
                declared.push(format!("$v{i}: {}", type_text(&arg["type"])));
                passed.push(format!("{}: $v{i}", arg["name"].as_str().unwrap_or_default()));
                variables.insert(format!("v{i}"), value);
            }
            let head = if declared.is_empty() { String::new() } else { format!("({})", declared.join(", ")) };
            let call = if passed.is_empty() { String::new() } else { format!("({})", passed.join(", ")) };
            let query = format!("{keyword} Probe{head} {{ {name}{call} {} }}", self.selection(&field["type"], 0));
            probes.push((name.to_owned(), query, Value::Object(variables)));
        }
        probes
    }
}

/// The id a probe puts where: the victim's object, or shared inventory the prober may name.
struct Ids<'a> {
    probe: &'a str,
    cluster: &'a str,
    node: &'a str,
}

impl Ids<'_> {
    fn for_position(&self, position: &str) -> &str {
        let position = position.to_ascii_lowercase();
        if position.contains("cluster") {
            self.cluster
        } else if position.contains("node") {
            self.node
        } else {
            self.probe
        }
    }
}

fn type_text(reference: &Value) -> String {
    match reference["kind"].as_str() {
        Some("NON_NULL") => format!("{}!", type_text(&reference["ofType"])),
        Some("LIST") => format!("[{}]", type_text(&reference["ofType"])),
        _ => reference["name"].as_str().unwrap_or_default().to_owned(),
    }
}

/// Slice B with a GPR, its events, a namespace, its member bob and his token; the prober owns
/// slice A.
async fn victim(app: &TestApp) -> (String, Victim) {
    let two = fixtures::two_slices(app).await;
    let (_, prober) = fixtures::member(app, "olga", &two.slice_a, "OWNER").await;
    fixtures::create_gpr(app, &prober, &two.slice_a, "own-job", json!({})).await;
    let gpr = fixtures::create_gpr(app, &two.token_b, &two.slice_b, "bob-secret-job", json!({})).await["id"].as_str().expect("id").to_owned();
    let seen = app
        .ok(
            &app.admin_token,
            "query($s: ID, $g: ID!) { slice(id: $s) { namespaces { id } members { user { id } } }
                gpr(id: $g) { events { edges { node { id } } } } tokens { nodes { id user { name } } } nodes(first: 1) { nodes { id } } }",
            json!({ "s": two.slice_b, "g": gpr }),
        )
        .await;
    let bob_token =
        seen["tokens"]["nodes"].as_array().expect("tokens").iter().find(|t| t["user"]["name"] == "bob").expect("bob's token")["id"].clone();
    let objects = vec![
        ("Slice", two.slice_b.clone()),
        ("Gpr", gpr),
        ("GprEvent", seen["gpr"]["events"]["edges"][0]["node"]["id"].as_str().expect("event").to_owned()),
        ("SliceNamespace", seen["slice"]["namespaces"][0]["id"].as_str().expect("namespace").to_owned()),
        ("User", seen["slice"]["members"][0]["user"]["id"].as_str().expect("bob").to_owned()),
        ("AccessToken", bob_token.as_str().expect("token id").to_owned()),
    ];
    let node = seen["nodes"]["nodes"][0]["id"].as_str().expect("a node").to_owned();
    (prober, Victim { objects, names: vec!["bob-secret-job", "team-b"], cluster: two.cluster, node })
}

/// What an admin sees of slice B: must not change whatever the prober sends.
async fn snapshot(app: &TestApp, victim: &Victim) -> Value {
    let id = |kind: &str| victim.objects.iter().find(|(k, _)| *k == kind).map(|(_, id)| id.clone()).expect("kind");
    app.ok(
        &app.admin_token,
        "query($s: ID, $g: ID!, $t: ID!) {
            slice(id: $s) { name description policy { priorityMin priorityMax maxNodesPerGpr kubeconfigSecretsAndExec } members { user { name } role } namespaces { name } }
            gpr(id: $g) { name phase priority version nodeCount labels { key value } }
            gprs(filter: { sliceId: $s }) { totalCount }
            node(id: $t) { ... on AccessToken { name revokedAt expiresAt } } }",
        json!({ "s": id("Slice"), "g": id("Gpr"), "t": id("AccessToken") }),
    )
    .await
}

/// What in `response` betrays slice B: its ids in `data`, its other ids or names anywhere.
fn leaks(response: &Value, victim: &Victim, probe_id: &str) -> Vec<String> {
    // Messages may echo the id the prober sent; what else `data` holds may not name it.
    fn without_messages(value: &Value) -> Value {
        match value {
            Value::Object(map) => Value::Object(map.iter().filter(|(k, _)| *k != "message").map(|(k, v)| (k.clone(), without_messages(v))).collect()),
            Value::Array(items) => Value::Array(items.iter().map(without_messages).collect()),
            other => other.clone(),
        }
    }
    let data = without_messages(&response["data"]).to_string();
    let all = response.to_string();
    let mut found = Vec::new();
    for (kind, id) in &victim.objects {
        if data.contains(id.as_str()) || (id != probe_id && all.contains(id.as_str())) {
            found.push(format!("{kind} id"));
        }
    }
    found.extend(victim.names.iter().filter(|name| all.contains(**name)).map(|name| format!("`{name}`")));
    found
}

async fn introspect(app: &TestApp) -> (Schema, [String; 3]) {
    let body = app.ok(&app.admin_token, INTROSPECTION, json!({})).await;
    let schema = &body["__schema"];
    let types = schema["types"].as_array().expect("types").iter().map(|t| (t["name"].as_str().unwrap_or_default().to_owned(), t.clone())).collect();
    let root = |key: &str| schema[key]["name"].as_str().expect("root").to_owned();
    (Schema { types }, [root("queryType"), root("mutationType"), root("subscriptionType")])
}

#[tokio::test]
async fn every_query_and_mutation_taking_an_id_refuses_another_slices_objects() {
    let app = TestApp::spawn_with(|s| {
        api_only(s);
        s.rate_limit = 0;
    })
    .await;
    let (prober, victim) = victim(&app).await;
    let (schema, [query, mutation, _]) = introspect(&app).await;
    let before = snapshot(&app, &victim).await;

    let (mut tried, mut fields) = (0, std::collections::BTreeSet::new());
    let mut failures = Vec::new();
    for (root, keyword) in [(query.as_str(), "query"), (mutation.as_str(), "mutation")] {
        for (_, probe_id) in &victim.objects {
            for (field, document, variables) in schema.probes(root, keyword, &victim.ids(probe_id)) {
                let response: Value = app.post(Some(&prober), json!({ "query": document, "variables": variables })).await.json().await.expect("JSON");
                let errors = response["errors"].as_array().cloned().unwrap_or_default();
                // A probe the schema itself refused (a value we made up that does not validate)
                // proves nothing: say so rather than count it.
                if errors.iter().any(|e| e["message"].as_str().is_some_and(|m| m.contains("Unknown") || m.contains("expected type"))) {
                    failures.push(format!("{keyword} {field}: the generated probe does not validate: {response}"));
                    continue;
                }
                let leaked = leaks(&response, &victim, probe_id);
                if !leaked.is_empty() {
                    failures.push(format!("{keyword} {field} with {probe_id}: {leaked:?} in {response}"));
                }
                tried += 1;
                fields.insert(format!("{keyword} {field}"));
            }
        }
    }
    let after = snapshot(&app, &victim).await;
    assert_eq!(before, after, "slice B changed under the prober's mutations");
    assert!(failures.is_empty(), "{} of {tried} probes failed:\n{}", failures.len(), failures.join("\n"));
    // The generator reached the fields that matter (a broken generator would try nothing).
    for expected in [
        "query gpr",
        "query slice",
        "query node",
        "query gprs",
        "query gprEvents",
        "mutation updateGpr",
        "mutation cancelGpr",
        "mutation revokeToken",
        "mutation addSliceMember",
    ] {
        assert!(fields.contains(expected), "{expected} was not probed: {fields:?}");
    }
    assert!(tried > 100, "only {tried} probes");
    app.finish().await;
}

#[tokio::test]
async fn every_subscription_taking_an_id_refuses_another_slices_objects() {
    let app = TestApp::spawn_with(|s| s.rate_limit = 0).await;
    let (prober, victim) = victim(&app).await;
    let (schema, [_, _, subscription]) = introspect(&app).await;

    let (mut ws, _) = ws::connect(&app.url(""), ws::TRANSPORT_WS).await.expect("the socket opens");
    ws.send(ws::connection_init(&prober)).await.expect("send");
    let mut operations = HashMap::new();
    for (_, probe_id) in &victim.objects {
        for (field, document, variables) in schema.probes(&subscription, "subscription", &victim.ids(probe_id)) {
            let id = operations.len().to_string();
            ws.send(ws::subscribe(&id, &document, variables)).await.expect("send");
            operations.insert(id, (field, probe_id.clone()));
        }
    }
    // Slice B changes while every probe listens.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let gpr = victim.objects.iter().find(|(k, _)| *k == "Gpr").map(|(_, id)| id.clone()).expect("gpr");
    app.mutate(
        &app.admin_token,
        "setGprPriority",
        "mutation($input: SetGprPriorityInput!) { setGprPriority(input: $input) { gpr { id } userErrors { field message code } } }",
        json!({ "id": gpr, "priority": 150 }),
    )
    .await;
    let mut failures = Vec::new();
    let fields: std::collections::BTreeSet<String> = operations.values().map(|(field, _)| field.clone()).collect();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    while let Ok(Some(frame)) = tokio::time::timeout_at(deadline, ws.next()).await {
        let Ok(Message::Text(text)) = frame else { continue };
        let message: Value = serde_json::from_str(&text).expect("JSON");
        let Some((field, probe_id)) = message["id"].as_str().and_then(|id| operations.get(id)) else { continue };
        let payload = if message["type"] == "error" { json!({ "errors": message["payload"] }) } else { message["payload"].clone() };
        let leaked = leaks(&payload, &victim, probe_id);
        if !leaked.is_empty() {
            failures.push(format!("subscription {field} with {probe_id}: {leaked:?} in {message}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for expected in ["gprEvents", "queueChanged"] {
        assert!(fields.contains(expected), "{expected} was not probed: {fields:?}");
    }
    app.finish().await;
}
