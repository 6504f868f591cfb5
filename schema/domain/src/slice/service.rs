//! Slices: workspaces with namespaces on clusters, members with roles, and a policy.

use crate::auth::{AccessNews, Caller, Visible, reduce_access};
use crate::cluster::service::default_project_id;
use crate::error::{Error, Result, UserError};
use crate::validate;
use chrono::Utc;
use egs_entities::{GprPhase, SlicePolicy, SliceRole, cluster, gpr, slice, slice_cluster, slice_member, slice_namespace, user};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, Select, Set, TransactionTrait,
};
use std::collections::BTreeSet;

/// Highest GPR priority; bands are low 1–100, medium 101–200, high 201–300.
pub const MAX_PRIORITY: i32 = 300;

pub struct NamespaceSpec {
    pub cluster_id: i64,
    pub name: String,
}

pub struct MemberSpec {
    pub user_id: i64,
    pub role: SliceRole,
}

pub struct CreateSlice {
    pub name: String,
    pub description: Option<String>,
    pub cluster_ids: Vec<i64>,
    pub namespaces: Vec<NamespaceSpec>,
    pub members: Vec<MemberSpec>,
    pub policy: SlicePolicy,
}

pub struct UpdateSlice {
    pub id: i64,
    pub name: Option<String>,
    pub description: Option<Option<String>>,
    /// When given, the slice may use exactly these clusters.
    pub cluster_ids: Option<Vec<i64>>,
}

/// Slices the caller may see.
pub async fn slices_select(db: &DatabaseConnection, caller: &Caller) -> Result<Select<slice::Entity>> {
    caller.require_person()?;
    Ok(match caller.visible_slices(db).await? {
        Visible::All => slice::Entity::find(),
        Visible::Only(ids) => slice::Entity::find().filter(slice::Column::Id.is_in(ids)),
    })
}

pub async fn find_slice(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<slice::Model> {
    caller.require_person()?;
    caller.require_slice_role(db, id, SliceRole::Viewer, "slice").await?;
    slice::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("slice"))
}

pub async fn find_slice_by_name(db: &DatabaseConnection, caller: &Caller, name: &str) -> Result<slice::Model> {
    caller.require_person()?;
    let found = slice::Entity::find().filter(slice::Column::Name.eq(name)).one(db).await?.ok_or(Error::NotFound("slice"))?;
    caller.require_slice_role(db, found.id, SliceRole::Viewer, "slice").await?;
    Ok(found)
}

/// A week: a longer grace is no grace but a second window nobody approved.
const MAX_EXTENSION_GRACE_SECS: i64 = 7 * 24 * 3600;

/// Checks a policy for internal consistency.
pub fn check_policy(policy: &SlicePolicy, errors: &mut Vec<UserError>) {
    let at = |f: &str| format!("policy.{f}");
    validate::range(&at("priorityMin"), policy.priority_min.into(), 1, MAX_PRIORITY.into(), errors);
    validate::range(&at("priorityMax"), policy.priority_max.into(), 1, MAX_PRIORITY.into(), errors);
    if policy.priority_min > policy.priority_max {
        errors.push(UserError::invalid(&at("priorityMax"), "must not be below priorityMin"));
    }
    for (field, value) in
        [("maxQueuedGprs", policy.max_queued_gprs), ("maxNodesPerGpr", policy.max_nodes_per_gpr), ("maxGpusPerGpr", policy.max_gpus_per_gpr)]
    {
        if let Some(v) = value {
            validate::range(&at(field), v.into(), 1, 1_000_000, errors);
        }
    }
    for (field, value) in [
        ("maxDuration", policy.max_duration_secs),
        ("defaultIdleTimeout", policy.default_idle_timeout_secs),
        ("maxIdleTimeout", policy.max_idle_timeout_secs),
    ] {
        if value.is_some_and(|v| v <= 0) {
            errors.push(UserError::invalid(&at(field), "must be longer than zero"));
        }
    }
    if let (Some(default), Some(max)) = (policy.default_idle_timeout_secs, policy.max_idle_timeout_secs)
        && default > max
    {
        errors.push(UserError::invalid(&at("defaultIdleTimeout"), "must not exceed maxIdleTimeout"));
    }
    if policy.gpu_hour_quota.is_some_and(|q| q < 0) {
        errors.push(UserError::invalid(&at("gpuHourQuota"), "must not be negative"));
    }
    validate::range(&at("extensionGrace"), policy.extension_grace_secs, 0, MAX_EXTENSION_GRACE_SECS, errors);
    if let Some(percent) = policy.underuse_below_percent {
        validate::range(&at("underuseBelowPercent"), percent.into(), 1, 100, errors);
    }
    validate::range(&at("underusePeriod"), policy.underuse_period_secs, 300, 7 * 24 * 3600, errors);
    if policy.quota_period_secs < 3600 {
        errors.push(UserError::invalid(&at("quotaPeriod"), "must be at least one hour"));
    }
    for (i, shape) in policy.allowed_shapes.iter().enumerate() {
        validate::text(&at(&format!("allowedShapes.{i}")), shape, 128, errors);
    }
}

