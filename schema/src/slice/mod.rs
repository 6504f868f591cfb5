//! Slices (workspaces): namespaces on clusters, members with roles, and a policy.

pub mod kubeconfig;
pub mod personal;
pub mod requests;
use egs_domain::slice::service;

use crate::cluster::Cluster;
use crate::gpr::{Gpr, GprFilter};
use crate::ids::{self, Kind};
use crate::metrics::GpuSummary;
use crate::pagination::{Order, Page, PageRequest, keyset_page};
use crate::scalars::Duration;
use crate::user::User;
use crate::{app, loaded, loaders, payload, session};
use async_graphql::{Context, ID, InputObject, MaybeUndefined, Object};
use chrono::{DateTime, Utc};
use egs_domain::error::{Error, Result};
use egs_entities::{SlicePolicy, SliceRole, slice, slice_member, slice_namespace};

/// A team workspace: namespaces on clusters, members, and a policy.
pub struct Slice(pub slice::Model);

#[Object]
impl Slice {
    pub async fn id(&self) -> ID {
        ids::encode(Kind::Slice, self.0.id)
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    async fn description(&self) -> Option<&str> {
        self.0.description.as_deref()
    }
    /// Clusters the slice may use.
    async fn clusters(&self, ctx: &Context<'_>) -> Result<Vec<Cluster>> {
        let links = loaded(loaders(ctx)?.clusters_by_slice().load_one(self.0.id).await)?.unwrap_or_default();
        let clusters = loaded(loaders(ctx)?.cluster().load_many(links.iter().map(|l| l.cluster_id)).await)?;
        let mut clusters: Vec<Cluster> = clusters.into_values().map(Cluster).collect();
        clusters.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        Ok(clusters)
    }
    async fn namespaces(&self, ctx: &Context<'_>) -> Result<Vec<SliceNamespace>> {
        Ok(loaded(loaders(ctx)?.namespaces_by_slice().load_one(self.0.id).await)?.unwrap_or_default().into_iter().map(SliceNamespace).collect())
    }
    async fn members(&self, ctx: &Context<'_>) -> Result<Vec<SliceMember>> {
        Ok(loaded(loaders(ctx)?.members_by_slice().load_one(self.0.id).await)?.unwrap_or_default().into_iter().map(SliceMember).collect())
    }
    async fn policy(&self) -> SlicePolicyView {
        SlicePolicyView(self.0.policy.clone())
    }
    /// Auto-GPR: a GPR from a template when one of the slice's GPU pods stays Pending.
    async fn auto_gpr(&self) -> crate::template::SliceAutoGpr {
        crate::template::SliceAutoGpr::of(&self.0)
    }
    /// The caller's role here (admins are owners everywhere).
    async fn viewer_role(&self, ctx: &Context<'_>) -> Result<Option<SliceRole>> {
        crate::boxed(async move {
            let (caller, db) = session(ctx)?;
            caller.slice_role(db, self.0.id).await
        })
        .await
    }
    /// This slice's GPRs, newest first.
    async fn gprs(&self, ctx: &Context<'_>, filter: Option<GprFilter>, first: Option<i32>, after: Option<String>) -> Result<Page<Gpr>> {
        crate::boxed(async move {
            let filter = filter.unwrap_or_default().within_slice(self.0.id);
            crate::gpr::list_gprs_page(ctx, filter, first, after).await
        })
        .await
    }
    /// Utilisation, temperature and power over the latest samples of the GPUs on the nodes its
    /// GPRs hold now (what `gpuSummary(sliceId:)` gives, under the same rules); null while they
    /// hold none.
    async fn gpu_summary(&self, ctx: &Context<'_>) -> Result<Option<GpuSummary>> {
        crate::boxed(async move {
            let (caller, db) = session(ctx)?;
            match egs_domain::metrics::access::scope_gpus(db, caller, egs_domain::metrics::access::Scope::Slice(self.0.id)).await {
                Ok(gpus) if gpus.is_empty() => Ok(None),
                Ok(gpus) => Ok(Some(egs_domain::metrics::summary::summarize(gpus).into())),
                // A slice the caller may not see reads as one without metrics, not as an error on
                // an object they already hold.
                Err(Error::NotFound(_)) => Ok(None),
                Err(other) => Err(other),
            }
        })
        .await
    }
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    async fn updated_at(&self) -> DateTime<Utc> {
        self.0.updated_at
    }
}

/// A namespace on one cluster that belongs to a slice.
pub struct SliceNamespace(pub slice_namespace::Model);

#[Object]
impl SliceNamespace {
    async fn id(&self) -> ID {
        ids::encode(Kind::SliceNamespace, self.0.id)
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    async fn cluster(&self, ctx: &Context<'_>) -> Result<Option<Cluster>> {
        Ok(loaded(loaders(ctx)?.cluster().load_one(self.0.cluster_id).await)?.map(Cluster))
    }
}

/// A user's role in a slice.
pub struct SliceMember(pub slice_member::Model);

#[Object]
impl SliceMember {
    async fn user(&self, ctx: &Context<'_>) -> Result<Option<User>> {
        Ok(loaded(loaders(ctx)?.user().load_one(self.0.user_id).await)?.map(User))
    }
    async fn role(&self) -> SliceRole {
        self.0.role
    }
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
}

/// A slice's policy. Absent limits mean "no limit".
pub struct SlicePolicyView(pub SlicePolicy);

#[Object(name = "SlicePolicy")]
impl SlicePolicyView {
    /// Lowest priority the slice's GPRs may ask for without approval.
    async fn priority_min(&self) -> i32 {
        self.0.priority_min
    }
    /// Highest priority the slice's GPRs may ask for without approval.
    async fn priority_max(&self) -> i32 {
        self.0.priority_max
    }
    /// Most pending GPRs at once; more need approval.
    async fn max_queued_gprs(&self) -> Option<i32> {
        self.0.max_queued_gprs
    }
    /// Most nodes per GPR without approval.
    async fn max_nodes_per_gpr(&self) -> Option<i32> {
        self.0.max_nodes_per_gpr
    }
    /// Most GPUs per GPR without approval.
    async fn max_gpus_per_gpr(&self) -> Option<i32> {
        self.0.max_gpus_per_gpr
    }
    /// Longest reserved window; longer GPRs are rejected.
    async fn max_duration(&self) -> Option<Duration> {
        self.0.max_duration_secs.map(Duration)
    }
    /// GPU shapes the slice may ask for; empty means any.
    async fn allowed_shapes(&self) -> &[String] {
        &self.0.allowed_shapes
    }
    /// Idle timeout for GPRs that set none.
    async fn default_idle_timeout(&self) -> Option<Duration> {
        self.0.default_idle_timeout_secs.map(Duration)
    }
    /// Longest idle timeout a GPR may set; also forbids turning it off.
    async fn max_idle_timeout(&self) -> Option<Duration> {
        self.0.max_idle_timeout_secs.map(Duration)
    }
    /// Whether the slice's GPRs may be preempted by higher-priority ones.
    async fn auto_eviction(&self) -> bool {
        self.0.auto_eviction
    }
    /// Whether an evicted GPR goes back to the queue.
    async fn requeue_on_eviction(&self) -> bool {
        self.0.requeue_on_eviction
    }
    /// Whether a GPR whose provisioning failed goes back to the queue.
    async fn requeue_on_failure(&self) -> bool {
        self.0.requeue_on_failure
    }
    /// GPU-hours per quota period; over it, GPRs need approval.
    async fn gpu_hour_quota(&self) -> Option<i64> {
        self.0.gpu_hour_quota
    }
    async fn quota_period(&self) -> Duration {
        Duration(self.0.quota_period_secs)
    }
    /// Whether the slice's kubeconfigs may read Secrets and exec, attach or port-forward into
    /// pods (off unless an admin turns it on).
    async fn kubeconfig_secrets_and_exec(&self) -> bool {
        self.0.kubeconfig_secrets_and_exec
    }
    /// How much a GPR's window may be extended in all without an admin's approval (30 min
    /// unless set); never past a waiting GPR's promise.
    async fn extension_grace(&self) -> Duration {
        Duration(self.0.extension_grace_secs)
    }
    /// A provisioned GPR whose GPUs average under this utilisation (percent) over
    /// `underusePeriod` raises `GPR_UNDERUSED`; `null`: no such warning.
    async fn underuse_below_percent(&self) -> Option<i32> {
        self.0.underuse_below_percent
    }
    async fn underuse_period(&self) -> Duration {
        Duration(self.0.underuse_period_secs)
    }
}

/// Changes to a slice policy: omitted fields keep their value, `null` removes a limit.
#[derive(InputObject, Default)]
pub struct SlicePolicyInput {
    pub priority_min: Option<i32>,
    pub priority_max: Option<i32>,
    pub max_queued_gprs: MaybeUndefined<i32>,
    pub max_nodes_per_gpr: MaybeUndefined<i32>,
    pub max_gpus_per_gpr: MaybeUndefined<i32>,
    pub max_duration: MaybeUndefined<Duration>,
    pub allowed_shapes: Option<Vec<String>>,
    pub default_idle_timeout: MaybeUndefined<Duration>,
    pub max_idle_timeout: MaybeUndefined<Duration>,
    pub auto_eviction: Option<bool>,
    pub requeue_on_eviction: Option<bool>,
    pub requeue_on_failure: Option<bool>,
    pub gpu_hour_quota: MaybeUndefined<i64>,
    pub quota_period: Option<Duration>,
    pub kubeconfig_secrets_and_exec: Option<bool>,
    /// `0` sends every extension to an admin.
    pub extension_grace: Option<Duration>,
    /// 1–100; `null` turns the under-use warning off.
    pub underuse_below_percent: MaybeUndefined<i32>,
    /// 5 minutes to 7 days.
    pub underuse_period: Option<Duration>,
}

impl SlicePolicyInput {
    pub fn apply_to(self, policy: &mut SlicePolicy) {
        fn set<T>(target: &mut T, value: Option<T>) {
            if let Some(value) = value {
                *target = value;
            }
        }
        set(&mut policy.priority_min, self.priority_min);
        set(&mut policy.priority_max, self.priority_max);
        self.max_queued_gprs.update_to(&mut policy.max_queued_gprs);
        self.max_nodes_per_gpr.update_to(&mut policy.max_nodes_per_gpr);
        self.max_gpus_per_gpr.update_to(&mut policy.max_gpus_per_gpr);
        self.max_duration.map_value(Duration::secs).update_to(&mut policy.max_duration_secs);
        set(&mut policy.allowed_shapes, self.allowed_shapes);
        self.default_idle_timeout.map_value(Duration::secs).update_to(&mut policy.default_idle_timeout_secs);
        self.max_idle_timeout.map_value(Duration::secs).update_to(&mut policy.max_idle_timeout_secs);
        set(&mut policy.auto_eviction, self.auto_eviction);
        set(&mut policy.requeue_on_eviction, self.requeue_on_eviction);
        set(&mut policy.requeue_on_failure, self.requeue_on_failure);
        self.gpu_hour_quota.update_to(&mut policy.gpu_hour_quota);
        set(&mut policy.quota_period_secs, self.quota_period.map(Duration::secs));
        set(&mut policy.kubeconfig_secrets_and_exec, self.kubeconfig_secrets_and_exec);
        set(&mut policy.extension_grace_secs, self.extension_grace.map(Duration::secs));
        self.underuse_below_percent.update_to(&mut policy.underuse_below_percent);
        set(&mut policy.underuse_period_secs, self.underuse_period.map(Duration::secs));
    }
}

#[derive(InputObject)]
pub struct NamespaceInput {
    pub cluster_id: ID,
    /// A Kubernetes namespace name (DNS label).
    pub name: String,
}

#[derive(InputObject)]
pub struct MemberInput {
    pub user_id: ID,
    pub role: SliceRole,
}

#[derive(InputObject)]
pub struct CreateSliceInput {
    /// A DNS label, unique among slices.
    pub name: String,
    pub description: Option<String>,
    /// Clusters the slice may use; clusters of `namespaces` are added anyway.
    #[graphql(default)]
    pub cluster_ids: Vec<ID>,
    #[graphql(default)]
    pub namespaces: Vec<NamespaceInput>,
    #[graphql(default)]
    pub members: Vec<MemberInput>,
    /// Starts from the default policy (priorities 1–200, no limits, eviction allowed).
    pub policy: Option<SlicePolicyInput>,
}

#[derive(InputObject)]
pub struct UpdateSliceInput {
    pub id: ID,
    pub name: Option<String>,
    /// `null` clears it.
    pub description: MaybeUndefined<String>,
    /// When given, the slice may use exactly these clusters.
    pub cluster_ids: Option<Vec<ID>>,
}

#[derive(InputObject)]
pub struct DeleteSliceInput {
    pub id: ID,
}

#[derive(InputObject)]
pub struct SliceNamespaceInput {
    pub slice_id: ID,
    pub cluster_id: ID,
    pub name: String,
}

#[derive(InputObject)]
pub struct AddSliceMemberInput {
    pub slice_id: ID,
    /// Admins may name anyone by id; owners only someone they already share a slice with.
    pub user_id: Option<ID>,
    /// The user's exact name or e-mail address (instead of `userId`).
    pub user: Option<String>,
    pub role: SliceRole,
}

#[derive(InputObject)]
pub struct RemoveSliceMemberInput {
    pub slice_id: ID,
    pub user_id: ID,
}

#[derive(InputObject)]
pub struct SetSlicePolicyInput {
    pub slice_id: ID,
    pub policy: SlicePolicyInput,
}

payload!(CreateSlicePayload, slice: Slice);
payload!(UpdateSlicePayload, slice: Slice);
payload!(
    /// The deleted slice, as it was.
    DeleteSlicePayload,
    slice: Slice
);
payload!(SliceNamespacePayload, slice: Slice);
payload!(SliceMemberPayload, slice: Slice);
payload!(SetSlicePolicyPayload, slice: Slice);

#[derive(Default)]
pub struct SliceQuery;

#[Object]
impl SliceQuery {
    /// Slices the caller is a member of (all slices for admins), by name.
    async fn slices(&self, ctx: &Context<'_>, first: Option<i32>, after: Option<String>) -> Result<Page<Slice>> {
        let (caller, db) = session(ctx)?;
        let request = PageRequest::new(first, after)?;
        let select = service::slices_select(db, caller).await?;
        keyset_page(db, request, select, slice::Column::Id, Order::OldestFirst, |s| s.id, Slice).await
    }

