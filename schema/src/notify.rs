//! Notification channels as the API shows them (`notificationChannels`,
//! `createNotificationChannel`, `testNotificationChannel`, …) and their deliveries. The rules
//! (who may keep which channel, what it may name, the notifier every replica runs) are
//! `egs_domain::notify`.

use crate::gpr::types::Gpr;
use crate::ids::{self, Kind};
use crate::slice::Slice;
use crate::{app, loaded, loaders, payload, session};
use async_graphql::{Context, ID, InputObject, MaybeUndefined, Object, SimpleObject};
use chrono::{DateTime, Utc};
use egs_domain::error::{Result, UserError};
use egs_domain::notify::{milestones, outbox, service};
use egs_domain::outbound::{self, Outcome};
use egs_entities::{DeliveryState, Milestone, NotificationKind, notification_channel as channel, notification_delivery as delivery};

/// Where milestones of a user's GPRs, or of a slice's, are sent.
pub struct NotificationChannel(pub channel::Model);

#[Object]
impl NotificationChannel {
    async fn id(&self) -> ID {
        ids::encode(Kind::NotificationChannel, self.0.id)
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    async fn kind(&self) -> NotificationKind {
        self.0.kind
    }
    /// The slice whose GPRs it hears of; `null` for a user's own channel (their GPRs).
    async fn slice(&self, ctx: &Context<'_>) -> Result<Option<Slice>> {
        let Some(id) = self.0.slice_id else { return Ok(None) };
        Ok(loaded(loaders(ctx)?.slice().load_one(id).await)?.map(Slice))
    }
    /// Where it sends: the address of an e-mail channel; the scheme and host of a URL (its
    /// path may be a secret, so it is never shown again).
    async fn target(&self) -> String {
        match self.0.kind {
            NotificationKind::Email => self.0.target.clone(),
            _ => outbound::parse_url(&self.0.target).map(|u| outbound::shown(&u)).unwrap_or_default(),
        }
    }
    async fn milestones(&self) -> Vec<Milestone> {
        milestones::decode(&self.0.milestones)
    }
    /// For `ESTIMATE_MOVED`: moves of at least this many minutes (30 when `null`).
    async fn estimate_moved_minutes(&self) -> Option<i32> {
        self.0.estimate_moved_minutes
    }
    async fn enabled(&self) -> bool {
        self.0.enabled
    }
    /// Whether its bodies carry `X-EGS-Signature` (JSON webhooks).
    async fn signed(&self) -> bool {
        self.0.signing_secret.is_some()
    }
    async fn last_delivered_at(&self) -> Option<DateTime<Utc>> {
        self.0.last_delivered_at
    }
    async fn last_failed_at(&self) -> Option<DateTime<Utc>> {
        self.0.last_failed_at
    }
    /// Why the last delivery that was given up failed.
    async fn last_error(&self) -> Option<&str> {
        self.0.last_error.as_deref()
    }
    /// Deliveries given up since the last one that arrived.
    async fn failures_in_a_row(&self) -> i32 {
        self.0.failures_in_a_row
    }
    /// Whether its last delivery was given up.
    async fn failing(&self) -> bool {
        self.0.failures_in_a_row > 0
    }
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    /// Its newest deliveries (at most 100), kept a week.
    async fn deliveries(&self, ctx: &Context<'_>, #[graphql(default = 20)] first: i32) -> Result<Vec<NotificationDelivery>> {
        let (_, db) = session(ctx)?;
        Ok(service::deliveries(db, self.0.id, first).await?.into_iter().map(NotificationDelivery).collect())
    }
}

/// One milestone sent (or being sent) through a channel.
pub struct NotificationDelivery(pub delivery::Model);

#[Object]
impl NotificationDelivery {
    async fn id(&self) -> ID {
        ids::encode(Kind::NotificationDelivery, self.0.id)
    }
    async fn milestone(&self) -> &str {
        &self.0.milestone
    }
    async fn state(&self) -> DeliveryState {
        self.0.state
    }
    async fn attempts(&self) -> i32 {
        self.0.attempts
    }
    /// When it is tried next, while pending.
    async fn next_attempt_at(&self) -> Option<DateTime<Utc>> {
        (self.0.state == DeliveryState::Pending).then_some(self.0.next_attempt_at)
    }
    async fn last_error(&self) -> Option<&str> {
        self.0.last_error.as_deref()
    }
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    async fn delivered_at(&self) -> Option<DateTime<Utc>> {
        self.0.delivered_at
    }
    /// The GPR it was about, when the caller may still see it.
    async fn gpr(&self, ctx: &Context<'_>) -> Result<Option<Gpr>> {
        let Some(id) = self.0.gpr_id else { return Ok(None) };
        let (caller, db) = session(ctx)?;
        Ok(service::delivery_gpr(db, caller, id).await?.map(Gpr))
    }
}

/// What this gateway can send.
#[derive(SimpleObject)]
pub struct NotificationOptions {
    /// Whether e-mail channels can be made (the operator set an SMTP server).
    pub email: bool,
    /// Whether URLs must be public https ones (the operator did not allow private targets).
    pub public_targets_only: bool,
    /// What a channel made without choosing hears of.
    pub default_milestones: Vec<Milestone>,
}

#[derive(Default)]
pub struct NotificationQuery;

#[Object]
impl NotificationQuery {
    /// The channels the caller manages: their own and those of the slices they own; with
    /// `sliceId`, that slice's (its owners).
    async fn notification_channels(&self, ctx: &Context<'_>, slice_id: Option<ID>) -> Result<Vec<NotificationChannel>> {
        let (caller, db) = session(ctx)?;
        let slice_id = slice_id.as_ref().map(|id| ids::decode("sliceId", id, Kind::Slice)).transpose()?;
        Ok(service::list_channels(db, caller, slice_id).await?.into_iter().map(NotificationChannel).collect())
    }