pub(super) async fn ensure_slice_name_free(db: &impl ConnectionTrait, project_id: i64, name: &str, except: Option<i64>) -> Result<()> {
    let mut query = slice::Entity::find().filter(slice::Column::ProjectId.eq(project_id)).filter(slice::Column::Name.eq(name));
    if let Some(id) = except {
        query = query.filter(slice::Column::Id.ne(id));
    }
    if query.count(db).await? > 0 {
        return Err(Error::conflict("name", format!("a slice named `{name}` already exists")));
    }
    Ok(())
}

pub(super) async fn ensure_clusters_exist(db: &impl ConnectionTrait, field: &str, ids: &BTreeSet<i64>) -> Result<()> {
    let found = cluster::Entity::find().filter(cluster::Column::Id.is_in(ids.iter().copied())).count(db).await?;
    if found as usize != ids.len() {
        return Err(Error::invalid(field, "names a cluster that does not exist"));
    }
    Ok(())
}

/// Namespaces the cluster itself uses: a slice handed one could run pods beside the control
/// plane or read what the cluster keeps there.
/// The namespace the gateway runs in: its own pod's (the in-cluster service account's), else
/// `EGS_NAMESPACE`, else `egs`, where the deploy manifests put it.
fn gateway_namespace() -> &'static str {
    static FOUND: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    FOUND.get_or_init(|| {
        std::fs::read_to_string("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
            .ok()
            .or_else(|| std::env::var("EGS_NAMESPACE").ok())
            .map(|ns| ns.trim().to_owned())
            .filter(|ns| !ns.is_empty())
            .unwrap_or_else(|| "egs".to_owned())
    })
}

/// Why namespace `name` can never be a slice's, if it cannot: the cluster's own (`default`,
/// `kube-*`) and the gateway's (its Secrets, its service account's token).
pub fn reserved_namespace(name: &str) -> Option<&'static str> {
    if name == "default" || name.starts_with("kube-") {
        Some("is reserved for the cluster itself (`default` and `kube-*`)")
    } else if name == "egs" || name == gateway_namespace() {
        Some("is the EGS gateway's own namespace")
    } else {
        None
    }
}

pub(super) fn refuse_reserved(field: &str, name: &str, errors: &mut Vec<UserError>) {
    if let Some(why) = reserved_namespace(name) {
        errors.push(UserError::invalid(field, format!("`{name}` {why}; choose another namespace")));
    }
}

async fn ensure_namespace_free(db: &impl ConnectionTrait, field: &str, ns: &NamespaceSpec) -> Result<()> {
    let taken = slice_namespace::Entity::find()
        .filter(slice_namespace::Column::ClusterId.eq(ns.cluster_id))
        .filter(slice_namespace::Column::Name.eq(ns.name.as_str()))
        .count(db)
        .await?;
    if taken > 0 {
        return Err(Error::conflict(field, format!("namespace `{}` already belongs to a slice on that cluster", ns.name)));
    }
    Ok(())
}