    /// One slice, by id or by name.
    async fn slice(&self, ctx: &Context<'_>, id: Option<ID>, name: Option<String>) -> Result<Slice> {
        let (caller, db) = session(ctx)?;
        let found = match (id, name) {
            (Some(id), None) => service::find_slice(db, caller, ids::decode("id", &id, Kind::Slice)?).await?,
            (None, Some(name)) => service::find_slice_by_name(db, caller, &name).await?,
            _ => return Err(egs_domain::error::Error::invalid("id", "give exactly one of `id` and `name`")),
        };
        Ok(Slice(found))
    }
}

fn namespace_spec(input: &SliceNamespaceInput) -> Result<(i64, service::NamespaceSpec)> {
    Ok((
        ids::decode("sliceId", &input.slice_id, Kind::Slice)?,
        service::NamespaceSpec { cluster_id: ids::decode("clusterId", &input.cluster_id, Kind::Cluster)?, name: input.name.clone() },
    ))
}

#[derive(Default)]
pub struct SliceMutation;

#[Object]
impl SliceMutation {
    /// Creates a slice with namespaces, members and a policy (admin).
    async fn create_slice(&self, ctx: &Context<'_>, input: CreateSliceInput) -> async_graphql::Result<CreateSlicePayload> {
        let (caller, db) = session(ctx)?;
        let result = async {
            let mut policy = SlicePolicy::default();
            if let Some(changes) = input.policy {
                changes.apply_to(&mut policy);
            }
            let spec = service::CreateSlice {
                name: input.name,
                description: input.description,
                cluster_ids: input
                    .cluster_ids
                    .iter()
                    .enumerate()
                    .map(|(i, id)| ids::decode(&format!("clusterIds.{i}"), id, Kind::Cluster))
                    .collect::<Result<_>>()?,
                namespaces: input
                    .namespaces
                    .iter()
                    .enumerate()
                    .map(|(i, ns)| {
                        Ok(service::NamespaceSpec {
                            cluster_id: ids::decode(&format!("namespaces.{i}.clusterId"), &ns.cluster_id, Kind::Cluster)?,
                            name: ns.name.clone(),
                        })
                    })
                    .collect::<Result<_>>()?,
                members: input
                    .members
                    .iter()
                    .enumerate()
                    .map(|(i, m)| {
                        Ok(service::MemberSpec { user_id: ids::decode(&format!("members.{i}.userId"), &m.user_id, Kind::User)?, role: m.role })
                    })
                    .collect::<Result<_>>()?,
                policy,
            };
            service::create_slice(db, caller, spec).await.map(Slice)
        };
        CreateSlicePayload::from_result(result.await)
    }

