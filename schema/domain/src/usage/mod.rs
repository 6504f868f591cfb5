//! Usage over time: GPU-hours reserved, used and waited for per day, slice, requester, shape
//! and cluster; how long GPRs waited by shape and priority; measured utilisation by cluster
//! and holding slice. Admins read everything; a slice's owners read their slice.
//!
//! [`ledger`] cuts a GPR's events into waiting, used and reserved spans per UTC day (pure);
//! [`rollup`] keeps the daily rows while a day can change; [`sampler`] measures utilisation
//! once a minute across replicas; this module reads the reports and writes them as CSV.

pub mod ledger;
pub mod rollup;
pub mod sampler;

use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::ids::{self, GlobalId, Kind};
use chrono::{DateTime, NaiveDate, Utc};
use egs_entities::{SliceRole, cluster, cursor, slice, usage_daily, usage_utilisation_daily, usage_wait_daily, user};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, Set};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The longest range one report covers.
pub const MAX_RANGE_DAYS: i64 = 366;
/// The most rows one table of a report returns.
pub const MAX_ROWS: usize = 10_000;
const REFRESHED_AT: &str = "usage.refreshed_at";

pub async fn cursor_position(db: &DatabaseConnection, name: &str) -> Result<Option<i64>> {
    Ok(cursor::Entity::find_by_id(name).one(db).await?.map(|c| c.position))
}

pub async fn set_cursor(db: &DatabaseConnection, name: &str, position: i64) -> Result<()> {
    let row = cursor::ActiveModel { name: Set(name.to_owned()), position: Set(position) };
    let upsert = OnConflict::column(cursor::Column::Name).update_column(cursor::Column::Position).to_owned();
    cursor::Entity::insert(row).on_conflict(upsert).exec_without_returning(db).await?;
    Ok(())
}

/// Moves a cursor from `from` to `to` unless another replica moved it first.
pub async fn claim_cursor(db: &DatabaseConnection, name: &str, from: i64, to: i64) -> Result<bool> {
    let moved = cursor::Entity::update_many()
        .col_expr(cursor::Column::Position, Expr::value(to))
        .filter(cursor::Column::Name.eq(name))
        .filter(cursor::Column::Position.eq(from))
        .exec(db)
        .await?;
    Ok(moved.rows_affected == 1)
}

/// One round of the usage job: a utilisation sample (its steps timed by `clock`, the lifecycle
/// clock), then the open days rolled up again from the GPRs' events, which are stored with the
/// wall clock's time. Returns when, by the wall clock, it ran.
pub async fn refresh(db: &DatabaseConnection, clock: DateTime<Utc>) -> Result<DateTime<Utc>> {
    let wall = Utc::now();
    sampler::sample(db, clock, wall).await?;
    roll_up(db, wall).await?;
    Ok(wall)
}

/// Rolls the open days up as of `wall` and records when.
async fn roll_up(db: &DatabaseConnection, wall: DateTime<Utc>) -> Result<()> {
    rollup::refresh(db, wall).await?;
    set_cursor(db, REFRESHED_AT, wall.timestamp()).await
}

/// How often the usage job runs.
pub const EVERY: std::time::Duration = std::time::Duration::from_secs(60);

/// The usage job's round on a replica: the sample (claimed, so once a minute across replicas),
/// then the rollup unless another replica rolled up within the last 50 s (the claim moves
/// `REFRESHED_AT`, so N replicas roll up once a minute between them, not N times).
async fn refresh_if_due(db: &DatabaseConnection, clock: DateTime<Utc>) -> Result<()> {
    let wall = Utc::now();
    sampler::sample(db, clock, wall).await?;
    let last = cursor_position(db, REFRESHED_AT).await?;
    let due = match last {
        None => true,
        Some(at) if wall.timestamp() - at >= 50 => claim_cursor(db, REFRESHED_AT, at, wall.timestamp()).await?,
        Some(_) => false,
    };
    if due {
        roll_up(db, wall).await?;
    }
    Ok(())
}

