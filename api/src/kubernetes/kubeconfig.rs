//! Slice kubeconfigs: a ServiceAccount `egs-slice-<slice>` in the slice's first namespace on a
//! cluster, a Role and RoleBinding in each of its namespaces there, and a bound token from the
//! TokenRequest API, handed back as a kubeconfig.
//!
//! Issuing one revokes the previous: the ServiceAccount is deleted and created anew before the
//! token is requested, and bound tokens die with the ServiceAccount (uid) they were issued
//! for. The token is only ever in the answer: it is neither stored nor logged.

use super::{COMPONENT, KubeClusters, SLICE_KEY, claim_namespace, classify, is_conflict, is_not_found};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, Utc};
use egs_domain::ports::{IssuedKubeconfig, ProviderError};
use egs_entities::cluster;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;

/// Label on what EGS creates for a slice kubeconfig (besides `egs.io/slice`).
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";

/// The name of the ServiceAccount, Roles and RoleBindings of slice `slice`.
pub fn account_name(slice: &str) -> String {
    format!("egs-slice-{slice}")
}

/// What a slice's token may do in each of its namespaces: run and inspect workloads, and ask
/// for GPUs through `GPUProvisioningRequest`s. Secrets and a way into running pods (exec,
/// attach, port-forward) only with `secrets_and_exec` (the slice policy's
/// `kubeconfigSecretsAndExec`): a leaked kubeconfig should not hand out credentials or shells.
pub fn role_rules(secrets_and_exec: bool) -> Vec<PolicyRule> {
    let all = || ["get", "list", "watch", "create", "update", "patch", "delete"].map(String::from).to_vec();
    let read = || ["get", "list", "watch"].map(String::from).to_vec();
    let rule = |group: &str, resources: &[&str], verbs: Vec<String>| PolicyRule {
        api_groups: Some(vec![group.to_owned()]),
        resources: Some(resources.iter().map(|r| (*r).to_owned()).collect()),
        verbs,
        ..Default::default()
    };
    let mut rules = vec![
        rule("", &["pods", "pods/log", "services", "configmaps", "persistentvolumeclaims", "events"], all()),
        rule("apps", &["deployments", "statefulsets", "replicasets"], all()),
        rule("batch", &["jobs", "cronjobs"], all()),
        rule("egs.io", &["gpuprovisioningrequests"], all()),
        rule("egs.io", &["gpuprovisioningrequests/status"], read()),
    ];
    if secrets_and_exec {
        rules.push(rule("", &["secrets"], all()));
        // `create` is what opening an exec, attach or port-forward stream checks.
        rules.push(rule("", &["pods/exec", "pods/attach", "pods/portforward"], ["get", "create"].map(String::from).to_vec()));
    }
    rules
}

/// Gives slice `slice` access to `namespaces` on cluster `target` and hands back a kubeconfig
/// whose token expires in `expires` seconds (the rules, who may ask and for how long, are the
/// schema's: `egs_domain::slice::kubeconfig`).
pub async fn grant_slice_access(
    clusters: &KubeClusters,
    target: &cluster::Model,
    slice: &str,
    namespaces: &[String],
    secrets_and_exec: bool,
    expires: i64,
) -> Result<IssuedKubeconfig, ProviderError> {
    let endpoint = endpoint_of(clusters, target).await?;
    let client = clusters.client_for(target).await?;
    let (token, expires_at) = grant(&client, slice, namespaces, secrets_and_exec, expires, clusters.pod_security()).await?;
    let home = namespaces[0].clone();
    let account = account_name(slice);
    let kubeconfig = render(&endpoint, &target.name, slice, &home, &token).map_err(ProviderError::Permanent)?;
    Ok(IssuedKubeconfig { kubeconfig, service_account: format!("{home}/{account}"), namespaces: namespaces.to_vec(), expires_at })
}

/// Where clients reach a cluster's API server, and how they trust it.
#[derive(Debug, Default)]
struct Endpoint {
    server: String,
    certificate_authority_data: Option<String>,
    insecure_skip_tls_verify: Option<bool>,
    tls_server_name: Option<String>,
}