    /// Renames a slice, changes its description or the clusters it may use (admin).
    async fn update_slice(&self, ctx: &Context<'_>, input: UpdateSliceInput) -> async_graphql::Result<UpdateSlicePayload> {
        let (caller, db) = session(ctx)?;
        let result = async {
            let spec = service::UpdateSlice {
                id: ids::decode("id", &input.id, Kind::Slice)?,
                name: input.name,
                description: input.description.into(),
                cluster_ids: input
                    .cluster_ids
                    .map(|list| {
                        list.iter().enumerate().map(|(i, id)| ids::decode(&format!("clusterIds.{i}"), id, Kind::Cluster)).collect::<Result<Vec<_>>>()
                    })
                    .transpose()?,
            };
            service::update_slice(db, caller, spec).await.map(Slice)
        };
        UpdateSlicePayload::from_result(result.await)
    }

    /// Deletes a slice and its history (admin); refused while it has unfinished GPRs.
    async fn delete_slice(&self, ctx: &Context<'_>, input: DeleteSliceInput) -> async_graphql::Result<DeleteSlicePayload> {
        let (caller, db) = session(ctx)?;
        let result = async {
            let id = ids::decode("id", &input.id, Kind::Slice)?;
            let places = if caller.is_admin() { egs_domain::slice::kubeconfig::kube_namespaces(db, id).await? } else { Vec::new() };
            let deleted = service::delete_slice(db, caller, app(ctx)?.access_news(), id).await?;
            egs_domain::slice::kubeconfig::revoke_all(db.clone(), app(ctx)?.kubernetes.clone(), deleted.clone(), places);
            Ok(Slice(deleted))
        };
        DeleteSlicePayload::from_result(result.await)
    }