    async fn notification_channel(&self, ctx: &Context<'_>, id: ID) -> Result<NotificationChannel> {
        let (caller, db) = session(ctx)?;
        let id = ids::decode("id", &id, Kind::NotificationChannel)?;
        Ok(NotificationChannel(service::find_channel(db, caller, id).await?))
    }

    async fn notification_options(&self, ctx: &Context<'_>) -> Result<NotificationOptions> {
        let (caller, _) = session(ctx)?;
        caller.require_person()?;
        let notifier = &app(ctx)?.notifier;
        Ok(NotificationOptions {
            email: notifier.can_mail(),
            public_targets_only: notifier.guarded(),
            default_milestones: milestones::DEFAULT.to_vec(),
        })
    }
}

#[derive(InputObject)]
pub struct CreateNotificationChannelInput {
    /// A slice whose GPRs it hears of (its owners make these); omit for your own GPRs.
    pub slice_id: Option<ID>,
    pub kind: NotificationKind,
    /// 1–64 characters.
    pub name: String,
    /// The webhook URL (https) or the e-mail address.
    pub target: String,
    /// Omit for provisioned, exit warning, released, preempted and failed.
    pub milestones: Option<Vec<Milestone>>,
    /// For `ESTIMATE_MOVED`: only moves of at least this many minutes (1–10080; default 30).
    pub estimate_moved_minutes: Option<i32>,
    #[graphql(default = true)]
    pub enabled: bool,
}

/// Omitted fields keep their value.
#[derive(InputObject)]
pub struct UpdateNotificationChannelInput {
    pub id: ID,
    pub name: Option<String>,
    pub target: Option<String>,
    pub milestones: Option<Vec<Milestone>>,
    /// `null` goes back to the default (30).
    pub estimate_moved_minutes: MaybeUndefined<i32>,
    pub enabled: Option<bool>,
    /// A new signing key for a JSON webhook (the old one stops at once).
    #[graphql(default)]
    pub rotate_signing_secret: bool,
}

#[derive(InputObject)]
pub struct NotificationChannelRef {
    pub id: ID,
}

/// A channel made or changed.
#[derive(SimpleObject)]
pub struct NotificationChannelPayload {
    pub channel: Option<NotificationChannel>,
    /// The key a JSON webhook's bodies are signed with (`X-EGS-Signature`): only here, when the
    /// channel is made or the key rotated. EGS shows it no other time.
    pub signing_secret: Option<String>,
    pub user_errors: Vec<UserError>,
}

impl NotificationChannelPayload {
    fn from_result(result: Result<service::Saved>) -> async_graphql::Result<Self> {
        match result {
            Ok(saved) => {
                Ok(Self { channel: Some(NotificationChannel(saved.channel)), signing_secret: saved.signing_secret, user_errors: Vec::new() })
            }
            Err(egs_domain::error::Error::User(user_errors)) => Ok(Self { channel: None, signing_secret: None, user_errors }),
            Err(other) => Err(other.into()),
        }
    }
}

payload!(
    /// The deleted channel, as it was.
    DeleteNotificationChannelPayload,
    channel: NotificationChannel
);

/// What came of a test message.
#[derive(SimpleObject)]
pub struct TestNotificationChannelPayload {
    /// Whether the receiver took it.
    pub delivered: bool,
    /// Why not, when it did not.
    pub error: Option<String>,
    /// The channel, with the outcome recorded.
    pub channel: Option<NotificationChannel>,
    pub user_errors: Vec<UserError>,
}

#[derive(Default)]
pub struct NotificationMutation;

#[Object]
impl NotificationMutation {
    /// Makes a notification channel: yours (milestones of the GPRs you ask for), or a slice's
    /// (all its GPRs; slice owners). A JSON webhook's signing key is in the payload, once.
    async fn create_notification_channel(
        &self,
        ctx: &Context<'_>,
        input: CreateNotificationChannelInput,
    ) -> async_graphql::Result<NotificationChannelPayload> {
        let (caller, db) = session(ctx)?;
        let notifier = &app(ctx)?.notifier;
        let result = async {
            let spec = service::ChannelSpec {
                slice_id: input.slice_id.as_ref().map(|id| ids::decode("sliceId", id, Kind::Slice)).transpose()?,
                kind: input.kind,
                name: input.name,
                target: input.target,
                milestones: input.milestones,
                estimate_moved_minutes: input.estimate_moved_minutes,
                enabled: input.enabled,
            };
            service::create_channel(db, notifier, caller, spec).await
        };
        NotificationChannelPayload::from_result(result.await)
    }

