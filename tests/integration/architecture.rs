//! The layout rules ARCHITECTURE.md marks ✔, checked on the sources and manifests: a change
//! that breaks one fails here with the import or dependency that broke it. The crate boundaries
//! do most of the work (egs-domain cannot name egs-schema: it does not depend on it); these
//! tests keep the manifests pointing down and the modules inside each crate free of cycles.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(workspace().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

// ---- Manifests: which crate may depend on which ----

/// The dependencies a manifest names in its `[dependencies]` table, with whether each is
/// optional.
fn dependencies(manifest: &str) -> BTreeMap<String, bool> {
    let table = manifest.split("\n[dependencies]").nth(1).unwrap_or_default().split("\n[").next().unwrap_or_default();
    table
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| {
            let name = line.split([' ', '.', '=']).next()?.to_owned();
            Some((name, line.contains("optional = true")))
        })
        .collect()
}

/// The crates of the workspace, lowest first: a crate may depend only on crates before it.
const LAYERS: [(&str, &str); 7] = [
    ("egs-wire", "schema/wire/Cargo.toml"),
    ("egs-scheduler", "schema/scheduler/Cargo.toml"),
    ("egs-entities", "entities/Cargo.toml"),
    ("egs-migration", "migration/Cargo.toml"),
    ("egs-domain", "schema/domain/Cargo.toml"),
    ("egs-schema", "schema/Cargo.toml"),
    ("egs-api", "api/Cargo.toml"),
];

/// Third-party crates a crate must not depend on, and why.
const FORBIDDEN: [(&str, &[&str], &str); 3] = [
    (
        "egs-scheduler",
        &["tokio", "sea-orm", "async-graphql", "chrono", "reqwest"],
        "the scheduler core is pure: no runtime, storage, GraphQL or clock",
    ),
    (
        "egs-domain",
        &["axum", "redis", "kube", "k8s-openapi", "tower", "tower-http"],
        "the control plane reaches the world through ports.rs; adapters live in egs-api",
    ),
    (
        "egs-schema",
        &["axum", "redis", "kube", "k8s-openapi", "tower", "tower-http"],
        "the GraphQL crate never imports the web framework or an adapter",
    ),
];

/// What is wrong with the manifests, one line each.
fn manifest_violations(manifests: &BTreeMap<&str, String>) -> Vec<String> {
    let mut wrong = Vec::new();
    for (at, (name, _)) in LAYERS.iter().enumerate() {
        let Some(manifest) = manifests.get(name) else { continue };
        let allowed: BTreeSet<&str> = LAYERS[..at].iter().map(|(below, _)| *below).collect();
        for (dependency, _) in dependencies(manifest).iter().filter(|(d, _)| d.starts_with("egs-")) {
            if !allowed.contains(dependency.as_str()) {
                wrong.push(format!("{name} depends on {dependency}, which is not below it"));
            }
        }
    }
    for (name, crates, why) in FORBIDDEN {
        let Some(manifest) = manifests.get(name) else { continue };
        for forbidden in crates.iter().filter(|c| dependencies(manifest).contains_key(**c)) {
            wrong.push(format!("{name} depends on {forbidden}: {why}"));
        }
    }
    if let Some(domain) = manifests.get("egs-domain")
        && dependencies(domain).get("async-graphql") != Some(&true)
    {
        wrong.push("egs-domain must name async-graphql only as optional (its `graphql` feature's derives)".into());
    }
    wrong
}

fn manifests() -> BTreeMap<&'static str, String> {
    LAYERS.iter().map(|(name, path)| (*name, read(path))).collect()
}