    /// Gives a namespace on a cluster to the slice (admin).
    async fn add_slice_namespace(&self, ctx: &Context<'_>, input: SliceNamespaceInput) -> async_graphql::Result<SliceNamespacePayload> {
        let (caller, db) = session(ctx)?;
        let result = async {
            let (slice_id, spec) = namespace_spec(&input)?;
            service::add_slice_namespace(db, caller, slice_id, spec).await.map(Slice)
        };
        SliceNamespacePayload::from_result(result.await)
    }

    /// Takes a namespace away from the slice (admin).
    async fn remove_slice_namespace(&self, ctx: &Context<'_>, input: SliceNamespaceInput) -> async_graphql::Result<SliceNamespacePayload> {
        let (caller, db) = session(ctx)?;
        let result = async {
            let (slice_id, spec) = namespace_spec(&input)?;
            service::remove_slice_namespace(db, caller, slice_id, spec).await.map(Slice)
        };
        SliceNamespacePayload::from_result(result.await)
    }

    /// Adds a member or changes their role (admins and slice owners). Name the user by `user`
    /// (exact name or e-mail) or, when you already share a slice with them, by `userId`.
    async fn add_slice_member(&self, ctx: &Context<'_>, input: AddSliceMemberInput) -> async_graphql::Result<SliceMemberPayload> {
        let (caller, db) = session(ctx)?;
        let result = async {
            let slice_id = ids::decode("sliceId", &input.slice_id, Kind::Slice)?;
            let user_id = match (&input.user_id, &input.user) {
                (Some(id), None) => service::MemberRef::Id(ids::decode("userId", id, Kind::User)?),
                (None, Some(text)) => service::MemberRef::NameOrEmail(text.clone()),
                _ => return Err(Error::invalid("userId", "give exactly one of `userId` and `user` (a name or e-mail address)")),
            };
            let user_id = service::find_new_member(db, caller, slice_id, user_id).await?;
            let was_owner = is_owner(db, slice_id, user_id).await?;
            let changed =
                service::add_slice_member(db, caller, app(ctx)?.access_news(), slice_id, service::MemberSpec { user_id, role: input.role }).await?;
            if was_owner && input.role != SliceRole::Owner {
                owner_lost_access(ctx, db, &changed).await?;
            }
            Ok(Slice(changed))
        };
        SliceMemberPayload::from_result(result.await)
    }

