//! The Kubernetes manifests in `deploy/kustomize` and the container build files, checked
//! against what the binaries expect: the CRD they serve, the settings they read (names and
//! values), the ports and probe paths they answer, and the API calls the provider makes.

use clap::{CommandFactory, Parser};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace").to_path_buf()
}

/// Every document of every YAML file in `dir` (not recursing), by file name.
fn documents(dir: &Path) -> BTreeMap<String, Vec<Value>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).expect("the manifests") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let text = std::fs::read_to_string(&path).expect("readable");
            assert!(!text.contains('\t'), "{} has a tab", path.display());
            let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()));
            out.insert(path.file_name().expect("name").to_string_lossy().into_owned(), docs.into_iter().filter(|d| !d.is_null()).collect());
        }
    }
    out
}

fn kind<'a>(docs: &'a BTreeMap<String, Vec<Value>>, kind: &str, name: &str) -> &'a Value {
    docs.values().flatten().find(|d| d["kind"] == kind && d["metadata"]["name"] == name).unwrap_or_else(|| panic!("no {kind} named {name}"))
}

/// Env names a command reads, with the long flag that takes the same value (and whether it
/// takes one: switches read `true`/`false` from the environment).
fn env_flags(command: &clap::Command) -> BTreeMap<String, (String, bool)> {
    command
        .get_arguments()
        .filter_map(|a| Some((a.get_env()?.to_string_lossy().into_owned(), (a.get_long()?.to_owned(), a.get_action().takes_values()))))
        .collect()
}

/// The `EGS_*` names a manifest sets, with their literal values where it gives one.
fn env_of(container: &Value, config_maps: &[&Value]) -> BTreeMap<String, Option<String>> {
    let mut env = BTreeMap::new();
    for map in config_maps {
        for (k, v) in map["data"].as_object().into_iter().flatten() {
            env.insert(k.clone(), v.as_str().map(str::to_owned));
        }
    }
    for e in container["env"].as_array().into_iter().flatten() {
        env.insert(e["name"].as_str().expect("env name").to_owned(), e["value"].as_str().map(str::to_owned));
    }
    env.retain(|k, _| k.starts_with("EGS_"));
    env
}

/// Parses the literal settings with the binary's own parser, as flags.
fn check_settings(
    what: &str,
    env: &BTreeMap<String, Option<String>>,
    known: &BTreeMap<String, (String, bool)>,
    parse: impl Fn(Vec<String>) -> Result<(), String>,
) {
    let mut args = Vec::new();
    for (name, value) in env {
        let (flag, takes_value) = known.get(name).unwrap_or_else(|| panic!("{what} sets {name}, which the binary does not read"));
        match (value.as_deref(), takes_value) {
            (None, _) => {}
            (Some(value), true) => args.push(format!("--{flag}={value}")),
            (Some("true" | "1"), false) => args.push(format!("--{flag}")),
            (Some("false" | "0"), false) => {}
            (Some(value), false) => panic!("{what} sets the switch {name} to `{value}`; use true or false"),
        }
    }
    parse(args).unwrap_or_else(|e| panic!("{what}'s settings do not parse: {e}"));
}

fn rules_allow(role: &Value, group: &str, resource: &str, verb: &str) -> bool {
    role["rules"].as_array().into_iter().flatten().any(|rule| {
        let has = |field: &str, want: &str| rule[field].as_array().into_iter().flatten().any(|v| v == want || v == "*");
        has("apiGroups", group) && has("resources", resource) && has("verbs", verb)
    })
}

#[test]
fn the_kustomize_base_matches_the_binaries() {
    let base = repo().join("deploy/kustomize/base");
    let docs = documents(&base);

    // The kustomization lists every manifest in the directory, and each is a named object.
    let kustomization = &docs["kustomization.yaml"][0];
    let listed: BTreeSet<String> =
        kustomization["resources"].as_array().expect("resources").iter().map(|r| r.as_str().expect("path").to_owned()).collect();
    let present: BTreeSet<String> = docs.keys().filter(|f| *f != "kustomization.yaml").cloned().collect();
    assert_eq!(listed, present, "kustomization.yaml lists exactly the manifests beside it");
    for (file, list) in &docs {
        for doc in list {
            assert!(doc["apiVersion"].is_string() && doc["kind"].is_string() && doc["metadata"]["name"].is_string(), "{file}: {doc}");
        }
    }

    // The CRD is the one the gateway's controller serves (itself checked against the type).
    let crd = std::fs::read_to_string(base.join("crd.yaml")).expect("crd");
    let served = std::fs::read_to_string(repo().join("api/crds/gpuprovisioningrequests.egs.io.yaml")).expect("schema crd");
    assert_eq!(crd, served, "deploy/kustomize/base/crd.yaml is a copy of api/crds/gpuprovisioningrequests.egs.io.yaml");

    check_objects(&docs);
}

