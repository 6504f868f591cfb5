//! Per-shape temperature and power thresholds (admins set them; the rules read them).

use super::rules::Limits;
use super::service::{POWER_RANGE, TEMPERATURE_RANGE};
use crate::auth::Caller;
use crate::error::{Error, Result, UserError};
use crate::validate;
use chrono::{DateTime, Utc};
use egs_entities::{alert_threshold, node};
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::NotSet, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect, Set};
use std::collections::{BTreeMap, BTreeSet};

/// The thresholds in force for one GPU shape (for nodes that set none of their own).
#[derive(Clone, Debug, PartialEq)]
pub struct ShapeThresholds {
    pub gpu_shape: String,
    pub limits: Limits,
    /// When an admin last set them; `None` for built-in defaults.
    pub updated_at: Option<DateTime<Utc>>,
}

fn shape_view(gpu_shape: String, row: Option<&alert_threshold::Model>) -> ShapeThresholds {
    let set = row.map_or((None, None), |r| (r.temperature_celsius, r.power_watts));
    let limits = Limits::resolve((None, None), set, &gpu_shape);
    ShapeThresholds { gpu_shape, limits, updated_at: row.map(|r| r.updated_at) }
}

/// Thresholds of every shape in the inventory or configured, by shape (admins).
pub async fn list_thresholds(db: &DatabaseConnection, caller: &Caller) -> Result<Vec<ShapeThresholds>> {
    caller.require_admin()?;
    let configured: BTreeMap<String, alert_threshold::Model> =
        alert_threshold::Entity::find().all(db).await?.into_iter().map(|t| (t.gpu_shape.clone(), t)).collect();
    let mut shapes: BTreeSet<String> =
        node::Entity::find().select_only().column(node::Column::GpuShape).distinct().into_tuple::<String>().all(db).await?.into_iter().collect();
    shapes.extend(configured.keys().cloned());
    Ok(shapes
        .into_iter()
        .map(|shape| {
            let row = configured.get(&shape);
            shape_view(shape, row)
        })
        .collect())
}

/// Sets the thresholds of a GPU shape (admins); `None` restores the built-in default. Invalid
/// values change nothing.
pub async fn set_threshold(
    db: &DatabaseConnection,
    caller: &Caller,
    gpu_shape: String,
    temperature_celsius: Option<f64>,
    power_watts: Option<f64>,
) -> Result<ShapeThresholds> {
    caller.require_admin()?;
    let mut errors: Vec<UserError> = Vec::new();
    validate::text("gpuShape", &gpu_shape, 128, &mut errors);
    for (field, value, (min, max), unit) in
        [("temperatureCelsius", temperature_celsius, TEMPERATURE_RANGE, " °C"), ("powerWatts", power_watts, POWER_RANGE, " W")]
    {
        if let Some(v) = value
            && !(v.is_finite() && (min..=max).contains(&v))
        {
            errors.push(UserError::invalid(field, format!("must be between {min}{unit} and {max}{unit}, got {v}")));
        }
    }
    validate::finish(errors)?;
    let gpu_shape = gpu_shape.trim().to_owned();
    if temperature_celsius.is_none() && power_watts.is_none() {
        alert_threshold::Entity::delete_many().filter(alert_threshold::Column::GpuShape.eq(gpu_shape.as_str())).exec(db).await?;
        return Ok(shape_view(gpu_shape, None));
    }
    let row = alert_threshold::ActiveModel {
        id: NotSet,
        gpu_shape: Set(gpu_shape.clone()),
        temperature_celsius: Set(temperature_celsius),
        power_watts: Set(power_watts),
        updated_at: Set(Utc::now()),
    };
    let upsert = OnConflict::column(alert_threshold::Column::GpuShape)
        .update_columns([alert_threshold::Column::TemperatureCelsius, alert_threshold::Column::PowerWatts, alert_threshold::Column::UpdatedAt])
        .to_owned();
    alert_threshold::Entity::insert(row).on_conflict(upsert).exec_without_returning(db).await?;
    let stored = alert_threshold::Entity::find().filter(alert_threshold::Column::GpuShape.eq(gpu_shape.as_str())).one(db).await?;
    let stored = stored.ok_or_else(|| Error::Internal(anyhow::anyhow!("alert thresholds of `{gpu_shape}` vanished after being stored")))?;
    Ok(shape_view(gpu_shape, Some(&stored)))
}