/// Runs the usage job every `every` until `stop` completes. Every replica runs one: the
/// claims make one replica sample and roll up each minute, and a rollup rewrites whole days in
/// one transaction (the unique keys refuse a second writer's copy, should two overlap).
pub async fn run(
    db: DatabaseConnection,
    clock: std::sync::Arc<dyn crate::ports::Clock>,
    every: std::time::Duration,
    stop: impl std::future::Future<Output = ()>,
) {
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => return,
            _ = tokio::time::sleep(every) => {}
        }
        if let Err(error) = refresh_if_due(&db, clock.now()).await {
            tracing::info!(error = ?error, "the usage rollup did not finish; it runs again in a minute");
        }
    }
}

/// What a report covers.
#[derive(Clone, Copy, Debug)]
pub struct Scope {
    pub from: NaiveDate,
    pub to: NaiveDate,
    /// One slice, or (admins only) all.
    pub slice: Option<i64>,
}

fn parse_day(field: &str, value: &str) -> Result<NaiveDate> {
    NaiveDate::parse_from_str(value, "%Y-%m-%d").map_err(|_| Error::invalid(field, "a day as YYYY-MM-DD"))
}

/// Checks the range and who may read it: admins anything, a slice's owners their slice.
pub async fn scope(db: &DatabaseConnection, caller: &Caller, from: &str, to: &str, slice: Option<i64>) -> Result<Scope> {
    caller.require_person()?;
    let (from, to) = (parse_day("from", from)?, parse_day("to", to)?);
    if to < from {
        return Err(Error::invalid("to", "the range ends before it begins"));
    }
    if (to - from).num_days() >= MAX_RANGE_DAYS {
        return Err(Error::invalid("to", format!("a report covers at most {MAX_RANGE_DAYS} days")));
    }
    let slice = match slice {
        Some(id) => {
            caller.require_slice_role(db, id, SliceRole::Owner, "slice").await?;
            Some(id)
        }
        None if caller.is_admin() => None,
        None => return Err(Error::Forbidden("name a slice you own (sliceId); only admins read usage across slices".into())),
    };
    Ok(Scope { from, to, slice })
}

/// What a row is about: the dimensions it was grouped by (the others are null).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    day: Option<NaiveDate>,
    slice: Option<i64>,
    user: Option<i64>,
    shape: Option<String>,
    cluster: Option<i64>,
    priority: Option<i32>,
}

/// The dimensions usage rows may be grouped by.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "graphql", derive(async_graphql::Enum))]
pub enum UsageDimension {
    Day,
    Slice,
    User,
    GpuShape,
    Cluster,
}

/// The dimensions wait rows may be grouped by.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "graphql", derive(async_graphql::Enum))]
pub enum WaitDimension {
    Day,
    Slice,
    GpuShape,
    Priority,
}

/// The dimensions utilisation rows may be grouped by.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "graphql", derive(async_graphql::Enum))]
pub enum UtilisationDimension {
    Day,
    Cluster,
    Slice,
}

/// What a row is about; a dimension the rows were not grouped by is null.
#[derive(Clone, Debug, Default)]
#[cfg_attr(feature = "graphql", derive(async_graphql::SimpleObject))]
pub struct UsageGroup {
    /// The UTC day, as YYYY-MM-DD.
    pub day: Option<String>,
    pub slice_id: Option<GlobalId>,
    pub slice_name: Option<String>,
    /// The requester's name (`-` when none is known).
    pub user: Option<String>,
    /// The GPU shape (`any` for a GPR that named none and was not placed).
    pub gpu_shape: Option<String>,
    pub cluster_id: Option<GlobalId>,
    /// The cluster's name (`-` for a GPR not placed on one yet).
    pub cluster_name: Option<String>,
    pub priority: Option<i32>,
}

/// GPU-hours of a group.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "graphql", derive(async_graphql::SimpleObject))]
pub struct UsageRow {
    pub group: UsageGroup,
    /// The windows as booked (to their planned end, however early they ended).
    pub reserved_gpu_hours: f64,
    /// Held from provisioning until the release began.
    pub used_gpu_hours: f64,
    /// Asked for while waiting in the queue or for approval: demand not yet met.
    pub waiting_gpu_hours: f64,
    /// Windows that began.
    pub gprs_started: i32,
}

