//! GPR templates and auto-GPR: admins keep templates (a GPR's shape, size, priority and
//! window) and publish them to slices, whose members start GPRs from them (`createGpr` with
//! `templateId`: the catalogue of profiles); and an admin binds one to a slice, so a GPU pod of
//! the slice that stays Pending makes EGS ask for nodes with a GPR from that template (egs-api's
//! `kubernetes::autogpr`).

use egs_domain::template::service;

use crate::ids::{self, Kind};
use crate::scalars::Duration;
use crate::slice::Slice;
use crate::{payload, session};
use async_graphql::{Context, ID, InputObject, MaybeUndefined, Object};
use chrono::{DateTime, Utc};
use egs_domain::error::Result;
use egs_entities::{gpr_template, slice};

/// An admin-managed GPR shape (a profile): members of the slices it is published to create
/// GPRs from it; auto-GPR does too.
pub struct GprTemplate(pub gpr_template::Model);

#[Object]
impl GprTemplate {
    pub async fn id(&self) -> ID {
        ids::encode(Kind::GprTemplate, self.0.id)
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    async fn description(&self) -> Option<&str> {
        self.0.description.as_deref()
    }
    /// Whole nodes, all from one pool.
    async fn node_count(&self) -> i32 {
        self.0.node_count
    }
    /// GPUs wanted on each node; `null` means every GPU of the node.
    async fn gpus_per_node(&self) -> Option<i32> {
        self.0.gpus_per_node
    }
    /// `null`: the scheduler picks.
    async fn gpu_shape(&self) -> Option<&str> {
        self.0.gpu_shape.as_deref()
    }
    /// `null`: the scheduler picks.
    async fn instance_type(&self) -> Option<&str> {
        self.0.instance_type.as_deref()
    }
    /// 1–300; higher runs first.
    async fn priority(&self) -> i32 {
        self.0.priority
    }
    /// The reserved window of GPRs made from it.
    async fn duration(&self) -> Duration {
        Duration(self.0.duration_secs)
    }
    /// `null`: the slice policy's default.
    async fn idle_timeout(&self) -> Option<Duration> {
        self.0.idle_timeout_secs.map(Duration)
    }
    /// Published to every slice.
    async fn all_slices(&self) -> bool {
        self.0.all_slices
    }
    /// The slices it is published to by name, of those the caller may see.
    async fn published_to(&self, ctx: &Context<'_>) -> Result<Vec<Slice>> {
        let (caller, db) = session(ctx)?;
        Ok(service::published_to(db, caller, self.0.id).await?.into_iter().map(Slice).collect())
    }
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    async fn updated_at(&self) -> DateTime<Utc> {
        self.0.updated_at
    }
}

/// A slice's auto-GPR: a GPR from `template` when one of its GPU pods stays Pending.
pub struct SliceAutoGpr {
    enabled: bool,
    template_id: Option<i64>,
}

impl SliceAutoGpr {
    pub fn of(slice: &slice::Model) -> Self {
        Self { enabled: slice.auto_gpr_enabled, template_id: slice.auto_gpr_template_id }
    }
}

#[Object]
impl SliceAutoGpr {
    /// Whether EGS acts on the slice's Pending GPU pods.
    async fn enabled(&self) -> bool {
        self.enabled && self.template_id.is_some()
    }
    /// The template its GPRs are made from.
    async fn template(&self, ctx: &Context<'_>) -> Result<Option<GprTemplate>> {
        let Some(id) = self.template_id else { return Ok(None) };
        let (_, db) = session(ctx)?;
        Ok(service::auto_gpr_template(db, id).await?.map(GprTemplate))
    }
}

#[derive(Default)]
pub struct TemplateQuery;

#[Object]
impl TemplateQuery {
    /// The GPR templates (profiles) the caller may see, by name: every one for admins, those
    /// published to the caller's slices for others. With `sliceId`, those the slice's GPRs may
    /// start from.
    async fn gpr_templates(&self, ctx: &Context<'_>, slice_id: Option<ID>) -> Result<Vec<GprTemplate>> {
        let (caller, db) = session(ctx)?;
        let slice_id = slice_id.as_ref().map(|id| ids::decode("sliceId", id, Kind::Slice)).transpose()?;
        Ok(service::list_templates(db, caller, slice_id).await?.into_iter().map(GprTemplate).collect())
    }