/// The API server of the stored kubeconfig's current context (or, for a cluster EGS reaches
/// through its own service account, the in-cluster address and CA).
async fn endpoint_of(clusters: &KubeClusters, row: &cluster::Model) -> Result<Endpoint, ProviderError> {
    let Some(sealed) = &row.credentials else {
        let config = kube::Config::incluster().map_err(|e| {
            ProviderError::Permanent(format!("no kubeconfig stored and not running in a cluster: {}", egs_domain::redaction::scrubbed(&e)))
        })?;
        let ca = config.root_cert.map(|certs| STANDARD.encode(certs.iter().map(|der| pem(der)).collect::<String>()));
        return Ok(Endpoint {
            server: config.cluster_url.to_string().trim_end_matches('/').to_owned(),
            certificate_authority_data: ca,
            ..Default::default()
        });
    };
    let yaml = clusters.cipher().open(sealed).map_err(ProviderError::Permanent)?;
    let stored = kube::config::Kubeconfig::from_yaml(&yaml).map_err(|_| ProviderError::Permanent("the stored kubeconfig cannot be read".into()))?;
    let context = match &stored.current_context {
        Some(name) => stored.contexts.iter().find(|c| c.name == *name),
        None if stored.contexts.len() == 1 => stored.contexts.first(),
        None => None,
    }
    .and_then(|c| c.context.as_ref())
    .ok_or_else(|| ProviderError::Permanent("the stored kubeconfig has no current context".into()))?;
    let cluster = stored
        .clusters
        .iter()
        .find(|c| c.name == context.cluster)
        .and_then(|c| c.cluster.as_ref())
        .ok_or_else(|| ProviderError::Permanent(format!("the stored kubeconfig has no cluster `{}`", context.cluster)))?;
    let server = cluster.server.clone().ok_or_else(|| ProviderError::Permanent("the stored kubeconfig names no server".into()))?;
    Ok(Endpoint {
        server,
        certificate_authority_data: cluster.certificate_authority_data.clone(),
        insecure_skip_tls_verify: cluster.insecure_skip_tls_verify,
        tls_server_name: cluster.tls_server_name.clone(),
    })
}

/// A DER certificate as PEM.
fn pem(der: &[u8]) -> String {
    let body = STANDARD.encode(der);
    let lines: Vec<&str> = body.as_bytes().chunks(64).filter_map(|c| std::str::from_utf8(c).ok()).collect();
    format!("-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n", lines.join("\n"))
}

fn render(endpoint: &Endpoint, cluster: &str, slice: &str, namespace: &str, token: &str) -> Result<String, String> {
    let mut server = json!({ "server": endpoint.server });
    if let Some(ca) = &endpoint.certificate_authority_data {
        server["certificate-authority-data"] = json!(ca);
    }
    if let Some(skip) = endpoint.insecure_skip_tls_verify {
        server["insecure-skip-tls-verify"] = json!(skip);
    }
    if let Some(name) = &endpoint.tls_server_name {
        server["tls-server-name"] = json!(name);
    }
    let user = format!("{}@{cluster}", account_name(slice));
    let context = format!("{slice}@{cluster}");
    let config = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{ "name": cluster, "cluster": server }],
        "users": [{ "name": user, "user": { "token": token } }],
        "contexts": [{ "name": context, "context": { "cluster": cluster, "user": user, "namespace": namespace } }],
        "current-context": context,
        "preferences": {},
    });
    serde_saphyr::to_string(&config).map_err(|e| format!("cannot write the kubeconfig: {e}"))
}

fn labels(slice: &str) -> BTreeMap<String, String> {
    BTreeMap::from([(SLICE_KEY.to_owned(), slice.to_owned()), (MANAGED_BY_LABEL.to_owned(), COMPONENT.to_owned())])
}

/// Deletes the slice's ServiceAccount wherever it may be among `namespaces`: every token bound
/// to it stops working. Its Roles and RoleBindings stay (they grant nothing without it).
pub async fn revoke(client: &kube::Client, slice: &str, namespaces: &[String]) -> Result<(), ProviderError> {
    let name = account_name(slice);
    for ns in namespaces {
        let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), ns);
        match accounts.delete(&name, &DeleteParams::background()).await {
            Ok(_) => {}
            Err(e) if is_not_found(&e) => {}
            Err(e) => return Err(classify(&format!("cannot delete service account {ns}/{name}"), e)),
        }
    }
    Ok(())
}

/// How often a create is retried while the deleted ServiceAccount of the same name is still
/// going away.
const CREATE_RETRIES: usize = 20;