/// How long the GPRs of a group that started waited for their window.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "graphql", derive(async_graphql::SimpleObject))]
pub struct WaitRow {
    pub group: UsageGroup,
    pub started: i32,
    pub mean_wait_seconds: f64,
    pub max_wait_seconds: i64,
    /// Percent of starts that waited at most 15 minutes, 1, 4 and 24 hours.
    #[cfg_attr(feature = "graphql", graphql(name = "within15mPercent"))]
    pub within_15m_percent: f64,
    #[cfg_attr(feature = "graphql", graphql(name = "within1hPercent"))]
    pub within_1h_percent: f64,
    #[cfg_attr(feature = "graphql", graphql(name = "within4hPercent"))]
    pub within_4h_percent: f64,
    #[cfg_attr(feature = "graphql", graphql(name = "within24hPercent"))]
    pub within_24h_percent: f64,
}

/// Measured GPU time of a group, sampled every minute from the GPUs' latest samples.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "graphql", derive(async_graphql::SimpleObject))]
pub struct UtilisationRow {
    pub group: UsageGroup,
    /// GPUs in the inventory × hours.
    pub gpu_hours: f64,
    /// Of those, hours whose agent had reported.
    pub reporting_gpu_hours: f64,
    /// Reporting GPU-hours weighted by utilisation.
    pub busy_gpu_hours: f64,
    /// Busy ÷ reporting; null without reports.
    pub utilisation_percent: Option<f64>,
    /// GPU-hours held by a slice's GPR.
    pub held_gpu_hours: f64,
    /// Utilisation of the held GPUs alone; null without reports.
    pub held_utilisation_percent: Option<f64>,
}

fn hours(secs: f64) -> f64 {
    (secs / 3600.0 * 1000.0).round() / 1000.0
}

fn percent(part: f64, whole: f64) -> Option<f64> {
    (whole > 0.0).then(|| (part / whole * 1000.0).round() / 10.0)
}

/// Names for the ids a report shows.
#[derive(Default)]
struct Names {
    slices: HashMap<i64, String>,
    users: HashMap<i64, String>,
    clusters: HashMap<i64, String>,
}

impl Names {
    async fn load<'a>(db: &DatabaseConnection, keys: impl Iterator<Item = &'a Key>) -> Result<Self> {
        let (mut slices, mut users, mut clusters) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
        for k in keys {
            slices.extend(k.slice);
            users.extend(k.user.filter(|&u| u != 0));
            clusters.extend(k.cluster.filter(|&c| c != 0));
        }
        let mut names = Self::default();
        if !slices.is_empty() {
            names.slices = slice::Entity::find().filter(slice::Column::Id.is_in(slices)).all(db).await?.into_iter().map(|s| (s.id, s.name)).collect();
        }
        if !users.is_empty() {
            names.users = user::Entity::find().filter(user::Column::Id.is_in(users)).all(db).await?.into_iter().map(|u| (u.id, u.name)).collect();
        }
        if !clusters.is_empty() {
            names.clusters =
                cluster::Entity::find().filter(cluster::Column::Id.is_in(clusters)).all(db).await?.into_iter().map(|c| (c.id, c.name)).collect();
        }
        Ok(names)
    }

    fn group(&self, k: &Key) -> UsageGroup {
        let named = |map: &HashMap<i64, String>, id: i64| map.get(&id).cloned().unwrap_or_else(|| "-".into());
        UsageGroup {
            day: k.day.map(|d| d.to_string()),
            slice_id: k.slice.map(|s| ids::global(Kind::Slice, s)),
            slice_name: k.slice.map(|s| named(&self.slices, s)),
            user: k.user.map(|u| named(&self.users, u)),
            gpu_shape: k.shape.clone(),
            cluster_id: k.cluster.filter(|&c| c != 0).map(|c| ids::global(Kind::Cluster, c)),
            cluster_name: k.cluster.map(|c| named(&self.clusters, c)),
            priority: k.priority,
        }
    }
}

fn check_size<T>(rows: BTreeMap<Key, T>) -> Result<BTreeMap<Key, T>> {
    if rows.len() > MAX_ROWS {
        return Err(Error::invalid("groupBy", format!("{} rows is more than {MAX_ROWS}: narrow the range or group by less", rows.len())));
    }
    Ok(rows)
}