#[test]
fn crates_depend_only_on_the_crates_below_them() {
    let wrong = manifest_violations(&manifests());
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn a_planted_upward_dependency_is_caught() {
    let mut planted = manifests();
    let domain = planted.get_mut("egs-domain").expect("egs-domain");
    *domain = domain.replace("\n[dependencies]\n", "\n[dependencies]\negs-schema.workspace = true\naxum.workspace = true\n");
    let scheduler = planted.get_mut("egs-scheduler").expect("egs-scheduler");
    *scheduler = scheduler.replace("\n[dependencies]\n", "\n[dependencies]\ntokio.workspace = true\n");
    let wrong = manifest_violations(&planted);
    for expected in ["egs-domain depends on egs-schema", "egs-domain depends on axum", "egs-scheduler depends on tokio"] {
        assert!(wrong.iter().any(|w| w.starts_with(expected)), "{expected} not caught: {wrong:#?}");
    }
}

#[test]
fn the_agent_links_only_the_shared_wire_crate() {
    let egs = |path: &str| -> BTreeSet<String> { dependencies(&read(path)).into_keys().filter(|d| d.starts_with("egs-")).collect() };
    assert_eq!(
        egs("node-agent/Cargo.toml"),
        BTreeSet::from(["egs-wire".to_owned()]),
        "the node agent runs on GPU nodes without the gateway's database and GraphQL crates: share through egs-wire"
    );
    // The agent's operations are typed from the schema file the gateway prints.
    assert!(read("node-agent/src/operations.rs").contains("schema_path = \"../schema/schema.graphql\""));
}

// ---- Modules: what each file imports ----

/// Every `.rs` file under `dir`, as (module path, code without comments and test modules).
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

/// Whether a module defines GraphQL types or resolvers.
fn defines_graphql(code: &str) -> bool {
    ["Object]", "Object(", "Subscription]", "SimpleObject", "InputObject", "MergedObject", "#[derive(Union", "#[derive(Interface"]
        .iter()
        .any(|marker| code.contains(marker))
}

/// The paths a `use` tree names, its groups expanded: `crate::{a::B, c::{d, e}}` is
/// `crate::a::B`, `crate::c::d`, `crate::c::e`.
fn expand_use(tree: &str) -> Vec<String> {
    // Renames (`x as y`) dropped, then spaces.
    let mut tree = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    while let Some(at) = tree.find(" as ") {
        let end = tree[at + 4..].find([',', '}']).map_or(tree.len(), |e| at + 4 + e);
        tree.replace_range(at..end, "");
    }
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else { return vec![tree] };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut depth, mut start, mut parts) = (0, 0, Vec::new());
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts.into_iter().filter(|p| !p.is_empty()).flat_map(|p| expand_use(&format!("{prefix}{p}"))).collect()
}

/// The modules `name` imports: through `use` trees (grouped ones expanded, and paths relative
/// to a child module), and through inline `crate::…`, `super::…` or `self::…` paths. Each
/// path counts as the longest module it names.
fn imports_of(name: &str, code: &str, modules: &BTreeMap<String, String>) -> BTreeSet<String> {
    let here: Vec<&str> = if name == "lib" { Vec::new() } else { name.split("::").collect() };
    let mut paths: Vec<String> = Vec::new();
    for statement in code.split(';') {
        // A use declaration starts a line (after its visibility) and runs to the `;`.
        let mut lines = statement.lines().skip_while(|line| !is_use(line));
        if let Some(first) = lines.next() {
            let tree = first.trim_start().split_once("use ").map_or("", |(_, tree)| tree).to_owned() + &lines.collect::<Vec<_>>().join(" ");
            paths.extend(expand_use(&tree));
        }
    }
    for prefix in ["crate::", "super::", "self::"] {
        for (at, _) in code.match_indices(prefix) {
            if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            paths.push(code[at..].chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect());
        }
    }
    let mut targets = BTreeSet::new();
    for path in paths {
        let mut parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
        if parts.is_empty() {
            continue;
        }
        let child = |first: &str| modules.contains_key(&here.iter().copied().chain([first]).collect::<Vec<_>>().join("::"));
        let mut full: Vec<&str> = match parts[0] {
            "crate" => Vec::new(),
            // `super` of `a::b` (a file or a folder's mod.rs) is `a`; `self` is the module.
            "super" => here[..here.len().saturating_sub(1)].to_vec(),
            "self" => here.clone(),
            first if child(first) => {
                let mut full = here.clone();
                full.push(parts.remove(0));
                full
            }
            _ => continue,
        };
        if matches!(parts.first(), Some(&"crate" | &"super" | &"self")) {
            parts.remove(0);
        }
        full.extend(parts.into_iter().take_while(|p| p.starts_with(|c: char| c.is_lowercase())));
        let target = (1..=full.len()).rev().map(|n| full[..n].join("::")).find(|m| modules.contains_key(m)).unwrap_or_else(|| "lib".to_owned());
        if target != name {
            targets.insert(target);
        }
    }
    targets
}