    async fn update_notification_channel(
        &self,
        ctx: &Context<'_>,
        input: UpdateNotificationChannelInput,
    ) -> async_graphql::Result<NotificationChannelPayload> {
        let (caller, db) = session(ctx)?;
        let notifier = &app(ctx)?.notifier;
        let result = async {
            let id = ids::decode("id", &input.id, Kind::NotificationChannel)?;
            let changes = service::ChannelChanges {
                name: input.name,
                target: input.target,
                milestones: input.milestones,
                estimate_moved_minutes: match input.estimate_moved_minutes {
                    MaybeUndefined::Undefined => None,
                    MaybeUndefined::Null => Some(None),
                    MaybeUndefined::Value(v) => Some(Some(v)),
                },
                enabled: input.enabled,
                rotate_signing_secret: input.rotate_signing_secret,
            };
            service::update_channel(db, notifier, caller, id, changes).await
        };
        NotificationChannelPayload::from_result(result.await)
    }

    /// Deletes a channel; what it had not sent yet goes with it.
    async fn delete_notification_channel(
        &self,
        ctx: &Context<'_>,
        input: NotificationChannelRef,
    ) -> async_graphql::Result<DeleteNotificationChannelPayload> {
        let (caller, db) = session(ctx)?;
        let result =
            async { service::delete_channel(db, caller, ids::decode("id", &input.id, Kind::NotificationChannel)?).await.map(NotificationChannel) };
        DeleteNotificationChannelPayload::from_result(result.await)
    }

    /// Sends a test message through a channel now and says whether it arrived (recorded on the
    /// channel like any delivery).
    async fn test_notification_channel(
        &self,
        ctx: &Context<'_>,
        input: NotificationChannelRef,
    ) -> async_graphql::Result<TestNotificationChannelPayload> {
        let (caller, db) = session(ctx)?;
        let notifier = &app(ctx)?.notifier;
        let found = async { service::find_channel(db, caller, ids::decode("id", &input.id, Kind::NotificationChannel)?).await };
        let found = match found.await {
            Ok(found) => found,
            Err(egs_domain::error::Error::User(user_errors)) => {
                return Ok(TestNotificationChannelPayload { delivered: false, error: None, channel: None, user_errors });
            }
            Err(other) => return Err(other.into()),
        };
        if !notifier.allow_test(caller.record.user_id.unwrap_or_default()) {
            let refused = UserError {
                field: vec!["input".into(), "id".into()],
                message: format!("at most {} test messages an hour; the channel's deliveries show how real ones fare", outbox::MAX_TESTS_PER_HOUR),
                code: egs_domain::error::ErrorCode::LimitExceeded,
            };
            return Ok(TestNotificationChannelPayload { delivered: false, error: None, channel: None, user_errors: vec![refused] });
        }
        let outcome = notifier.send_test(&found, caller.actor()).await;
        let error = match outcome {
            Outcome::Delivered => None,
            Outcome::Retry(why) | Outcome::GiveUp(why) => Some(why),
        };
        let channel = service::reread(db, found.id).await?.map(NotificationChannel);
        Ok(TestNotificationChannelPayload { delivered: error.is_none(), error, channel, user_errors: Vec::new() })
    }
}