async fn insert_namespace(db: &impl ConnectionTrait, slice_id: i64, ns: &NamespaceSpec) -> Result<slice_namespace::Model> {
    // A slice may use every cluster it has a namespace on.
    let linked = slice_cluster::Entity::find_by_id((slice_id, ns.cluster_id)).one(db).await?;
    if linked.is_none() {
        slice_cluster::ActiveModel { slice_id: Set(slice_id), cluster_id: Set(ns.cluster_id) }.insert(db).await?;
        // The scheduler reads slices changed since its last look: this one may use a new cluster.
        slice::Entity::update_many()
            .col_expr(slice::Column::UpdatedAt, sea_orm::sea_query::Expr::value(Utc::now()))
            .filter(slice::Column::Id.eq(slice_id))
            .exec(db)
            .await?;
    }
    Ok(slice_namespace::ActiveModel {
        slice_id: Set(slice_id),
        cluster_id: Set(ns.cluster_id),
        name: Set(ns.name.clone()),
        created_at: Set(Utc::now()),
        ..Default::default()
    }
    .insert(db)
    .await?)
}

pub async fn create_slice(db: &DatabaseConnection, caller: &Caller, input: CreateSlice) -> Result<slice::Model> {
    caller.require_admin()?;
    let mut errors = Vec::new();
    validate::dns_label("name", &input.name, 63, &mut errors);
    if let Some(description) = &input.description {
        validate::text("description", description, 2000, &mut errors);
    }
    for (i, ns) in input.namespaces.iter().enumerate() {
        validate::dns_label(&format!("namespaces.{i}.name"), &ns.name, 63, &mut errors);
        refuse_reserved(&format!("namespaces.{i}.name"), &ns.name, &mut errors);
    }
    check_policy(&input.policy, &mut errors);
    validate::finish(errors)?;

    let txn = db.begin().await?;
    let project_id = default_project_id(&txn).await?;
    ensure_slice_name_free(&txn, project_id, &input.name, None).await?;
    let mut clusters: BTreeSet<i64> = input.cluster_ids.iter().copied().collect();
    clusters.extend(input.namespaces.iter().map(|ns| ns.cluster_id));
    ensure_clusters_exist(&txn, "clusterIds", &clusters).await?;
    let user_ids: BTreeSet<i64> = input.members.iter().map(|m| m.user_id).collect();
    if user::Entity::find().filter(user::Column::Id.is_in(user_ids.iter().copied())).count(&txn).await? as usize != user_ids.len() {
        return Err(Error::invalid("members", "names a user that does not exist"));
    }

    let now = Utc::now();
    let created = slice::ActiveModel {
        project_id: Set(project_id),
        name: Set(input.name),
        description: Set(input.description),
        policy: Set(input.policy),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&txn)
    .await?;
    for cluster_id in &input.cluster_ids {
        if !input.namespaces.iter().any(|ns| ns.cluster_id == *cluster_id) {
            slice_cluster::ActiveModel { slice_id: Set(created.id), cluster_id: Set(*cluster_id) }.insert(&txn).await?;
        }
    }
    for (i, ns) in input.namespaces.iter().enumerate() {
        ensure_namespace_free(&txn, &format!("namespaces.{i}.name"), ns).await?;
        insert_namespace(&txn, created.id, ns).await?;
    }
    for member in &input.members {
        upsert_member(&txn, created.id, member).await?;
    }
    txn.commit().await?;
    Ok(created)
}