/// Whether a line begins a use declaration (`use`, `pub use`, `pub(crate) use`).
fn is_use(line: &str) -> bool {
    let line = line.trim_start();
    let line = line.strip_prefix("pub").map_or(line, |rest| rest.trim_start_matches(|c| c != ' ').trim_start());
    line.starts_with("use ")
}

fn import_graph(modules: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    modules.iter().map(|(name, code)| (name.clone(), imports_of(name, code, modules))).collect()
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

/// Whether a module only declares and re-exports others (a folder's `mod.rs` facade).
fn is_facade(code: &str) -> bool {
    code.split(';').map(str::trim).filter(|s| !s.is_empty()).all(|s| s.lines().any(is_use) || s.starts_with("pub mod ") || s.starts_with("mod "))
}

/// What is wrong with a crate's modules: a cycle among modules without GraphQL types, or such a
/// module importing one with them. `lib` (the roots) and facades are left out.
fn module_violations(modules: &BTreeMap<String, String>) -> Vec<String> {
    let edges = import_graph(modules);
    let plain: BTreeSet<String> =
        modules.iter().filter(|(name, code)| *name != "lib" && !defines_graphql(code) && !is_facade(code)).map(|(n, _)| n.clone()).collect();
    let mut wrong = Vec::new();
    if let Some(cycle) = find_cycle(&plain, &edges) {
        wrong.push(format!("an import cycle among modules without GraphQL types: {}", cycle.join(" -> ")));
    }
    for name in &plain {
        for target in edges[name].iter().filter(|t| *t != "lib" && defines_graphql(&modules[*t])) {
            wrong.push(format!("`{name}` has no GraphQL types but imports `{target}`, which has"));
        }
    }
    wrong
}

#[test]
fn the_control_plane_has_no_import_cycle_and_no_resolver() {
    let domain = modules(&workspace().join("schema/domain/src"));
    assert!(domain.len() > 80, "read the domain crate's modules ({} found)", domain.len());
    for expected in ["gpr::service", "lifecycle::tick", "metrics::store", "ports", "inventory::windows"] {
        assert!(domain.contains_key(expected), "{expected} is a module of the domain crate");
    }
    // Its GraphQL derives (behind the `graphql` feature) are data, not resolvers: every module
    // counts, and none may be in a cycle.
    let edges = import_graph(&domain);
    let all: BTreeSet<String> = domain.keys().filter(|n| *n != "lib").cloned().collect();
    if let Some(cycle) = find_cycle(&all, &edges) {
        panic!("an import cycle in the control plane: {}", cycle.join(" -> "));
    }
    // Its async-graphql is for derives behind the `graphql` feature, never a resolver.
    for (name, code) in &domain {
        for resolver in ["#[Object", "#[Subscription", "#[ComplexObject", "MergedObject", "Context<'"] {
            assert!(!code.contains(resolver), "domain module `{name}` has a resolver (`{resolver}`): put it in egs-schema");
        }
    }
}

#[test]
fn in_the_graphql_crate_only_the_object_graph_is_circular() {
    let schema = modules(&workspace().join("schema/src"));
    assert!(schema.len() > 20, "read the schema crate's modules ({} found)", schema.len());
    let wrong = module_violations(&schema);
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn grouped_child_relative_and_planted_imports_are_seen() {
    assert_eq!(expand_use("crate::{a::B, c::{d, e as f}}"), ["crate::a::B", "crate::c::d", "crate::c::e"]);
    let planted: BTreeMap<String, String> = [
        ("lib", "pub mod gpr; pub mod inventory;"),
        ("gpr", "pub mod service; pub mod types; use service::Rule;"),
        ("gpr::service", "use crate::{inventory::windows::open, ids};\npub fn g() {}"),
        ("gpr::types", "#[derive(SimpleObject)] pub struct Gpr;"),
        ("inventory", "pub mod windows;"),
        // A rule reaching up into the GraphQL objects, and back down: a cycle and a leak.
        ("inventory::windows", "use crate::gpr::types::Gpr;\nfn f() { crate::gpr::service::g(); }"),
    ]
    .into_iter()
    .map(|(n, c)| (n.to_owned(), c.to_owned()))
    .collect();
    let edges = import_graph(&planted);
    assert!(edges["gpr"].contains("gpr::service"), "a child-relative use: {edges:?}");
    assert!(edges["gpr::service"].contains("inventory::windows"), "a grouped use: {edges:?}");
    let wrong = module_violations(&planted);
    assert!(wrong.iter().any(|w| w.contains("cycle") && w.contains("inventory::windows")), "{wrong:#?}");
    assert!(wrong.iter().any(|w| w.contains("`inventory::windows` has no GraphQL types but imports `gpr::types`")), "{wrong:#?}");
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
fn the_gateway_crates_use_no_web_framework_redis_or_kubernetes_client() {
    for dir in ["schema/src", "schema/domain/src"] {
        for (name, code) in modules(&workspace().join(dir)) {
            for forbidden in ["axum::", "redis::", "kube::", "k8s_openapi::"] {
                assert!(!code.contains(forbidden), "{dir} module `{name}` uses `{forbidden}`");
            }
        }
    }
}

#[test]
fn the_scheduler_core_does_no_io_and_reads_no_clock() {
    for (name, code) in modules(&workspace().join("schema/scheduler/src")) {
        for forbidden in ["async fn", "Utc::now", "SystemTime", "Instant::now", "std::fs", "std::net"] {
            assert!(!code.contains(forbidden), "scheduler module `{name}` uses `{forbidden}`: the core is pure");
        }
    }
}

#[test]
fn every_adapter_trait_is_in_ports() {
    let elsewhere: Vec<String> = modules(&workspace().join("schema/domain/src"))
        .into_iter()
        .filter(|(name, _)| name != "ports")
        .flat_map(|(name, code)| {
            code.lines().filter(|l| l.trim_start().starts_with("pub trait ")).map(|l| format!("{name}: {}", l.trim())).collect::<Vec<_>>()
        })
        .collect();
    assert!(elsewhere.is_empty(), "public traits outside schema/domain/src/ports.rs: {elsewhere:#?}");
}

/// Files of the product's crates over this many lines get split (tests aside: `tests.rs`
/// files and `tests/` folders hold many small cases, not one thing grown too big).
const MAX_SOURCE_LINES: usize = 600;

#[test]
fn no_source_file_is_over_600_lines() {
    fn walk(dir: &Path, found: &mut Vec<(PathBuf, usize)>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
            let path = entry.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
            if path.is_dir() {
                if name != "tests" && name != "target" {
                    walk(&path, found);
                }
            } else if name.ends_with(".rs") && name != "tests.rs" {
                let lines = std::fs::read_to_string(&path).map(|t| t.lines().count()).unwrap_or(0);
                found.push((path, lines));
            }
        }
    }
    let mut found = Vec::new();
    for dir in ["api/src", "schema/src", "schema/domain/src", "schema/scheduler/src", "entities/src", "migration/src", "node-agent/src"] {
        walk(&workspace().join(dir), &mut found);
    }
    assert!(found.len() > 200, "read the sources ({} files)", found.len());
    let long: Vec<String> = found.iter().filter(|(_, n)| *n > MAX_SOURCE_LINES).map(|(p, n)| format!("{} has {n} lines", p.display())).collect();
    assert!(long.is_empty(), "split these by what they do: {long:#?}");
}