/// Makes the slice's ServiceAccount anew (revoking its earlier tokens), its Role and
/// RoleBinding in each namespace, and requests a token. Returns the token and its expiry.
async fn grant(
    client: &kube::Client,
    slice: &str,
    namespaces: &[String],
    secrets_and_exec: bool,
    expires: i64,
    pod_security: &str,
) -> Result<(String, DateTime<Utc>), ProviderError> {
    let name = account_name(slice);
    let home = namespaces.first().ok_or_else(|| ProviderError::Permanent("the slice has no namespace on this cluster".into()))?;
    let all_namespaces: Api<Namespace> = Api::all(client.clone());
    // Every namespace is the slice's before any Role is written in one.
    for ns in namespaces {
        claim_namespace(&all_namespaces, ns, slice, pod_security).await?;
    }
    // Revoke: tokens are bound to the account's uid. An account of the same name elsewhere
    // (the namespaces changed since) goes too.
    revoke(client, slice, namespaces).await?;
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), home);
    let account = ServiceAccount {
        metadata: ObjectMeta { name: Some(name.clone()), namespace: Some(home.clone()), labels: Some(labels(slice)), ..Default::default() },
        ..Default::default()
    };
    let mut created = false;
    for _ in 0..CREATE_RETRIES {
        match accounts.create(&PostParams::default(), &account).await {
            Ok(_) => {
                created = true;
                break;
            }
            Err(e) if is_conflict(&e) => tokio::time::sleep(Duration::from_millis(100)).await,
            Err(e) => return Err(classify(&format!("cannot create service account {home}/{name}"), e)),
        }
    }
    if !created {
        return Err(ProviderError::Transient(format!("the old service account {home}/{name} is still being deleted; try again")));
    }
    let apply = PatchParams::apply(COMPONENT).force();
    for ns in namespaces {
        let role = Role {
            metadata: ObjectMeta { name: Some(name.clone()), namespace: Some(ns.clone()), labels: Some(labels(slice)), ..Default::default() },
            rules: Some(role_rules(secrets_and_exec)),
        };
        let roles: Api<Role> = Api::namespaced(client.clone(), ns);
        roles.patch(&name, &apply, &Patch::Apply(&role)).await.map_err(|e| classify(&format!("cannot write role {ns}/{name}"), e))?;
        let binding = RoleBinding {
            metadata: ObjectMeta { name: Some(name.clone()), namespace: Some(ns.clone()), labels: Some(labels(slice)), ..Default::default() },
            role_ref: RoleRef { api_group: Some("rbac.authorization.k8s.io".into()), kind: "Role".into(), name: name.clone() },
            subjects: Some(vec![Subject { kind: "ServiceAccount".into(), name: name.clone(), namespace: Some(home.clone()), api_group: None }]),
        };
        let bindings: Api<RoleBinding> = Api::namespaced(client.clone(), ns);
        bindings.patch(&name, &apply, &Patch::Apply(&binding)).await.map_err(|e| classify(&format!("cannot write role binding {ns}/{name}"), e))?;
    }
    let request = TokenRequest {
        metadata: ObjectMeta::default(),
        spec: Some(TokenRequestSpec { expiration_seconds: Some(expires), ..Default::default() }),
        status: None,
    };
    let issued = accounts
        .create_token_request(&name, &PostParams::default(), &request)
        .await
        .map_err(|e| classify(&format!("cannot request a token for {home}/{name}"), e))?;
    let status = issued.status.unwrap_or_default();
    let token = status
        .token
        .filter(|t| !t.is_empty())
        .ok_or_else(|| ProviderError::Transient("the API server answered the TokenRequest without a token".into()))?;
    let expires_at = status
        .expiration_timestamp
        .and_then(|at| DateTime::from_timestamp(at.0.as_second(), at.0.subsec_nanosecond().max(0) as u32))
        .unwrap_or_else(|| Utc::now() + chrono::Duration::seconds(expires));
    Ok((token, expires_at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kubeconfig_parses_and_points_at_the_first_namespace() {
        let endpoint = Endpoint { server: "https://k8s.example:6443".into(), certificate_authority_data: Some("Q0E=".into()), ..Default::default() };
        let yaml = render(&endpoint, "prod", "team-a", "team-a", "secret-token").expect("rendered");
        let parsed = kube::config::Kubeconfig::from_yaml(&yaml).expect("a kubeconfig");
        let context = parsed.contexts[0].context.as_ref().expect("context");
        assert_eq!(context.namespace.as_deref(), Some("team-a"));
        assert_eq!(parsed.current_context.as_deref(), Some("team-a@prod"));
        let cluster = parsed.clusters[0].cluster.as_ref().expect("cluster");
        assert_eq!(cluster.server.as_deref(), Some("https://k8s.example:6443"));
        assert_eq!(cluster.certificate_authority_data.as_deref(), Some("Q0E="));
    }

    #[test]
    fn the_role_covers_workloads_and_gprs_and_secrets_and_exec_only_by_policy() {
        let grants =
            |rules: &[PolicyRule], resource: &str| rules.iter().any(|r| r.resources.as_ref().is_some_and(|x| x.iter().any(|x| x == resource)));
        let plain = role_rules(false);
        for resource in ["pods", "pods/log", "deployments", "jobs", "gpuprovisioningrequests"] {
            assert!(grants(&plain, resource), "{resource}");
        }
        for resource in ["secrets", "pods/exec", "pods/attach", "pods/portforward"] {
            assert!(!grants(&plain, resource), "{resource} only when the policy says so");
            assert!(grants(&role_rules(true), resource), "{resource} with the policy");
        }
        let rules = role_rules(false);
        let status = rules.iter().find(|r| r.resources.as_ref().is_some_and(|x| x.contains(&"gpuprovisioningrequests/status".to_owned())));
        assert_eq!(status.map(|r| r.verbs.clone()), Some(vec!["get".to_owned(), "list".to_owned(), "watch".to_owned()]));
    }
}
