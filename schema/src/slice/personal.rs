//! The private-workspace policy as the API shows it: `personalWorkspacePolicy`,
//! `setPersonalWorkspacePolicy`. The rules are `egs_domain::slice::personal`.

use crate::ids::{self, Kind};
use crate::{payload, session};
use async_graphql::{Context, ID, InputObject, Object, SimpleObject};
use egs_domain::error::Result;
use egs_domain::slice::personal;
use egs_entities::personal_workspace_policy as policy;

/// The policy as admins read it.
#[derive(SimpleObject)]
pub struct PersonalWorkspacePolicy {
    pub enabled: bool,
    pub cluster_id: ID,
    pub cluster_name: Option<String>,
    pub max_nodes_per_gpr: Option<i32>,
    pub gpu_hour_quota: Option<i64>,
}

fn view((p, cluster_name): (policy::Model, Option<String>)) -> PersonalWorkspacePolicy {
    PersonalWorkspacePolicy {
        enabled: p.enabled,
        cluster_id: ids::encode(Kind::Cluster, p.cluster_id),
        cluster_name,
        max_nodes_per_gpr: p.max_nodes_per_gpr,
        gpu_hour_quota: p.gpu_hour_quota,
    }
}

#[derive(Default)]
pub struct PersonalWorkspaceQuery;

#[Object]
impl PersonalWorkspaceQuery {
    /// Whether every new user gets a private workspace, where and how big (admins; null until set).
    async fn personal_workspace_policy(&self, ctx: &Context<'_>) -> Result<Option<PersonalWorkspacePolicy>> {
        let (caller, db) = session(ctx)?;
        Ok(personal::read_policy(db, caller).await?.map(view))
    }
}

#[derive(InputObject)]
pub struct SetPersonalWorkspacePolicyInput {
    pub enabled: bool,
    /// The cluster the workspaces' namespaces are made on.
    pub cluster_id: ID,
    pub max_nodes_per_gpr: Option<i32>,
    pub gpu_hour_quota: Option<i64>,
}

payload!(PersonalWorkspacePolicyPayload, policy: PersonalWorkspacePolicy);

#[derive(Default)]
pub struct PersonalWorkspaceMutation;

#[Object]
impl PersonalWorkspaceMutation {
    /// Sets the private-workspace policy (admins); it applies to users made from now on.
    async fn set_personal_workspace_policy(
        &self,
        ctx: &Context<'_>,
        input: SetPersonalWorkspacePolicyInput,
    ) -> async_graphql::Result<PersonalWorkspacePolicyPayload> {
        let result = async {
            let (caller, db) = session(ctx)?;
            let cluster_id = ids::decode("clusterId", &input.cluster_id, Kind::Cluster)?;
            let new = personal::NewPolicy {
                enabled: input.enabled,
                cluster_id,
                max_nodes_per_gpr: input.max_nodes_per_gpr,
                gpu_hour_quota: input.gpu_hour_quota,
            };
            let stored = personal::set_policy(db, caller, new).await?;
            Ok(view(personal::named(db, stored).await?))
        }
        .await;
        PersonalWorkspacePolicyPayload::from_result(result)
    }
}