/// Usage rows of the scope, grouped.
pub async fn usage(db: &DatabaseConnection, scope: Scope, by: &[UsageDimension]) -> Result<Vec<UsageRow>> {
    let mut query = usage_daily::Entity::find().filter(usage_daily::Column::Day.between(scope.from, scope.to));
    if let Some(s) = scope.slice {
        query = query.filter(usage_daily::Column::SliceId.eq(s));
    }
    let has = |d| by.contains(&d);
    let mut sums: BTreeMap<Key, [i64; 4]> = BTreeMap::new();
    for r in query.all(db).await? {
        let key = Key {
            day: has(UsageDimension::Day).then_some(r.day),
            slice: has(UsageDimension::Slice).then_some(r.slice_id),
            user: has(UsageDimension::User).then_some(r.user_id),
            shape: has(UsageDimension::GpuShape).then(|| r.gpu_shape.clone()),
            cluster: has(UsageDimension::Cluster).then_some(r.cluster_id),
            priority: None,
        };
        let s = sums.entry(key).or_default();
        for (sum, add) in s.iter_mut().zip([r.reserved_gpu_secs, r.used_gpu_secs, r.waiting_gpu_secs, i64::from(r.gprs_started)]) {
            *sum += add;
        }
    }
    if by.is_empty() && sums.is_empty() {
        sums.insert(Key::default(), [0; 4]);
    }
    let sums = check_size(sums)?;
    let names = Names::load(db, sums.keys()).await?;
    Ok(sums
        .iter()
        .map(|(k, s)| UsageRow {
            group: names.group(k),
            reserved_gpu_hours: hours(s[0] as f64),
            used_gpu_hours: hours(s[1] as f64),
            waiting_gpu_hours: hours(s[2] as f64),
            gprs_started: i32::try_from(s[3]).unwrap_or(i32::MAX),
        })
        .collect())
}

/// Wait rows of the scope, grouped.
pub async fn waits(db: &DatabaseConnection, scope: Scope, by: &[WaitDimension]) -> Result<Vec<WaitRow>> {
    let mut query = usage_wait_daily::Entity::find().filter(usage_wait_daily::Column::Day.between(scope.from, scope.to));
    if let Some(s) = scope.slice {
        query = query.filter(usage_wait_daily::Column::SliceId.eq(s));
    }
    let has = |d| by.contains(&d);
    // started, total wait, max wait, within 15m / 1h / 4h / 24h
    let mut sums: BTreeMap<Key, [i64; 7]> = BTreeMap::new();
    for r in query.all(db).await? {
        let key = Key {
            day: has(WaitDimension::Day).then_some(r.day),
            slice: has(WaitDimension::Slice).then_some(r.slice_id),
            shape: has(WaitDimension::GpuShape).then(|| r.gpu_shape.clone()),
            priority: has(WaitDimension::Priority).then_some(r.priority),
            ..Key::default()
        };
        let s = sums.entry(key).or_default();
        s[0] += i64::from(r.started);
        s[1] += r.wait_total_secs;
        s[2] = s[2].max(r.wait_max_secs);
        for (sum, add) in s[3..].iter_mut().zip([r.within_15m, r.within_1h, r.within_4h, r.within_24h]) {
            *sum += i64::from(add);
        }
    }
    let sums = check_size(sums)?;
    let names = Names::load(db, sums.keys()).await?;
    Ok(sums
        .iter()
        .map(|(k, s)| {
            let share = |n: i64| percent(n as f64, s[0] as f64).unwrap_or(0.0);
            WaitRow {
                group: names.group(k),
                started: i32::try_from(s[0]).unwrap_or(i32::MAX),
                mean_wait_seconds: if s[0] > 0 { (s[1] as f64 / s[0] as f64).round() } else { 0.0 },
                max_wait_seconds: s[2],
                within_15m_percent: share(s[3]),
                within_1h_percent: share(s[4]),
                within_4h_percent: share(s[5]),
                within_24h_percent: share(s[6]),
            }
        })
        .collect())
}