pub async fn update_slice(db: &DatabaseConnection, caller: &Caller, input: UpdateSlice) -> Result<slice::Model> {
    caller.require_admin()?;
    let existing = slice::Entity::find_by_id(input.id).one(db).await?.ok_or(Error::NotFound("slice"))?;
    let mut errors = Vec::new();
    if let Some(name) = &input.name {
        validate::dns_label("name", name, 63, &mut errors);
    }
    if let Some(Some(description)) = &input.description {
        validate::text("description", description, 2000, &mut errors);
    }
    validate::finish(errors)?;

    let txn = db.begin().await?;
    if let Some(name) = &input.name {
        ensure_slice_name_free(&txn, existing.project_id, name, Some(existing.id)).await?;
    }
    if let Some(cluster_ids) = &input.cluster_ids {
        let wanted: BTreeSet<i64> = cluster_ids.iter().copied().collect();
        ensure_clusters_exist(&txn, "clusterIds", &wanted).await?;
        let namespaces = slice_namespace::Entity::find().filter(slice_namespace::Column::SliceId.eq(existing.id)).all(&txn).await?;
        if let Some(orphan) = namespaces.iter().find(|ns| !wanted.contains(&ns.cluster_id)) {
            return Err(Error::conflict(
                "clusterIds",
                format!("namespace `{}` is on a cluster this change removes; remove the namespace first", orphan.name),
            ));
        }
        slice_cluster::Entity::delete_many().filter(slice_cluster::Column::SliceId.eq(existing.id)).exec(&txn).await?;
        for cluster_id in wanted {
            slice_cluster::ActiveModel { slice_id: Set(existing.id), cluster_id: Set(cluster_id) }.insert(&txn).await?;
        }
    }
    let mut model: slice::ActiveModel = existing.into();
    if let Some(name) = input.name {
        model.name = Set(name);
    }
    if let Some(description) = input.description {
        model.description = Set(description);
    }
    model.updated_at = Set(Utc::now());
    let updated = model.update(&txn).await?;
    txn.commit().await?;
    Ok(updated)
}

/// Deletes a slice with its namespaces, members and GPR history. Refused while it has GPRs
/// that are not finished, so no queued or running request disappears.
pub async fn delete_slice(db: &DatabaseConnection, caller: &Caller, news: AccessNews<'_>, id: i64) -> Result<slice::Model> {
    caller.require_admin()?;
    let existing = slice::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("slice"))?;
    let open = gpr::Entity::find()
        .filter(gpr::Column::SliceId.eq(id))
        .filter(gpr::Column::Phase.is_not_in([GprPhase::Completed, GprPhase::Cancelled, GprPhase::Rejected, GprPhase::Failed]))
        .count(db)
        .await?;
    if open > 0 {
        return Err(Error::conflict("id", format!("slice `{}` has {open} unfinished GPR(s); cancel or release them first", existing.name)));
    }
    let members: Vec<i64> =
        slice_member::Entity::find().filter(slice_member::Column::SliceId.eq(id)).all(db).await?.into_iter().map(|m| m.user_id).collect();
    slice::Entity::delete_by_id(id).exec(db).await?;
    reduce_access(db, news, &members).await?;
    Ok(existing)
}

async fn load_slice_for_admin(db: &DatabaseConnection, caller: &Caller, slice_id: i64) -> Result<slice::Model> {
    caller.require_admin()?;
    slice::Entity::find_by_id(slice_id).one(db).await?.ok_or(Error::NotFound("slice"))
}

pub async fn add_slice_namespace(db: &DatabaseConnection, caller: &Caller, slice_id: i64, ns: NamespaceSpec) -> Result<slice::Model> {
    let found = load_slice_for_admin(db, caller, slice_id).await?;
    let mut errors = Vec::new();
    validate::dns_label("name", &ns.name, 63, &mut errors);
    refuse_reserved("name", &ns.name, &mut errors);
    validate::finish(errors)?;
    let txn = db.begin().await?;
    ensure_clusters_exist(&txn, "clusterId", &BTreeSet::from([ns.cluster_id])).await?;
    ensure_namespace_free(&txn, "name", &ns).await?;
    insert_namespace(&txn, slice_id, &ns).await?;
    txn.commit().await?;
    Ok(found)
}

