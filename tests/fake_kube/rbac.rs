//! Authorization of service account tokens by namespaced RBAC (Roles and RoleBindings), with the
//! matching rules of the real RBAC authorizer. ClusterRoles are not modelled: cluster-scoped
//! requests and RoleBindings to ClusterRoles grant nothing.

use super::kinds::Kind;
use super::store::Store;
use serde_json::Value;

/// What a request asks to do, as the authorizer sees it.
pub(crate) struct Attributes<'a> {
    pub verb: &'a str,
    pub kind: &'static Kind,
    pub subresource: Option<&'a str>,
    /// The namespace; for the `namespaces` resource, the namespace's own name.
    pub namespace: Option<&'a str>,
    pub name: Option<&'a str>,
}

impl Attributes<'_> {
    /// The forbidden message's reason: `User "..." cannot list resource "pods" in API group "" ...`.
    pub(crate) fn denial(&self, user: &str) -> String {
        let resource = match self.subresource {
            Some(sub) => format!("{}/{sub}", self.kind.plural),
            None => self.kind.plural.to_owned(),
        };
        let scope = match self.namespace {
            Some(ns) => format!("in the namespace \"{ns}\""),
            None => "at the cluster scope".to_owned(),
        };
        format!("User \"{user}\" cannot {} resource \"{resource}\" in API group \"{}\" {scope}", self.verb, self.kind.group)
    }
}

fn strings(value: &Value) -> impl Iterator<Item = &str> {
    value.as_array().into_iter().flatten().filter_map(Value::as_str)
}

fn rule_allows(rule: &Value, attributes: &Attributes) -> bool {
    let verbs = strings(&rule["verbs"]).any(|v| v == "*" || v == attributes.verb);
    let groups = strings(&rule["apiGroups"]).any(|g| g == "*" || g == attributes.kind.group);
    let combined = match attributes.subresource {
        Some(sub) => format!("{}/{sub}", attributes.kind.plural),
        None => attributes.kind.plural.to_owned(),
    };
    let resources =
        strings(&rule["resources"]).any(|r| r == "*" || r == combined || attributes.subresource.is_some_and(|sub| r.strip_prefix("*/") == Some(sub)));
    let names: Vec<&str> = strings(&rule["resourceNames"]).collect();
    let named = names.is_empty() || attributes.name.is_some_and(|n| names.contains(&n));
    verbs && groups && resources && named
}

/// Whether the service account `namespace/name` may do what `attributes` asks.
pub(crate) fn allows(store: &Store, account_namespace: &str, account_name: &str, attributes: &Attributes) -> bool {
    let Some(namespace) = attributes.namespace else { return false };
    let (Some(bindings), Some(roles)) = (Kind::named("rolebindings"), Kind::named("roles")) else { return false };
    let user = format!("system:serviceaccount:{account_namespace}:{account_name}");
    let groups = ["system:serviceaccounts".to_owned(), format!("system:serviceaccounts:{account_namespace}"), "system:authenticated".to_owned()];
    store.list(bindings, Some(namespace)).iter().any(|(_, binding)| {
        let bound = binding["subjects"].as_array().into_iter().flatten().any(|subject| match subject["kind"].as_str() {
            // A ServiceAccount subject without a namespace is invalid on a real server.
            Some("ServiceAccount") => subject["name"] == account_name && subject["namespace"] == account_namespace,
            Some("User") => subject["name"] == user.as_str(),
            Some("Group") => groups.iter().any(|g| subject["name"] == g.as_str()),
            _ => false,
        });
        let role_ref = &binding["roleRef"];
        bound
            && role_ref["kind"] == "Role"
            && role_ref["name"]
                .as_str()
                .and_then(|role| store.get(roles, Some(namespace), role))
                .is_some_and(|role| role["rules"].as_array().into_iter().flatten().any(|rule| rule_allows(rule, attributes)))
    })
}