/// Utilisation rows of the scope, grouped (a slice's owners see only the GPUs it held).
pub async fn utilisation(db: &DatabaseConnection, scope: Scope, by: &[UtilisationDimension]) -> Result<Vec<UtilisationRow>> {
    let mut query = usage_utilisation_daily::Entity::find().filter(usage_utilisation_daily::Column::Day.between(scope.from, scope.to));
    if let Some(s) = scope.slice {
        query = query.filter(usage_utilisation_daily::Column::SliceId.eq(s));
    }
    let has = |d| by.contains(&d);
    // present, reporting, busy, held present, held reporting, held busy
    let mut sums: BTreeMap<Key, [f64; 6]> = BTreeMap::new();
    for r in query.all(db).await? {
        let key = Key {
            day: has(UtilisationDimension::Day).then_some(r.day),
            cluster: has(UtilisationDimension::Cluster).then_some(r.cluster_id),
            slice: has(UtilisationDimension::Slice).then_some(r.slice_id).filter(|&s| s != 0),
            ..Key::default()
        };
        let s = sums.entry(key).or_default();
        let held = if r.slice_id != 0 { 1.0 } else { 0.0 };
        let figures = [r.gpu_secs, r.reporting_gpu_secs, r.busy_gpu_secs];
        for (i, add) in figures.into_iter().enumerate() {
            s[i] += add;
            s[i + 3] += add * held;
        }
    }
    let sums = check_size(sums)?;
    let names = Names::load(db, sums.keys()).await?;
    Ok(sums
        .iter()
        .map(|(k, s)| UtilisationRow {
            group: names.group(k),
            gpu_hours: hours(s[0]),
            reporting_gpu_hours: hours(s[1]),
            busy_gpu_hours: hours(s[2]),
            utilisation_percent: percent(s[2], s[1]),
            held_gpu_hours: hours(s[3]),
            held_utilisation_percent: percent(s[5], s[4]),
        })
        .collect())
}