pub async fn remove_slice_namespace(db: &DatabaseConnection, caller: &Caller, slice_id: i64, ns: NamespaceSpec) -> Result<slice::Model> {
    let found = load_slice_for_admin(db, caller, slice_id).await?;
    let deleted = slice_namespace::Entity::delete_many()
        .filter(slice_namespace::Column::SliceId.eq(slice_id))
        .filter(slice_namespace::Column::ClusterId.eq(ns.cluster_id))
        .filter(slice_namespace::Column::Name.eq(ns.name.as_str()))
        .exec(db)
        .await?;
    if deleted.rows_affected == 0 {
        return Err(Error::NotFound("namespace"));
    }
    Ok(found)
}

/// Adds or updates a membership; true when it lowered the member's role.
async fn upsert_member(db: &impl ConnectionTrait, slice_id: i64, member: &MemberSpec) -> Result<bool> {
    match slice_member::Entity::find_by_id((slice_id, member.user_id)).one(db).await? {
        Some(existing) => {
            let lowered = member.role.rank() < existing.role.rank();
            let mut model: slice_member::ActiveModel = existing.into();
            model.role = Set(member.role);
            // An owner's or admin's choice: a single sign-on rule no longer changes it.
            model.granted_by_sso = Set(false);
            model.update(db).await?;
            Ok(lowered)
        }
        None => {
            slice_member::ActiveModel {
                slice_id: Set(slice_id),
                user_id: Set(member.user_id),
                role: Set(member.role),
                created_at: Set(Utc::now()),
                granted_by_sso: Set(false),
            }
            .insert(db)
            .await?;
            Ok(false)
        }
    }
}

/// Refuses to take the owner role from `user_id` when they are the slice's only owner: a
/// slice without an owner could only be managed by admins again.
async fn keep_an_owner(db: &impl ConnectionTrait, slice_id: i64, user_id: i64) -> Result<()> {
    let owners: Vec<i64> = slice_member::Entity::find()
        .filter(slice_member::Column::SliceId.eq(slice_id))
        .filter(slice_member::Column::Role.eq(SliceRole::Owner))
        .all(db)
        .await?
        .into_iter()
        .map(|m| m.user_id)
        .collect();
    if owners == [user_id] {
        return Err(Error::conflict("userId", "this is the slice's last owner; make someone else an owner first"));
    }
    Ok(())
}

/// How an owner names the user to add.
pub enum MemberRef {
    Id(i64),
    NameOrEmail(String),
}

/// Looks a user-to-be-added up without letting an owner enumerate users: by id only someone
/// the caller already shares a slice with (admins: anyone), otherwise by exact name or e-mail,
/// with misses bounded per caller. Every miss reads the same, whether the user is missing or
/// merely unknown to the caller.
pub async fn find_new_member(db: &DatabaseConnection, caller: &Caller, slice_id: i64, who: MemberRef) -> Result<i64> {
    caller.require_person()?;
    caller.require_slice_role(db, slice_id, SliceRole::Owner, "slice").await?;
    let found = match &who {
        MemberRef::Id(id) if caller.is_admin() => user::Entity::find_by_id(*id).one(db).await?.map(|u| u.id),
        MemberRef::Id(id) => {
            // Co-members: users in any slice the caller is a member of.
            let mine = sea_orm::sea_query::Query::select()
                .column(slice_member::Column::SliceId)
                .from(slice_member::Entity)
                .and_where(slice_member::Column::UserId.eq(caller.record.user_id.unwrap_or_default()))
                .to_owned();
            slice_member::Entity::find()
                .filter(slice_member::Column::UserId.eq(*id))
                .filter(slice_member::Column::SliceId.in_subquery(mine))
                .one(db)
                .await?
                .map(|m| m.user_id)
        }
        MemberRef::NameOrEmail(text) => {
            let text = text.trim();
            match user::Entity::find().filter(user::Column::Name.eq(text)).one(db).await? {
                Some(named) => Some(named.id),
                None => match crate::user::service::holders_of_email(db, text).await?.as_slice() {
                    [] => None,
                    [one] => Some(*one),
                    // Never whichever comes first: that could be someone who claimed the address.
                    _ => {
                        return Err(Error::conflict(
                            "user",
                            "more than one user has this e-mail address; name the person by their user name, or ask an admin to correct the addresses",
                        ));
                    }
                },
            }
        }
    };
    match found {
        Some(id) => Ok(id),
        None if caller.is_admin() => Err(Error::invalid("userId", "no such user")),
        None => {
            if !MEMBER_MISSES.allow(caller.record.user_id.unwrap_or_default()) {
                return Err(Error::User(vec![UserError {
                    field: vec!["input".into(), "user".into()],
                    message: format!("too many names that matched no one (at most {MAX_MEMBER_MISSES} an hour); check the spelling with the person"),
                    code: crate::error::ErrorCode::LimitExceeded,
                }]));
            }
            let field = if matches!(who, MemberRef::Id(_)) { "userId" } else { "user" };
            Err(Error::invalid(field, "no user you can add by this; give their exact name or e-mail address"))
        }
    }
}