/// What both packagings (the Kustomize base, the Helm chart) must hold: every setting is one
/// the binaries read and parses, ports, probes and selectors line up, the pods run as non-root
/// on a read-only root FS, and RBAC allows what the Kubernetes provider calls.
fn check_objects(docs: &BTreeMap<String, Vec<Value>>) {
    // The gateway: every setting is one `egs serve` reads, and the literal ones parse.
    let deployment = kind(docs, "Deployment", "egs-gateway");
    let pod = &deployment["spec"]["template"];
    let container = &pod["spec"]["containers"][0];
    let config = kind(docs, "ConfigMap", "egs-gateway");
    let serve = egs_api::settings::Cli::command().find_subcommand("serve").expect("serve").clone();
    let env = env_of(container, &[config]);
    for secret in ["EGS_DATABASE_URL", "EGS_REDIS_URL", "EGS_SIGNING_KEY"] {
        assert!(env.contains_key(secret), "the gateway gets {secret}");
    }
    check_settings("the gateway Deployment", &env, &env_flags(&serve), |flags| {
        let argv = ["egs", "serve"].into_iter().map(str::to_owned).chain(flags);
        egs_api::settings::Cli::try_parse_from(argv).map(drop).map_err(|e| e.to_string())
    });
    // It listens where the probes and the Service look, and the probes ask the right paths.
    let listen = env["EGS_LISTEN"].as_deref().expect("EGS_LISTEN");
    assert!(listen.starts_with("0.0.0.0:"), "reachable from the Service: {listen}");
    let port = &container["ports"][0];
    assert_eq!(port["containerPort"].as_u64().map(|p| p.to_string()).as_deref(), listen.rsplit(':').next());
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    // Endpoints drop the pod before it stops listening, and the grace period leaves time to
    // finish requests and hand the lease over after the preStop sleep.
    let sleep = container["lifecycle"]["preStop"]["sleep"]["seconds"].as_u64().expect("a preStop sleep");
    let grace = pod["spec"]["terminationGracePeriodSeconds"].as_u64().expect("a grace period");
    assert!(sleep >= 2 && grace >= sleep + 15, "preStop {sleep} s, grace {grace} s");
    let service = kind(docs, "Service", "egs-gateway");
    assert_eq!(service["spec"]["ports"][0]["targetPort"], port["name"]);
    // Selectors find the pods; the PDB keeps a quorum through drains.
    let labels = &pod["metadata"]["labels"];
    for (what, selector) in
        [("Service", &service["spec"]["selector"]), ("PDB", &kind(docs, "PodDisruptionBudget", "egs-gateway")["spec"]["selector"]["matchLabels"])]
    {
        for (k, v) in selector.as_object().expect("selector") {
            assert_eq!(&labels[k], v, "the {what} selects the gateway pods");
        }
    }
    assert!(deployment["spec"]["replicas"].as_u64().unwrap_or(0) >= 2, "several replicas");
    // Not root, nothing writable but its data directory.
    assert_eq!(pod["spec"]["securityContext"]["runAsNonRoot"], true);
    assert_eq!(container["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(container["securityContext"]["allowPrivilegeEscalation"], false);
    let data_dir = env["EGS_DATA_DIR"].as_deref().expect("a data dir on a volume");
    assert!(container["volumeMounts"].as_array().into_iter().flatten().any(|m| m["mountPath"] == data_dir));

    // RBAC: the calls the Kubernetes provider makes are allowed, to the gateway's account.
    let account = pod["spec"]["serviceAccountName"].as_str().expect("service account");
    kind(docs, "ServiceAccount", account);
    let bound: Vec<&Value> = docs
        .values()
        .flatten()
        .filter(|d| d["kind"] == "ClusterRoleBinding" && d["subjects"].as_array().into_iter().flatten().any(|s| s["name"] == account))
        .map(|b| kind(docs, "ClusterRole", b["roleRef"]["name"].as_str().expect("role")))
        .collect();
    for (group, resource, verb) in [
        ("", "nodes", "watch"),
        ("", "nodes", "patch"),
        ("", "namespaces", "patch"),
        ("", "pods", "list"),
        ("", "pods/eviction", "create"),
        ("", "events", "create"),
        ("", "serviceaccounts", "create"),
        ("", "serviceaccounts/token", "create"),
        ("authentication.k8s.io", "tokenreviews", "create"),
        ("rbac.authorization.k8s.io", "roles", "create"),
        ("rbac.authorization.k8s.io", "rolebindings", "create"),
        ("egs.io", "gpuprovisioningrequests", "watch"),
        ("egs.io", "gpuprovisioningrequests", "patch"),
        ("egs.io", "gpuprovisioningrequests/status", "patch"),
    ] {
        assert!(bound.iter().any(|r| rules_allow(r, group, resource, verb)), "the gateway may not {verb} {group}/{resource}");
    }

    // The node agent: settings it reads, on GPU nodes, still running on nodes handed to slices.
    let daemonset = kind(docs, "DaemonSet", "egs-node-agent");
    let agent_pod = &daemonset["spec"]["template"]["spec"];
    let agent = &agent_pod["containers"][0];
    let agent_config = kind(docs, "ConfigMap", "egs-node-agent");
    let agent_env = env_of(agent, &[agent_config]);
    check_settings("the agent DaemonSet", &agent_env, &env_flags(&egs_node_agent::Config::command()), |flags| {
        let argv = std::iter::once("egs-node-agent".to_owned()).chain(flags);
        egs_node_agent::Config::try_parse_from(argv).map(drop).map_err(|e| e.to_string())
    });
    assert!(
        agent["env"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|e| e["name"] == "EGS_AGENT_NODE_NAME" && e["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName")
    );
    let gateway = agent_env["EGS_AGENT_GATEWAY"].as_deref().expect("the gateway URL");
    assert!(gateway.contains(&format!("{}.", service["metadata"]["name"].as_str().unwrap_or_default())), "the agent reaches the Service: {gateway}");
    assert!(
        agent_pod["tolerations"].as_array().into_iter().flatten().any(|t| t["key"] == egs_api::kubernetes::SLICE_KEY && t["operator"] == "Exists"),
        "the agent tolerates EGS's slice taint"
    );
    // No EGS secret on GPU nodes: the file the agent signs in with is the pod's projected
    // ServiceAccount token, for EGS alone, bound to the pod.
    let identity = agent_env["EGS_AGENT_IDENTITY_TOKEN_FILE"].as_deref().expect("the agent signs in with its pod's token");
    assert!(!agent_env.contains_key("EGS_AGENT_TOKEN_FILE"), "no AGENT token as well");
    let (dir, file) = identity.rsplit_once('/').expect("a path");
    let mount = agent["volumeMounts"].as_array().into_iter().flatten().find(|m| m["mountPath"] == dir).expect("the token's volume is mounted");
    let volume = agent_pod["volumes"].as_array().into_iter().flatten().find(|v| v["name"] == mount["name"]).expect("the volume");
    let projected = &volume["projected"]["sources"][0]["serviceAccountToken"];
    assert_eq!((projected["audience"].as_str(), projected["path"].as_str()), (Some("egs"), Some(file)), "{volume}");
    assert!(projected["expirationSeconds"].as_i64().is_some_and(|s| (600..=3600).contains(&s)), "{volume}");
    // The agent reads its own node and nothing else: `list pods` cannot be narrowed to one node
    // in RBAC, and nodes/proxy reaches every kubelet, so neither is granted.
    let agent_account = agent_pod["serviceAccountName"].as_str().expect("the agent's account");
    let agent_roles: Vec<&Value> = docs
        .values()
        .flatten()
        .filter(|d| {
            matches!(d["kind"].as_str(), Some("ClusterRoleBinding" | "RoleBinding"))
                && d["subjects"].as_array().into_iter().flatten().any(|s| s["name"] == agent_account)
        })
        .map(|b| kind(docs, b["roleRef"]["kind"].as_str().expect("role kind"), b["roleRef"]["name"].as_str().expect("role")))
        .collect();
    assert!(agent_roles.iter().any(|r| rules_allow(r, "", "nodes", "get")), "the agent reads its node's instance type");
    for (resource, verb) in [("pods", "list"), ("pods", "get"), ("pods", "watch"), ("nodes/proxy", "get"), ("secrets", "get"), ("nodes", "patch")] {
        assert!(!agent_roles.iter().any(|r| rules_allow(r, "", resource, verb)), "the agent may {verb} {resource}");
    }

    // /metrics takes no token, so a NetworkPolicy keeps tenant pods off its port: every ingress
    // rule that opens the metrics port names who may come, and the API port stays open.
    let policy = kind(docs, "NetworkPolicy", "egs-gateway");
    for (k, v) in policy["spec"]["podSelector"]["matchLabels"].as_object().expect("the policy selects pods") {
        assert_eq!(&labels[k], v, "the NetworkPolicy selects the gateway pods");
    }
    assert!(policy["spec"]["policyTypes"].as_array().into_iter().flatten().any(|t| t == "Ingress"), "{policy}");
    let metrics_port = container["ports"].as_array().into_iter().flatten().find(|p| p["name"] == "metrics").expect("a metrics port");
    let opens = |rule: &Value, port: &Value| {
        rule["ports"].as_array().is_none_or(|ports| ports.iter().any(|p| p["port"] == port["name"] || p["port"] == port["containerPort"]))
    };
    let rules: Vec<&Value> = policy["spec"]["ingress"].as_array().into_iter().flatten().collect();
    let metrics_rules: Vec<&&Value> = rules.iter().filter(|r| opens(r, metrics_port)).collect();
    assert!(!metrics_rules.is_empty(), "the platform's Prometheus may scrape: {policy}");
    for rule in metrics_rules {
        let from = rule["from"].as_array().filter(|f| !f.is_empty()).unwrap_or_else(|| panic!("any pod may scrape /metrics: {rule}"));
        assert!(
            from.iter().all(|peer| peer["namespaceSelector"]["matchLabels"].is_object() || peer["podSelector"]["matchLabels"].is_object()),
            "{rule}"
        );
    }
    assert!(rules.iter().any(|r| opens(r, port) && r["from"].is_null()), "clients reach the API port: {policy}");
}

#[test]
fn the_container_builds_are_multi_stage_small_and_non_root() {
    for (file, binary) in [("api/Dockerfile", "egs"), ("node-agent/Dockerfile", "egs-node-agent")] {
        let text = std::fs::read_to_string(repo().join(file)).expect("Dockerfile");
        let stages: Vec<&str> = text.lines().filter(|l| l.trim_start().to_ascii_uppercase().starts_with("FROM ")).collect();
        assert!(stages.len() >= 2, "{file} is multi-stage");
        let last = text.rsplit_once("\nFROM ").map(|(_, last)| last).expect("final stage");
        assert!(last.starts_with("gcr.io/distroless/"), "{file}: a small runtime image: {last}");
        assert!(last.contains("USER nonroot") || last.contains("USER 65532"), "{file} runs as non-root");
        assert!(last.contains(&format!("/{binary}")), "{file} ships {binary}");
        assert!(text.contains("--locked"), "{file} builds from Cargo.lock");
    }
}

/// `helm template` of the chart with `--set` values, as documents; `Err` with Helm's message
/// when it refuses.
fn helm_template(helm: &Path, sets: &[&str]) -> Result<BTreeMap<String, Vec<Value>>, String> {
    let mut command = std::process::Command::new(helm);
    command.args(["template", "egs"]).arg(repo().join("deploy/helm/egs")).args(["--namespace", "egs", "--include-crds"]);
    for set in sets {
        command.args(["--set", set]);
    }
    let out = command.output().expect("helm runs");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap_or_else(|e| panic!("helm's output does not parse: {e}\n{text}"));
    Ok(BTreeMap::from([("helm template".to_owned(), docs.into_iter().filter(|d| !d.is_null()).collect())]))
}

/// An object as both packagings should agree on it: without the namespace the tool sets, the
/// labels each adds for itself, and the chart's restart-on-config-change annotations.
fn comparable(doc: &Value) -> Value {
    let mut doc = doc.clone();
    if let Some(meta) = doc["metadata"].as_object_mut() {
        meta.remove("namespace");
        if let Some(labels) = meta.get_mut("labels").and_then(Value::as_object_mut) {
            for own in ["app.kubernetes.io/part-of", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance", "helm.sh/chart"] {
                labels.remove(own);
            }
        }
    }
    if let Some(annotations) = doc["spec"]["template"]["metadata"]["annotations"].as_object_mut() {
        annotations.retain(|k, _| !k.starts_with("checksum/"));
    }
    doc
}

fn by_kind_and_name<'a>(docs: impl Iterator<Item = &'a Value>) -> BTreeMap<(String, String), Value> {
    docs.map(|d| ((d["kind"].as_str().unwrap_or_default().to_owned(), d["metadata"]["name"].as_str().unwrap_or_default().to_owned()), comparable(d)))
        .collect()
}

#[test]
fn the_helm_chart_renders_the_kustomize_objects_and_its_values_change_only_what_they_name() {
    let helm = match egs_tests::control_plane::helm() {
        Ok(helm) => helm,
        Err(why) => {
            assert!(std::env::var_os("EGS_TEST_REQUIRE_KUBE").is_none(), "helm was required (EGS_TEST_REQUIRE_KUBE) but: {}", why.0);
            eprintln!("\n*** SKIPPED: helm could not be built ({}); the chart was not rendered ***\n", why.0);
            return;
        }
    };
    let lint = std::process::Command::new(&helm).arg("lint").arg(repo().join("deploy/helm/egs")).args(["--strict"]).output().expect("helm lint");
    assert!(lint.status.success(), "helm lint: {}{}", String::from_utf8_lossy(&lint.stdout), String::from_utf8_lossy(&lint.stderr));

    // By default: every object of the Kustomize base but its Namespace, the same in everything
    // but the labels each tool adds, and passing the same checks.
    let rendered = helm_template(&helm, &[]).expect("the defaults render");
    check_objects(&rendered);
    let base = documents(&repo().join("deploy/kustomize/base"));
    let kustomize =
        by_kind_and_name(base.iter().filter(|(f, _)| *f != "kustomization.yaml").flat_map(|(_, d)| d).filter(|d| d["kind"] != "Namespace"));
    let chart = by_kind_and_name(rendered.values().flatten());
    assert_eq!(kustomize.keys().collect::<Vec<_>>(), chart.keys().collect::<Vec<_>>(), "the same objects");
    for (key, object) in &kustomize {
        assert_eq!(&chart[key], object, "{key:?} differs between deploy/kustomize/base and the chart");
    }
    for doc in rendered.values().flatten().filter(|d| d["kind"] != "CustomResourceDefinition") {
        assert_eq!(doc["metadata"]["labels"]["app.kubernetes.io/managed-by"], "Helm", "{doc}");
    }

    // The webhook: cert-manager's Issuer and Certificate and the MutatingWebhookConfiguration
    // of the Kustomize component, and the Service's https port; it needs its path.
    let refused = helm_template(&helm, &["webhook.enabled=true"]).expect_err("the webhook needs its path");
    assert!(refused.contains("webhook.path"), "{refused}");
    let placeholder = "/kubernetes/clusters/<cluster-name>/mutate/<key>";
    let with_webhook = helm_template(&helm, &["webhook.enabled=true", &format!("webhook.path={placeholder}")]).expect("renders");
    check_objects(&with_webhook);
    let component = documents(&repo().join("deploy/kustomize/components/webhook"));
    let webhook = by_kind_and_name(with_webhook.values().flatten());
    for doc in component.iter().filter(|(f, _)| !["kustomization.yaml", "service-https-patch.yaml"].contains(&f.as_str())).flat_map(|(_, d)| d) {
        let key = (doc["kind"].as_str().unwrap_or_default().to_owned(), doc["metadata"]["name"].as_str().unwrap_or_default().to_owned());
        assert_eq!(webhook.get(&key), Some(&comparable(doc)), "{key:?} differs from the webhook component");
    }
    let ports = &kind(&with_webhook, "Service", "egs-gateway")["spec"]["ports"];
    assert!(ports.as_array().into_iter().flatten().any(|p| p["name"] == "https" && p["port"] == 443), "{ports}");

    // Single sign-on: its settings (each one `egs serve` reads, as check_objects proves) and
    // the client secret mounted from its Secret as the file the gateway reads.
    let refused = helm_template(&helm, &["sso.issuer=https://login.example.com"]).expect_err("an issuer needs a client id");
    assert!(refused.contains("sso.clientId"), "{refused}");
    let sso = helm_template(
        &helm,
        &[
            "sso.issuer=https://login.example.com",
            "sso.clientId=egs",
            "sso.clientSecret.existingSecret=oidc",
            "sso.redirectUrl=https://egs.example.com/auth/oidc/callback",
        ],
    )
    .expect("renders");
    check_objects(&sso);
    let pod = &kind(&sso, "Deployment", "egs-gateway")["spec"]["template"]["spec"];
    let gateway_env = env_of(&pod["containers"][0], &[]);
    assert_eq!(gateway_env["EGS_OIDC_CLIENT_SECRET_FILE"].as_deref(), Some("/var/run/egs/oidc/client-secret"));
    assert!(
        pod["containers"][0]["volumeMounts"].as_array().into_iter().flatten().any(|m| m["mountPath"] == "/var/run/egs/oidc" && m["readOnly"] == true)
    );
    assert!(pod["volumes"].as_array().into_iter().flatten().any(|v| v["secret"]["secretName"] == "oidc"));
    assert!(
        !env_of(&kind(&rendered, "Deployment", "egs-gateway")["spec"]["template"]["spec"]["containers"][0], &[]).contains_key("EGS_OIDC_ISSUER"),
        "off by default"
    );

    // Values change what they name: replicas, the existing database's Secret, images, no agent.
    let custom = helm_template(
        &helm,
        &[
            "gateway.replicas=5",
            "database.existingSecret=pg",
            "database.key=url",
            "gateway.image.tag=1.2.3",
            "agent.enabled=false",
            "gateway.config.EGS_RATE_LIMIT=500",
        ],
    )
    .expect("renders");
    let deployment = kind(&custom, "Deployment", "egs-gateway");
    assert_eq!(deployment["spec"]["replicas"], 5);
    let container = &deployment["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(container["image"], "ghcr.io/egs-io/egs:1.2.3");
    let database = container["env"].as_array().expect("env").iter().find(|e| e["name"] == "EGS_DATABASE_URL").expect("EGS_DATABASE_URL");
    assert_eq!(database["valueFrom"]["secretKeyRef"], serde_json::json!({ "name": "pg", "key": "url" }));
    assert_eq!(kind(&custom, "ConfigMap", "egs-gateway")["data"]["EGS_RATE_LIMIT"], "500");
    assert!(!custom.values().flatten().any(|d| d["kind"] == "DaemonSet"), "agent.enabled=false renders no agent");
    assert_ne!(
        deployment["spec"]["template"]["metadata"]["annotations"]["checksum/config"],
        kind(&rendered, "Deployment", "egs-gateway")["spec"]["template"]["metadata"]["annotations"]["checksum/config"],
        "a config change rolls the gateway"
    );

    // Where the gateway cannot review the cluster's tokens: an AGENT token from a Secret.
    let with_secret = helm_template(&helm, &["agent.tokenSecret=agents"]).expect("renders");
    let agent_pod = &kind(&with_secret, "DaemonSet", "egs-node-agent")["spec"]["template"]["spec"];
    let env: Vec<&str> = agent_pod["containers"][0]["env"].as_array().into_iter().flatten().filter_map(|e| e["name"].as_str()).collect();
    assert!(env.contains(&"EGS_AGENT_TOKEN_FILE") && !env.contains(&"EGS_AGENT_IDENTITY_TOKEN_FILE"), "{env:?}");
    assert_eq!(agent_pod["volumes"][0]["secret"]["secretName"], "agents");
    assert_eq!(agent_pod["containers"][0]["volumeMounts"][0]["mountPath"], "/var/run/egs-node-agent/token");
}
