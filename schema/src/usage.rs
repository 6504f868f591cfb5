//! Usage over time as the API shows it (`usage`, `refreshUsage`). The reports, their CSV and
//! the jobs that keep them are `egs_domain::usage`.

use crate::ids::{self, Kind};
use crate::{app, payload, session};
use async_graphql::{Context, ID, Object};
use chrono::{DateTime, Utc};
use egs_domain::error::Result;
use egs_domain::usage::{self, Scope, UsageDimension, UsageRow, UtilisationDimension, UtilisationRow, WaitDimension, WaitRow, refresh_now, scope};

/// A usage report over a range of days, for admins or a slice's owners.
pub struct UsageReport {
    scope: Scope,
}

#[Object]
impl UsageReport {
    /// The first day, YYYY-MM-DD.
    async fn from(&self) -> String {
        self.scope.from.to_string()
    }
    /// The last day, YYYY-MM-DD (included).
    async fn to(&self) -> String {
        self.scope.to.to_string()
    }
    async fn slice_id(&self) -> Option<ID> {
        self.scope.slice.map(|s| ids::encode(Kind::Slice, s))
    }
    /// When the rollups last ran (every minute; today's figures grow until the day ends).
    async fn refreshed_at(&self, ctx: &Context<'_>) -> Result<Option<DateTime<Utc>>> {
        let (_, db) = session(ctx)?;
        usage::refreshed_at(db).await
    }
    /// GPU-hours reserved, used and waited for, grouped (no dimension: the totals).
    async fn usage(
        &self,
        ctx: &Context<'_>,
        #[graphql(default_with = "vec![UsageDimension::Day]")] group_by: Vec<UsageDimension>,
    ) -> Result<Vec<UsageRow>> {
        let (_, db) = session(ctx)?;
        usage::usage(db, self.scope, &group_by).await
    }
    /// How long GPRs waited for their window, by the day it began.
    async fn waits(
        &self,
        ctx: &Context<'_>,
        #[graphql(default_with = "vec![WaitDimension::GpuShape, WaitDimension::Priority]")] group_by: Vec<WaitDimension>,
    ) -> Result<Vec<WaitRow>> {
        let (_, db) = session(ctx)?;
        usage::waits(db, self.scope, &group_by).await
    }
    /// Measured utilisation (for a slice: of the GPUs it held).
    async fn utilisation(
        &self,
        ctx: &Context<'_>,
        #[graphql(default_with = "vec![UtilisationDimension::Day, UtilisationDimension::Cluster]")] group_by: Vec<UtilisationDimension>,
    ) -> Result<Vec<UtilisationRow>> {
        let (_, db) = session(ctx)?;
        usage::utilisation(db, self.scope, &group_by).await
    }
    /// `usage` as CSV, for spreadsheets and billing.
    async fn usage_csv(&self, ctx: &Context<'_>, group_by: Vec<UsageDimension>) -> Result<String> {
        let (_, db) = session(ctx)?;
        usage::usage_csv(&usage::usage(db, self.scope, &group_by).await?)
    }
    /// `waits` as CSV.
    async fn waits_csv(&self, ctx: &Context<'_>, group_by: Vec<WaitDimension>) -> Result<String> {
        let (_, db) = session(ctx)?;
        usage::waits_csv(&usage::waits(db, self.scope, &group_by).await?)
    }
    /// `utilisation` as CSV.
    async fn utilisation_csv(&self, ctx: &Context<'_>, group_by: Vec<UtilisationDimension>) -> Result<String> {
        let (_, db) = session(ctx)?;
        usage::utilisation_csv(&usage::utilisation(db, self.scope, &group_by).await?)
    }
}

#[derive(Default)]
pub struct UsageQuery;

#[Object]
impl UsageQuery {
    /// Usage over the days `from` to `to` (YYYY-MM-DD, UTC, both included, at most 366):
    /// across slices for admins, or of one slice (`sliceId`) for its owners.
    async fn usage(&self, ctx: &Context<'_>, from: String, to: String, slice_id: Option<ID>) -> Result<UsageReport> {
        let (caller, db) = session(ctx)?;
        let slice_id = slice_id.map(|id| ids::decode("sliceId", &id, Kind::Slice)).transpose()?;
        Ok(UsageReport { scope: scope(db, caller, &from, &to, slice_id).await? })
    }
}

payload!(
    /// The result of `refreshUsage`.
    RefreshUsagePayload, refreshed_at: DateTime<Utc>
);

#[derive(Default)]
pub struct UsageMutation;

#[Object]
impl UsageMutation {
    /// Rolls usage up now instead of at the next minute (admins).
    async fn refresh_usage(&self, ctx: &Context<'_>) -> async_graphql::Result<RefreshUsagePayload> {
        let result = async {
            let (caller, db) = session(ctx)?;
            refresh_now(db, caller, app(ctx)?.scheduler.clock.now()).await
        }
        .await;
        RefreshUsagePayload::from_result(result)
    }
}