    async fn gpr_template(&self, ctx: &Context<'_>, id: ID) -> Result<GprTemplate> {
        let (caller, db) = session(ctx)?;
        let id = ids::decode("id", &id, Kind::GprTemplate)?;
        Ok(GprTemplate(service::find_template(db, caller, id).await?))
    }
}

#[derive(InputObject)]
pub struct CreateGprTemplateInput {
    /// A DNS label, unique among templates.
    pub name: String,
    pub description: Option<String>,
    pub node_count: i32,
    /// Omit for every GPU of the node.
    pub gpus_per_node: Option<i32>,
    /// Omit to let the scheduler pick.
    pub gpu_shape: Option<String>,
    /// Omit to let the scheduler pick.
    pub instance_type: Option<String>,
    /// 1–300, higher runs first; default 101.
    #[graphql(default = 101)]
    pub priority: i32,
    /// The reserved window, e.g. `6h` or `PT6H`.
    pub duration: Duration,
    /// Omit for the slice policy's default.
    pub idle_timeout: Option<Duration>,
}

/// Omitted fields keep their value; `null` clears an optional one.
#[derive(InputObject)]
pub struct UpdateGprTemplateInput {
    pub id: ID,
    pub name: Option<String>,
    pub description: MaybeUndefined<String>,
    pub node_count: Option<i32>,
    pub gpus_per_node: MaybeUndefined<i32>,
    pub gpu_shape: MaybeUndefined<String>,
    pub instance_type: MaybeUndefined<String>,
    pub priority: Option<i32>,
    pub duration: Option<Duration>,
    pub idle_timeout: MaybeUndefined<Duration>,
}

#[derive(InputObject)]
pub struct PublishGprTemplateInput {
    pub id: ID,
    /// The slices whose members may start GPRs from it (replaces the list it had).
    #[graphql(default)]
    pub slice_ids: Vec<ID>,
    /// Every slice, present and future.
    #[graphql(default)]
    pub all_slices: bool,
}

#[derive(InputObject)]
pub struct DeleteGprTemplateInput {
    pub id: ID,
}

#[derive(InputObject)]
pub struct SetSliceAutoGprInput {
    pub slice_id: ID,
    /// `null` clears it (and needs `enabled: false`).
    pub template_id: Option<ID>,
    pub enabled: bool,
}

payload!(CreateGprTemplatePayload, template: GprTemplate);
payload!(UpdateGprTemplatePayload, template: GprTemplate);
payload!(PublishGprTemplatePayload, template: GprTemplate);
payload!(
    /// The deleted template, as it was.
    DeleteGprTemplatePayload,
    template: GprTemplate
);
payload!(SetSliceAutoGprPayload, slice: Slice);

/// `Some(None)` for `null`, `Some(Some(v))` for a value, `None` when left out.
fn change<T, U>(value: MaybeUndefined<T>, map: impl FnOnce(T) -> U) -> Option<Option<U>> {
    match value {
        MaybeUndefined::Undefined => None,
        MaybeUndefined::Null => Some(None),
        MaybeUndefined::Value(v) => Some(Some(map(v))),
    }
}

#[derive(Default)]
pub struct TemplateMutation;

#[Object]
impl TemplateMutation {
    /// Creates a GPR template (admin).
    async fn create_gpr_template(&self, ctx: &Context<'_>, input: CreateGprTemplateInput) -> async_graphql::Result<CreateGprTemplatePayload> {
        let (caller, db) = session(ctx)?;
        let spec = service::TemplateSpec {
            name: input.name,
            description: input.description,
            node_count: input.node_count,
            gpus_per_node: input.gpus_per_node,
            gpu_shape: input.gpu_shape,
            instance_type: input.instance_type,
            priority: input.priority,
            duration_secs: input.duration.secs(),
            idle_timeout_secs: input.idle_timeout.map(Duration::secs),
        };
        CreateGprTemplatePayload::from_result(service::create_template(db, caller, spec).await.map(GprTemplate))
    }

    /// Changes a GPR template (admin); GPRs already made from it keep what they asked for.
    async fn update_gpr_template(&self, ctx: &Context<'_>, input: UpdateGprTemplateInput) -> async_graphql::Result<UpdateGprTemplatePayload> {
        let (caller, db) = session(ctx)?;
        let result = async {
            let id = ids::decode("id", &input.id, Kind::GprTemplate)?;
            let changes = service::TemplateChanges {
                name: input.name,
                description: change(input.description, |v| v),
                node_count: input.node_count,
                gpus_per_node: change(input.gpus_per_node, |v| v),
                gpu_shape: change(input.gpu_shape, |v| v),
                instance_type: change(input.instance_type, |v| v),
                priority: input.priority,
                duration_secs: input.duration.map(Duration::secs),
                idle_timeout_secs: change(input.idle_timeout, Duration::secs),
            };
            service::update_template(db, caller, id, changes).await.map(GprTemplate)
        };
        UpdateGprTemplatePayload::from_result(result.await)
    }

    /// Sets the slices a template is published to (admin): their members see it in
    /// `gprTemplates` and create GPRs from it.
    async fn publish_gpr_template(&self, ctx: &Context<'_>, input: PublishGprTemplateInput) -> async_graphql::Result<PublishGprTemplatePayload> {
        let (caller, db) = session(ctx)?;
        let result = async {
            let id = ids::decode("id", &input.id, Kind::GprTemplate)?;
            let slice_ids = input
                .slice_ids
                .iter()
                .take(service::MAX_PUBLISHED_SLICES + 1)
                .enumerate()
                .map(|(i, s)| ids::decode(&format!("sliceIds.{i}"), s, Kind::Slice))
                .collect::<Result<Vec<i64>>>()?;
            service::publish_template(db, caller, id, slice_ids, input.all_slices).await.map(GprTemplate)
        };
        PublishGprTemplatePayload::from_result(result.await)
    }

    /// Deletes a GPR template (admin); refused while a slice's auto-GPR uses it.
    async fn delete_gpr_template(&self, ctx: &Context<'_>, input: DeleteGprTemplateInput) -> async_graphql::Result<DeleteGprTemplatePayload> {
        let (caller, db) = session(ctx)?;
        let result = async { service::delete_template(db, caller, ids::decode("id", &input.id, Kind::GprTemplate)?).await.map(GprTemplate) };
        DeleteGprTemplatePayload::from_result(result.await)
    }

    /// Sets the template auto-GPR uses for the slice's Pending GPU pods and turns it on or off
    /// (admin).
    async fn set_slice_auto_gpr(&self, ctx: &Context<'_>, input: SetSliceAutoGprInput) -> async_graphql::Result<SetSliceAutoGprPayload> {
        let (caller, db) = session(ctx)?;
        let result = async {
            let slice_id = ids::decode("sliceId", &input.slice_id, Kind::Slice)?;
            let template_id = input.template_id.as_ref().map(|id| ids::decode("templateId", id, Kind::GprTemplate)).transpose()?;
            service::set_slice_auto_gpr(db, caller, slice_id, template_id, input.enabled).await.map(Slice)
        };
        SetSliceAutoGprPayload::from_result(result.await)
    }
}
