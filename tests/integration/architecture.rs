//! The layout rules ARCHITECTURE.md marks ✔, checked on the sources: a change that breaks one
//! fails here with the import that broke it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

/// Every `.rs` file under `dir`, as (module path, text without comments and test modules).
/// `gpr/mod.rs` is `gpr`, `gpr/types.rs` is `gpr::types`, `lib.rs` is `lib`.
fn modules(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).expect("a source folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") || path.file_stem().is_some_and(|s| s == "tests") {
                continue;
            }
            let relative = path.strip_prefix(dir).expect("under the folder").with_extension("");
            let mut parts: Vec<String> = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            let name = if parts == ["lib"] || parts.is_empty() { "lib".to_owned() } else { parts.join("::") };
            out.insert(name, code_of(&std::fs::read_to_string(&path).expect("a source file")));
        }
    }
    out
}

/// The code of a file: comments dropped, and everything from its `#[cfg(test)]` test module on.
fn code_of(text: &str) -> String {
    let text = text.find("#[cfg(test)]\nmod ").map_or(text, |at| &text[..at]);
    text.lines().map(|line| line.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n")
}

/// Whether a module defines GraphQL types (objects, inputs, roots).
fn defines_graphql(code: &str) -> bool {
    [
        "#[Object",
        "#[Subscription",
        "#[ComplexObject",
        "async_graphql::Subscription]",
        "async_graphql::ComplexObject]",
        "SimpleObject",
        "InputObject",
        "#[derive(Union",
        "#[derive(Interface",
    ]
    .iter()
    .any(|marker| code.contains(marker))
}

/// The modules each module names through `crate::…`, `super::…` or `self::…` paths (the
/// longest existing module of each path).
fn imports(modules: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let resolve = |parts: &[&str]| -> String {
        (1..=parts.len()).rev().map(|n| parts[..n].join("::")).find(|name| modules.contains_key(name)).unwrap_or_else(|| "lib".to_owned())
    };
    let mut edges = BTreeMap::new();
    for (name, code) in modules {
        let here: Vec<&str> = if name == "lib" { Vec::new() } else { name.split("::").collect() };
        let mut targets = BTreeSet::new();
        for (at, _) in code.match_indices("crate::").chain(code.match_indices("super::")).chain(code.match_indices("self::")) {
            if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let path: String = code[at..].chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
            let mut parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
            let base: Vec<&str> = match parts.remove(0) {
                "crate" => Vec::new(),
                // `super` of `a::b` (a file or a folder's mod.rs) is `a`; `self` is the module.
                "super" => here[..here.len().saturating_sub(1)].to_vec(),
                _ => here.clone(),
            };
            let full: Vec<&str> = base.into_iter().chain(parts.into_iter().take_while(|p| p.starts_with(|c: char| c.is_lowercase()))).collect();
            let target = resolve(&full);
            if target != *name {
                targets.insert(target);
            }
        }
        edges.insert(name.clone(), targets);
    }
    edges
}

/// A cycle among `nodes` following `edges`, if any (depth-first search), as the path around it.
fn find_cycle(nodes: &BTreeSet<String>, edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        nodes: &BTreeSet<String>,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|n| n == node) {
            let mut cycle = path[start..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in edges.get(node).into_iter().flatten().filter(|n| nodes.contains(*n)) {
            if let Some(cycle) = visit(next, nodes, edges, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    nodes.iter().find_map(|node| visit(node, nodes, edges, &mut Vec::new(), &mut done))
}

#[test]
fn modules_without_graphql_types_import_no_cycle() {
    let schema = modules(&workspace().join("schema/src"));
    assert!(schema.len() > 40, "read the schema crate's modules ({} found)", schema.len());
    let edges = imports(&schema);
    let plain: BTreeSet<String> =
        schema.iter().filter(|(name, code)| *name != "lib" && !defines_graphql(code)).map(|(name, _)| name.clone()).collect();
    for expected in ["gpr::service", "lifecycle::tick", "metrics::store", "ports"] {
        assert!(plain.contains(expected), "{expected} is a module without GraphQL types");
    }
    if let Some(cycle) = find_cycle(&plain, &edges) {
        panic!("an import cycle among services and stores: {}", cycle.join(" -> "));
    }
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let edges: BTreeMap<String, BTreeSet<String>> =
        [("a", "b"), ("b", "c"), ("c", "a")].into_iter().map(|(from, to)| (from.to_owned(), BTreeSet::from([to.to_owned()]))).collect();
    let nodes: BTreeSet<String> = ["a", "b", "c"].map(str::to_owned).into();
    assert_eq!(find_cycle(&nodes, &edges).map(|c| c.len()), Some(4));
    let without_c: BTreeSet<String> = ["a", "b"].map(str::to_owned).into();
    assert_eq!(find_cycle(&without_c, &edges), None);
}

#[test]
fn the_schema_crate_uses_no_web_framework_redis_or_kubernetes_client() {
    let manifest = std::fs::read_to_string(workspace().join("schema/Cargo.toml")).expect("schema/Cargo.toml");
    for crate_name in ["axum", "redis", "kube", "k8s-openapi", "tower"] {
        assert!(
            !manifest
                .lines()
                .any(|line| line.trim_start().starts_with(&format!("{crate_name} ")) || line.trim_start().starts_with(&format!("{crate_name}."))),
            "egs-schema depends on {crate_name}: put the adapter in egs-api behind a trait in schema/src/ports.rs"
        );
    }
    for (name, code) in modules(&workspace().join("schema/src")) {
        for forbidden in ["axum::", "redis::", "kube::", "k8s_openapi::"] {
            assert!(!code.contains(forbidden), "schema module `{name}` uses `{forbidden}`");
        }
    }
}

/// The `egs-*` crates a manifest depends on (in its `[dependencies]`).
fn egs_dependencies(manifest: &str) -> BTreeSet<String> {
    let dependencies = manifest.split("[dependencies]").nth(1).unwrap_or_default().split("\n[").next().unwrap_or_default();
    dependencies
        .lines()
        .filter_map(|line| line.trim_start().split([' ', '.', '=']).next())
        .filter(|name| name.starts_with("egs-"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_agent_links_only_the_shared_wire_crate_and_it_links_nothing_of_egs() {
    let read = |path: &str| std::fs::read_to_string(workspace().join(path)).expect(path);
    assert_eq!(
        egs_dependencies(&read("node-agent/Cargo.toml")),
        BTreeSet::from(["egs-wire".to_owned()]),
        "the node agent runs on GPU nodes without the gateway's database and GraphQL crates: share through egs-wire"
    );
    assert_eq!(egs_dependencies(&read("schema/wire/Cargo.toml")), BTreeSet::new(), "egs-wire is the leaf both sides link");
    assert_eq!(
        egs_dependencies(&read("api/Cargo.toml")),
        BTreeSet::from(["egs-schema", "egs-scheduler", "egs-wire", "egs-entities", "egs-migration"].map(str::to_owned))
    );
    // The agent's operations are typed from the schema file the gateway prints.
    assert!(read("node-agent/src/operations.rs").contains("schema_path = \"../schema/schema.graphql\""));
}

#[test]
fn the_scheduler_core_does_no_io_and_reads_no_clock() {
    for (name, code) in modules(&workspace().join("schema/scheduler/src")) {
        for forbidden in ["sea_orm", "tokio", "async fn", "Utc::now", "SystemTime", "Instant::now", "crate::lifecycle", "crate::gpr"] {
            assert!(!code.contains(forbidden), "scheduler module `{name}` uses `{forbidden}`: the core is pure");
        }
    }
}

#[test]
fn every_adapter_trait_is_in_ports() {
    let schema = modules(&workspace().join("schema/src"));
    let elsewhere: Vec<String> = schema
        .iter()
        .filter(|(name, _)| *name != "ports")
        .flat_map(|(name, code)| code.lines().filter(|l| l.trim_start().starts_with("pub trait ")).map(move |l| format!("{name}: {}", l.trim())))
        .collect();
    assert!(elsewhere.is_empty(), "public traits outside schema/src/ports.rs: {elsewhere:#?}");
}