    /// Removes a member (admins and slice owners).
    async fn remove_slice_member(&self, ctx: &Context<'_>, input: RemoveSliceMemberInput) -> async_graphql::Result<SliceMemberPayload> {
        let (caller, db) = session(ctx)?;
        let result = async {
            let slice_id = ids::decode("sliceId", &input.slice_id, Kind::Slice)?;
            let user_id = ids::decode("userId", &input.user_id, Kind::User)?;
            let was_owner = is_owner(db, slice_id, user_id).await?;
            let changed = service::remove_slice_member(db, caller, app(ctx)?.access_news(), slice_id, user_id).await?;
            if was_owner {
                owner_lost_access(ctx, db, &changed).await?;
            }
            Ok(Slice(changed))
        };
        SliceMemberPayload::from_result(result.await)
    }

    /// Changes the slice policy (admin): omitted fields keep their value, `null` removes a limit.
    async fn set_slice_policy(&self, ctx: &Context<'_>, input: SetSlicePolicyInput) -> async_graphql::Result<SetSlicePolicyPayload> {
        let (caller, db) = session(ctx)?;
        let result = async {
            let slice_id = ids::decode("sliceId", &input.slice_id, Kind::Slice)?;
            service::set_slice_policy(db, caller, slice_id, |policy| input.policy.apply_to(policy)).await.map(Slice)
        };
        SetSlicePolicyPayload::from_result(result.await)
    }
}

async fn is_owner(db: &sea_orm::DatabaseConnection, slice_id: i64, user_id: i64) -> egs_domain::error::Result<bool> {
    use sea_orm::EntityTrait;
    Ok(egs_entities::slice_member::Entity::find_by_id((slice_id, user_id)).one(db).await?.is_some_and(|m| m.role == SliceRole::Owner))
}

/// An owner was removed or demoted: the kubeconfigs issued for the slice (owners ask for them)
/// are revoked, so none outlives the access it was issued under.
async fn owner_lost_access(ctx: &Context<'_>, db: &sea_orm::DatabaseConnection, changed: &slice::Model) -> egs_domain::error::Result<()> {
    let places = egs_domain::slice::kubeconfig::kube_namespaces(db, changed.id).await?;
    egs_domain::slice::kubeconfig::revoke_all(db.clone(), app(ctx)?.kubernetes.clone(), changed.clone(), places);
    Ok(())
}
