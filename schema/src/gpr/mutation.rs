//! Changing GPRs: create, edit, cancel, release early, priority, approval.

use super::inputs::{CreateGprInput, EvictGprInput, ExtendGprInput, GprActionInput, GprDecisionInput, SetGprPriorityInput, UpdateGprInput};
use super::service;
use super::types::Gpr;
use crate::ids::{self, Kind};
use crate::{payload, session};
use async_graphql::{Context, Object};

payload!(CreateGprPayload, gpr: Gpr);
payload!(UpdateGprPayload, gpr: Gpr);
payload!(CancelGprPayload, gpr: Gpr);
payload!(EarlyReleaseGprPayload, gpr: Gpr);
payload!(ExtendGprPayload, gpr: Gpr);
payload!(SetGprPriorityPayload, gpr: Gpr);
payload!(ApproveGprPayload, gpr: Gpr);
payload!(RejectGprPayload, gpr: Gpr);
payload!(EvictGprPayload, gpr: Gpr);

#[derive(Default)]
pub struct GprMutation;

#[Object]
impl GprMutation {
    /// Asks for GPU nodes for a slice (slice editors). Lands `QUEUED`, or `PENDING_APPROVAL`
    /// when over the slice policy. With `templateId`, starts from a template published to the
    /// slice: what the input leaves out is the template's.
    async fn create_gpr(&self, ctx: &Context<'_>, input: CreateGprInput) -> async_graphql::Result<CreateGprPayload> {
        let (caller, db) = session(ctx)?;
        CreateGprPayload::after_change(ctx, async {
            let spec = egs_domain::template::service::resolve_ask(db, caller, input.into_ask()?).await?;
            service::create_gpr(db, caller, spec).await.map(Gpr)
        })
        .await
    }

    /// Edits a pending GPR (slice editors), given the version you read.
    async fn update_gpr(&self, ctx: &Context<'_>, input: UpdateGprInput) -> async_graphql::Result<UpdateGprPayload> {
        let (caller, db) = session(ctx)?;
        UpdateGprPayload::after_change(ctx, async {
            let (id, version) = (ids::decode("id", &input.id, Kind::Gpr)?, input.version);
            service::update_gpr(db, caller, id, version, input.into_changes()?).await.map(Gpr)
        })
        .await
    }

    /// Withdraws a pending GPR (slice editors).
    async fn cancel_gpr(&self, ctx: &Context<'_>, input: GprActionInput) -> async_graphql::Result<CancelGprPayload> {
        let (caller, db) = session(ctx)?;
        CancelGprPayload::after_change(ctx, async {
            service::cancel_gpr(db, caller, ids::decode("id", &input.id, Kind::Gpr)?, input.version).await.map(Gpr)
        })
        .await
    }

    /// Gives a provisioned GPR's nodes back before its window ends (slice editors).
    async fn early_release_gpr(&self, ctx: &Context<'_>, input: GprActionInput) -> async_graphql::Result<EarlyReleaseGprPayload> {
        let (caller, db) = session(ctx)?;
        EarlyReleaseGprPayload::after_change(ctx, async {
            service::early_release_gpr(db, caller, ids::decode("id", &input.id, Kind::Gpr)?, input.version).await.map(Gpr)
        })
        .await
    }

    /// Takes a provisioned GPR's nodes back and puts it in the queue again at its priority
    /// (admins); its owner sees `reason` on the GPR and in its events (`EVICTED`, `REQUEUED`).
    async fn evict_gpr(&self, ctx: &Context<'_>, input: EvictGprInput) -> async_graphql::Result<EvictGprPayload> {
        let (caller, db) = session(ctx)?;
        EvictGprPayload::after_change(ctx, async {
            service::evict_gpr(db, caller, ids::decode("id", &input.id, Kind::Gpr)?, &input.reason, input.version).await.map(Gpr)
        })
        .await
    }

    /// Makes a provisioned GPR's window longer (slice editors). Within the slice's extension
    /// grace it applies at once (`EXTENDED`); beyond it, it waits for an admin's decision
    /// (`extensionRequested`, decided with `approveGpr` / `rejectGpr`). Refused, changing
    /// nothing, when a waiting GPR's promised start would move later; `gprExtensionRoom` says
    /// how much fits now.
    async fn extend_gpr(&self, ctx: &Context<'_>, input: ExtendGprInput) -> async_graphql::Result<ExtendGprPayload> {
        let (caller, db) = session(ctx)?;
        let scheduler = crate::app(ctx)?.scheduler.as_ref();
        ExtendGprPayload::after_change(ctx, async {
            let id = ids::decode("id", &input.id, Kind::Gpr)?;
            super::extend::extend_gpr(db, caller, scheduler, id, input.by.secs(), input.version).await.map(Gpr)
        })
        .await
    }

    /// Changes a GPR's priority (admin).
    async fn set_gpr_priority(&self, ctx: &Context<'_>, input: SetGprPriorityInput) -> async_graphql::Result<SetGprPriorityPayload> {
        let (caller, db) = session(ctx)?;
        SetGprPriorityPayload::after_change(ctx, async {
            service::set_gpr_priority(db, caller, ids::decode("id", &input.id, Kind::Gpr)?, input.priority, input.version).await.map(Gpr)
        })
        .await
    }

    /// Approves a GPR held for being over policy (admin); it joins the queue. On a provisioned
    /// GPR, approves its requested extension (refused if a promise made since is in the way).
    async fn approve_gpr(&self, ctx: &Context<'_>, input: GprDecisionInput) -> async_graphql::Result<ApproveGprPayload> {
        let (caller, db) = session(ctx)?;
        let scheduler = crate::app(ctx)?.scheduler.as_ref();
        ApproveGprPayload::after_change(ctx, async {
            let id = ids::decode("id", &input.id, Kind::Gpr)?;
            service::approve_gpr(db, caller, scheduler, id, input.reason, input.version).await.map(Gpr)
        })
        .await
    }

    /// Rejects a GPR held for being over policy (admin); on a provisioned GPR, its requested
    /// extension (the window stays).
    async fn reject_gpr(&self, ctx: &Context<'_>, input: GprDecisionInput) -> async_graphql::Result<RejectGprPayload> {
        let (caller, db) = session(ctx)?;
        let scheduler = crate::app(ctx)?.scheduler.as_ref();
        RejectGprPayload::after_change(ctx, async {
            let id = ids::decode("id", &input.id, Kind::Gpr)?;
            service::reject_gpr(db, caller, scheduler, id, input.reason, input.version).await.map(Gpr)
        })
        .await
    }
}
