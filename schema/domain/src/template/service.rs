//! GPR templates (admin-managed shapes users and auto-GPR start from), where they are
//! published, and each slice's auto-GPR binding.
//!
//! A template is a profile in the catalogue of the slices it is published to (or of every
//! slice): their members list it and create GPRs from it. Admins see and use every template;
//! anyone else sees only those published to a slice they belong to (others read as missing).

use crate::auth::Caller;
use crate::auth::Visible;
use crate::error::{Error, Result, UserError};
use crate::gpr::checks::{ShapeFields, check_shape_fields};
use crate::gpr::spec::{GprAsk, GprSpec};
use crate::validate;
use chrono::Utc;
use egs_entities::{SliceRole, gpr_template, gpr_template_slice, slice};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Condition, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, Set, TransactionTrait,
};
use std::collections::BTreeSet;

/// What a template asks for; a GPR made from it asks for the same.
#[derive(Clone, Debug)]
pub struct TemplateSpec {
    pub name: String,
    pub description: Option<String>,
    pub node_count: i32,
    pub gpus_per_node: Option<i32>,
    pub gpu_shape: Option<String>,
    pub instance_type: Option<String>,
    pub priority: i32,
    pub duration_secs: i64,
    pub idle_timeout_secs: Option<i64>,
}

/// Changes to a template; `None` keeps a field, `Some(None)` clears an optional one.
#[derive(Clone, Debug, Default)]
pub struct TemplateChanges {
    pub name: Option<String>,
    pub description: Option<Option<String>>,
    pub node_count: Option<i32>,
    pub gpus_per_node: Option<Option<i32>>,
    pub gpu_shape: Option<Option<String>>,
    pub instance_type: Option<Option<String>>,
    pub priority: Option<i32>,
    pub duration_secs: Option<i64>,
    pub idle_timeout_secs: Option<Option<i64>>,
}

impl TemplateSpec {
    fn of(model: &gpr_template::Model) -> Self {
        Self {
            name: model.name.clone(),
            description: model.description.clone(),
            node_count: model.node_count,
            gpus_per_node: model.gpus_per_node,
            gpu_shape: model.gpu_shape.clone(),
            instance_type: model.instance_type.clone(),
            priority: model.priority,
            duration_secs: model.duration_secs,
            idle_timeout_secs: model.idle_timeout_secs,
        }
    }

    fn apply(&mut self, changes: TemplateChanges) {
        fn set<T>(target: &mut T, value: Option<T>) {
            if let Some(value) = value {
                *target = value;
            }
        }
        set(&mut self.name, changes.name);
        set(&mut self.description, changes.description);
        set(&mut self.node_count, changes.node_count);
        set(&mut self.gpus_per_node, changes.gpus_per_node);
        set(&mut self.gpu_shape, changes.gpu_shape);
        set(&mut self.instance_type, changes.instance_type);
        set(&mut self.priority, changes.priority);
        set(&mut self.duration_secs, changes.duration_secs);
        set(&mut self.idle_timeout_secs, changes.idle_timeout_secs);
    }
}

/// The checks `createGpr` makes on the same fields, so a GPR made from a template is valid.
pub fn check_template(spec: &TemplateSpec, errors: &mut Vec<UserError>) {
    validate::dns_label("name", &spec.name, 63, errors);
    if let Some(description) = &spec.description {
        validate::text("description", description, 2000, errors);
    }
    let shape = ShapeFields {
        node_count: spec.node_count,
        gpus_per_node: spec.gpus_per_node,
        gpu_shape: spec.gpu_shape.as_deref(),
        instance_type: spec.instance_type.as_deref(),
        priority: spec.priority,
        duration_secs: spec.duration_secs,
        idle_timeout_secs: spec.idle_timeout_secs,
    };
    check_shape_fields(&shape, errors);
}

/// Most slices one template may be published to by name (more: publish it to all).
pub const MAX_PUBLISHED_SLICES: usize = 1000;

/// The templates the caller may see, by name; with `slice_id`, those GPRs of that slice may
/// start from (the caller must see the slice).
pub async fn list_templates(db: &DatabaseConnection, caller: &Caller, slice_id: Option<i64>) -> Result<Vec<gpr_template::Model>> {
    caller.require_person()?;
    let slices = match slice_id {
        Some(id) => {
            caller.require_slice_role(db, id, SliceRole::Viewer, "slice").await?;
            Visible::Only(vec![id])
        }
        None => caller.visible_slices(db).await?,
    };
    let mut query = gpr_template::Entity::find().order_by_asc(gpr_template::Column::Name);
    if let Visible::Only(ids) = slices {
        query = query.filter(published_to_any(db, &ids).await?);
    }
    Ok(query.all(db).await?)
}