/// A CSV column of a group: its name and how to read it.
type Column = (&'static str, fn(&UsageGroup) -> Option<String>);

/// A table as CSV: the group's columns that were grouped by, then the figures.
fn to_csv(groups: &[&UsageGroup], figures: &[&str], values: Vec<Vec<String>>) -> Result<String> {
    let mut columns: Vec<Column> = Vec::new();
    let all: [Column; 6] = [
        ("day", |g| g.day.clone()),
        ("slice", |g| g.slice_name.as_deref().map(inert)),
        ("user", |g| g.user.as_deref().map(inert)),
        ("gpu_shape", |g| g.gpu_shape.as_deref().map(inert)),
        ("cluster", |g| g.cluster_name.as_deref().map(inert)),
        ("priority", |g| g.priority.map(|p| p.to_string())),
    ];
    for (name, get) in all {
        if groups.iter().any(|g| get(g).is_some()) {
            columns.push((name, get));
        }
    }
    let mut out = csv::Writer::from_writer(Vec::new());
    let header: Vec<&str> = columns.iter().map(|c| c.0).chain(figures.iter().copied()).collect();
    out.write_record(&header).map_err(anyhow::Error::from)?;
    for (g, v) in groups.iter().zip(values) {
        let record: Vec<String> = columns.iter().map(|c| c.1(g).unwrap_or_default()).chain(v).collect();
        out.write_record(&record).map_err(anyhow::Error::from)?;
    }
    let bytes = out.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(String::from_utf8(bytes).map_err(anyhow::Error::from)?)
}

/// A name as a spreadsheet will not run it: a cell that starts with `=`, `+`, `-`, `@`, a tab
/// or a carriage return is read as a formula (`=HYPERLINK(…)` from a GPU shape an agent
/// reported), so it gets a leading `'`, which spreadsheets show as text. Only names: the
/// figures are numbers we wrote.
fn inert(name: &str) -> String {
    if name.starts_with(['=', '+', '-', '@', '\t', '\r']) { format!("'{name}") } else { name.to_owned() }
}

fn opt(v: Option<f64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// `usage` rows as CSV, for spreadsheets and billing.
pub fn usage_csv(rows: &[UsageRow]) -> Result<String> {
    let values = rows
        .iter()
        .map(|r| vec![r.reserved_gpu_hours.to_string(), r.used_gpu_hours.to_string(), r.waiting_gpu_hours.to_string(), r.gprs_started.to_string()])
        .collect();
    to_csv(&rows.iter().map(|r| &r.group).collect::<Vec<_>>(), &["reserved_gpu_hours", "used_gpu_hours", "waiting_gpu_hours", "gprs_started"], values)
}

/// `waits` rows as CSV.
pub fn waits_csv(rows: &[WaitRow]) -> Result<String> {
    let values = rows
        .iter()
        .map(|r| {
            vec![
                r.started.to_string(),
                r.mean_wait_seconds.to_string(),
                r.max_wait_seconds.to_string(),
                r.within_15m_percent.to_string(),
                r.within_1h_percent.to_string(),
                r.within_4h_percent.to_string(),
                r.within_24h_percent.to_string(),
            ]
        })
        .collect();
    let figures =
        ["started", "mean_wait_seconds", "max_wait_seconds", "within_15m_percent", "within_1h_percent", "within_4h_percent", "within_24h_percent"];
    to_csv(&rows.iter().map(|r| &r.group).collect::<Vec<_>>(), &figures, values)
}

/// `utilisation` rows as CSV.
pub fn utilisation_csv(rows: &[UtilisationRow]) -> Result<String> {
    let values = rows
        .iter()
        .map(|r| {
            vec![
                r.gpu_hours.to_string(),
                r.reporting_gpu_hours.to_string(),
                r.busy_gpu_hours.to_string(),
                opt(r.utilisation_percent),
                r.held_gpu_hours.to_string(),
                opt(r.held_utilisation_percent),
            ]
        })
        .collect();
    let figures = ["gpu_hours", "reporting_gpu_hours", "busy_gpu_hours", "utilisation_percent", "held_gpu_hours", "held_utilisation_percent"];
    to_csv(&rows.iter().map(|r| &r.group).collect::<Vec<_>>(), &figures, values)
}

/// When the rollups last ran (every minute; today's figures grow until the day ends).
pub async fn refreshed_at(db: &DatabaseConnection) -> Result<Option<DateTime<Utc>>> {
    Ok(cursor_position(db, REFRESHED_AT).await?.and_then(|at| DateTime::from_timestamp(at, 0)))
}

/// Rolls usage up now instead of at the next minute (admins); see [`refresh`].
pub async fn refresh_now(db: &DatabaseConnection, caller: &Caller, clock: DateTime<Utc>) -> Result<DateTime<Utc>> {
    caller.require_admin()?;
    refresh(db, clock).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_names_only_the_grouped_columns_and_quotes_what_needs_it() {
        let g = UsageGroup { day: Some("2026-11-20".into()), user: Some("Ann, Lee".into()), ..Default::default() };
        let csv = to_csv(&[&g], &["used_gpu_hours"], vec![vec!["1.5".into()]]).expect("csv");
        assert_eq!(csv, "day,user,used_gpu_hours\n2026-11-20,\"Ann, Lee\",1.5\n");
    }

    #[test]
    fn csv_names_that_a_spreadsheet_would_run_are_written_as_text() {
        let hostile = UsageGroup {
            gpu_shape: Some("=HYPERLINK(\"http://evil\",\"x\")".into()),
            cluster_name: Some("@SUM(1)".into()),
            slice_name: Some("-2+3".into()),
            user: Some("\tplus".into()),
            priority: Some(-5),
            ..Default::default()
        };
        let csv = to_csv(&[&hostile], &["used_gpu_hours"], vec![vec!["-1.5".into()]]).expect("csv");
        let row = csv.lines().nth(1).expect("a row");
        assert_eq!(row, "'-2+3,'\tplus,\"'=HYPERLINK(\"\"http://evil\"\",\"\"x\"\")\",'@SUM(1),-5,-1.5", "{csv}");
    }

    #[test]
    fn percentages_are_null_without_a_whole() {
        assert_eq!(percent(1.0, 0.0), None);
        assert_eq!(percent(1.0, 3.0), Some(33.3));
        assert_eq!(hours(5400.0), 1.5);
    }
}