/// Misses an owner may make looking up members per hour (per replica).
const MAX_MEMBER_MISSES: u32 = 20;

/// Misses per caller in the current hour.
static MEMBER_MISSES: crate::per_hour::HourlyCounter = crate::per_hour::HourlyCounter::new(MAX_MEMBER_MISSES);

/// Adds a member or changes their role (admins and slice owners).
pub async fn add_slice_member(
    db: &DatabaseConnection,
    caller: &Caller,
    news: AccessNews<'_>,
    slice_id: i64,
    member: MemberSpec,
) -> Result<slice::Model> {
    caller.require_person()?;
    caller.require_slice_role(db, slice_id, SliceRole::Owner, "slice").await?;
    let found = slice::Entity::find_by_id(slice_id).one(db).await?.ok_or(Error::NotFound("slice"))?;
    if user::Entity::find_by_id(member.user_id).one(db).await?.is_none() {
        return Err(Error::invalid("userId", "no such user"));
    }
    if member.role != SliceRole::Owner {
        keep_an_owner(db, slice_id, member.user_id).await?;
    }
    if upsert_member(db, slice_id, &member).await? {
        reduce_access(db, news, &[member.user_id]).await?;
    }
    Ok(found)
}

pub async fn remove_slice_member(
    db: &DatabaseConnection,
    caller: &Caller,
    news: AccessNews<'_>,
    slice_id: i64,
    user_id: i64,
) -> Result<slice::Model> {
    caller.require_person()?;
    caller.require_slice_role(db, slice_id, SliceRole::Owner, "slice").await?;
    let found = slice::Entity::find_by_id(slice_id).one(db).await?.ok_or(Error::NotFound("slice"))?;
    keep_an_owner(db, slice_id, user_id).await?;
    let deleted = slice_member::Entity::delete_by_id((slice_id, user_id)).exec(db).await?;
    if deleted.rows_affected == 0 {
        return Err(Error::invalid("userId", "that user is not a member of the slice"));
    }
    reduce_access(db, news, &[user_id]).await?;
    Ok(found)
}

pub async fn set_slice_policy(
    db: &DatabaseConnection,
    caller: &Caller,
    slice_id: i64,
    change: impl FnOnce(&mut SlicePolicy),
) -> Result<slice::Model> {
    let found = load_slice_for_admin(db, caller, slice_id).await?;
    let mut policy = found.policy.clone();
    change(&mut policy);
    let mut errors = Vec::new();
    check_policy(&policy, &mut errors);
    validate::finish(errors)?;
    let mut model: slice::ActiveModel = found.into();
    model.policy = Set(policy);
    model.updated_at = Set(Utc::now());
    Ok(model.update(db).await?)
}