/// Templates published to every slice or to one of `slices`.
async fn published_to_any(db: &DatabaseConnection, slices: &[i64]) -> Result<Condition> {
    let linked: Vec<i64> = if slices.is_empty() {
        Vec::new()
    } else {
        gpr_template_slice::Entity::find()
            .filter(gpr_template_slice::Column::SliceId.is_in(slices.iter().copied()))
            .all(db)
            .await?
            .into_iter()
            .map(|l| l.template_id)
            .collect()
    };
    Ok(Condition::any().add(gpr_template::Column::AllSlices.eq(true)).add(gpr_template::Column::Id.is_in(linked)))
}

/// A template the caller may see.
pub async fn find_template(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<gpr_template::Model> {
    caller.require_person()?;
    let mut query = gpr_template::Entity::find_by_id(id);
    if let Visible::Only(ids) = caller.visible_slices(db).await? {
        query = query.filter(published_to_any(db, &ids).await?);
    }
    query.one(db).await?.ok_or(Error::NotFound("GPR template"))
}

/// The slices a template is published to by name.
pub async fn published_slices(db: &DatabaseConnection, id: i64) -> Result<Vec<i64>> {
    Ok(gpr_template_slice::Entity::find()
        .filter(gpr_template_slice::Column::TemplateId.eq(id))
        .all(db)
        .await?
        .into_iter()
        .map(|l| l.slice_id)
        .collect())
}

/// The slices template `id` is published to by name, of those `caller` may see.
pub async fn published_to(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<Vec<slice::Model>> {
    let mut ids = published_slices(db, id).await?;
    if let crate::auth::Visible::Only(visible) = caller.visible_slices(db).await? {
        ids.retain(|id| visible.contains(id));
    }
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let mut slices = slice::Entity::find().filter(slice::Column::Id.is_in(ids)).all(db).await?;
    slices.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(slices)
}

/// The template a slice's auto-GPR is made from (its slice's readers may see it).
pub async fn auto_gpr_template(db: &DatabaseConnection, id: i64) -> Result<Option<gpr_template::Model>> {
    Ok(gpr_template::Entity::find_by_id(id).one(db).await?)
}

/// The GPR `ask` asks for, its template (if it names one) filling in what it leaves out. The
/// template must be published to the GPR's slice; one the caller may not see reads as missing.
pub async fn resolve_ask(db: &DatabaseConnection, caller: &Caller, ask: GprAsk) -> Result<GprSpec> {
    let Some(id) = ask.template_id else { return ask.resolve(None) };
    let missing = || Error::invalid("templateId", "no such template is published to this slice");
    let template = match find_template(db, caller, id).await {
        Ok(template) => template,
        Err(Error::NotFound(_)) => return Err(missing()),
        Err(other) => return Err(other),
    };
    if !template.all_slices && !published_slices(db, id).await?.contains(&ask.rest.slice_id) {
        return Err(missing());
    }
    ask.resolve(Some(&template))
}

/// Publishes a template to exactly `slice_ids`, or to every slice (admin); replaces what it
/// was published to before. GPRs already made from it are not affected.
pub async fn publish_template(
    db: &DatabaseConnection,
    caller: &Caller,
    id: i64,
    slice_ids: Vec<i64>,
    all_slices: bool,
) -> Result<gpr_template::Model> {
    caller.require_admin()?;
    let existing = gpr_template::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("GPR template"))?;
    let wanted: BTreeSet<i64> = slice_ids.iter().copied().collect();
    if slice_ids.len() > MAX_PUBLISHED_SLICES {
        return Err(Error::invalid("sliceIds", format!("at most {MAX_PUBLISHED_SLICES} slices; publish it to all slices instead")));
    }
    if wanted.len() != slice_ids.len() {
        return Err(Error::invalid("sliceIds", "a slice appears twice"));
    }
    if !wanted.is_empty() && slice::Entity::find().filter(slice::Column::Id.is_in(wanted.iter().copied())).count(db).await? as usize != wanted.len() {
        return Err(Error::invalid("sliceIds", "names a slice that does not exist"));
    }
    let txn = db.begin().await?;
    gpr_template_slice::Entity::delete_many().filter(gpr_template_slice::Column::TemplateId.eq(id)).exec(&txn).await?;
    if !wanted.is_empty() {
        let links = wanted.iter().map(|&slice_id| gpr_template_slice::ActiveModel { template_id: Set(id), slice_id: Set(slice_id) });
        gpr_template_slice::Entity::insert_many(links).exec_without_returning(&txn).await?;
    }
    let mut model: gpr_template::ActiveModel = existing.into();
    model.all_slices = Set(all_slices);
    model.updated_at = Set(Utc::now());
    let updated = model.update(&txn).await?;
    txn.commit().await?;
    Ok(updated)
}

async fn ensure_name_free(db: &DatabaseConnection, name: &str, except: Option<i64>) -> Result<()> {
    let mut query = gpr_template::Entity::find().filter(gpr_template::Column::Name.eq(name));
    if let Some(id) = except {
        query = query.filter(gpr_template::Column::Id.ne(id));
    }
    if query.count(db).await? > 0 {
        return Err(Error::conflict("name", format!("a GPR template named `{name}` already exists")));
    }
    Ok(())
}

pub async fn create_template(db: &DatabaseConnection, caller: &Caller, spec: TemplateSpec) -> Result<gpr_template::Model> {
    caller.require_admin()?;
    let mut errors = Vec::new();
    check_template(&spec, &mut errors);
    validate::finish(errors)?;
    ensure_name_free(db, &spec.name, None).await?;
    let now = Utc::now();
    Ok(gpr_template::ActiveModel {
        name: Set(spec.name),
        description: Set(spec.description),
        node_count: Set(spec.node_count),
        gpus_per_node: Set(spec.gpus_per_node),
        gpu_shape: Set(spec.gpu_shape),
        instance_type: Set(spec.instance_type),
        priority: Set(spec.priority),
        duration_secs: Set(spec.duration_secs),
        idle_timeout_secs: Set(spec.idle_timeout_secs),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await?)
}

pub async fn update_template(db: &DatabaseConnection, caller: &Caller, id: i64, changes: TemplateChanges) -> Result<gpr_template::Model> {
    caller.require_admin()?;
    let existing = gpr_template::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("GPR template"))?;
    let mut spec = TemplateSpec::of(&existing);
    spec.apply(changes);
    let mut errors = Vec::new();
    check_template(&spec, &mut errors);
    validate::finish(errors)?;
    if spec.name != existing.name {
        ensure_name_free(db, &spec.name, Some(id)).await?;
    }
    let mut model: gpr_template::ActiveModel = existing.into();
    model.name = Set(spec.name);
    model.description = Set(spec.description);
    model.node_count = Set(spec.node_count);
    model.gpus_per_node = Set(spec.gpus_per_node);
    model.gpu_shape = Set(spec.gpu_shape);
    model.instance_type = Set(spec.instance_type);
    model.priority = Set(spec.priority);
    model.duration_secs = Set(spec.duration_secs);
    model.idle_timeout_secs = Set(spec.idle_timeout_secs);
    model.updated_at = Set(Utc::now());
    Ok(model.update(db).await?)
}

/// Deletes a template; refused while a slice's auto-GPR uses it.
pub async fn delete_template(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<gpr_template::Model> {
    caller.require_admin()?;
    let existing = gpr_template::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("GPR template"))?;
    let users: Vec<String> = slice::Entity::find()
        .filter(slice::Column::AutoGprTemplateId.eq(id))
        .order_by_asc(slice::Column::Name)
        .all(db)
        .await?
        .into_iter()
        .map(|s| format!("`{}`", s.name))
        .collect();
    if !users.is_empty() {
        return Err(Error::conflict("id", format!("auto-GPR of slice(s) {} uses this template; change their auto-GPR first", users.join(", "))));
    }
    // The links go too (the foreign key says so; written out for databases that do not enforce it).
    gpr_template_slice::Entity::delete_many().filter(gpr_template_slice::Column::TemplateId.eq(id)).exec(db).await?;
    gpr_template::Entity::delete_by_id(id).exec(db).await?;
    Ok(existing)
}

/// Sets which template auto-GPR uses for a slice's Pending GPU pods, and whether it acts
/// (admin). Enabling needs a template.
pub async fn set_slice_auto_gpr(
    db: &DatabaseConnection,
    caller: &Caller,
    slice_id: i64,
    template_id: Option<i64>,
    enabled: bool,
) -> Result<slice::Model> {
    caller.require_admin()?;
    let found = slice::Entity::find_by_id(slice_id).one(db).await?.ok_or(Error::NotFound("slice"))?;
    if let Some(id) = template_id
        && gpr_template::Entity::find_by_id(id).one(db).await?.is_none()
    {
        return Err(Error::invalid("templateId", "no such GPR template"));
    }
    if enabled && template_id.is_none() {
        return Err(Error::invalid("enabled", "auto-GPR needs a template: give templateId"));
    }
    let mut model: slice::ActiveModel = found.into();
    model.auto_gpr_template_id = Set(template_id);
    model.auto_gpr_enabled = Set(enabled);
    model.updated_at = Set(Utc::now());
    Ok(model.update(db).await?)
}
