//! The notifier every replica runs: it turns stored GPR events into deliveries (one per channel
//! that wants the milestone, one per Kubernetes namespace of the slice) and sends what is due.
//!
//! Once across replicas: every replica hears every event (the [`EventFeed`] tails the table), so
//! each may fan it out, but a delivery's `dedup_key` (where it goes, which event) is unique and
//! the second insert adds nothing. A replica takes a delivery by moving its `claimed_until`
//! forward in a statement that re-checks it was free; whoever loses the race skips it. A replica
//! that dies mid-send leaves a claim that runs out, and another sends it then.
//!
//! Retries: what may pass (timeouts, 5xx, 429) is tried again after 10 s, 20 s, 40 s … (at most
//! 15 minutes apart) up to [`NotifierConfig::attempts`] times; the rest is given up at once and
//! shows on the channel (`lastError`, `failuresInARow`) for its owner to fix.

use super::message::{self, Message};
use super::milestones;
use crate::events::EventFeed;
use crate::outbound::{self, Outcome};
use crate::ports::{KubeAccess, Mailer, NamespaceEvent};
use chrono::{DateTime, Utc};
use egs_entities::{
    ClusterProvider, DeliveryState, Milestone, NotificationKind, Role, SliceRole, cluster, cursor, gpr, gpr_event, notification_channel as channel,
    notification_delivery as delivery, slice, slice_member, slice_namespace, user,
};
use sea_orm::sea_query::{Alias, Expr, ExprTrait, OnConflict, Query};
use sea_orm::{ActiveModelTrait, ColumnTrait, Condition, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set};
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, broadcast};

/// Where the notifier's progress through `gpr_events` is kept.
const CURSOR: &str = "notifications";
/// Deliveries taken at a time; they are sent concurrently.
const BATCH: u64 = 16;
/// Events read at a time when catching up.
const EVENT_BATCH: u64 = 500;
/// How often due retries and expired claims are looked for without a wake-up.
const POLL: Duration = Duration::from_secs(1);
/// Sent and given-up deliveries are kept this long for their channel's page.
const KEEP: chrono::Duration = chrono::Duration::days(7);
/// The longest wait between two attempts.
const LAST_RETRY: Duration = Duration::from_secs(15 * 60);

#[derive(Clone, Debug)]
pub struct NotifierConfig {
    /// Whether users' webhooks may name loopback and private addresses (an in-house receiver).
    pub allow_private_targets: bool,
    /// Wait before the second attempt; it doubles for each next one.
    pub first_retry: Duration,
    /// Attempts per delivery, the first included.
    pub attempts: i32,
    /// How long a replica holds a delivery it is sending before another may take it.
    pub claim_for: Duration,
    /// Domains (lowercase) e-mail channels may send to besides the user's own address.
    pub mail_domains: Vec<String>,
}

impl Default for NotifierConfig {
    fn default() -> Self {
        Self {
            allow_private_targets: false,
            first_retry: Duration::from_secs(10),
            attempts: 8,
            claim_for: Duration::from_secs(60),
            mail_domains: Vec::new(),
        }
    }
}

pub struct Notifier {
    db: DatabaseConnection,
    events: Arc<EventFeed>,
    http: outbound::Client,
    mailer: Option<Arc<dyn Mailer>>,
    kube: Arc<dyn KubeAccess>,
    config: NotifierConfig,
    wake: Notify,
    /// Test messages per user and hour: each is a POST (or an e-mail) to an address they chose.
    tests: crate::per_hour::HourlyCounter,
}

/// Test messages one user may send per hour.
pub const MAX_TESTS_PER_HOUR: u32 = 30;

impl Notifier {
    pub fn new(
        db: DatabaseConnection,
        events: Arc<EventFeed>,
        mailer: Option<Arc<dyn Mailer>>,
        kube: Arc<dyn KubeAccess>,
        config: NotifierConfig,
    ) -> anyhow::Result<Arc<Self>> {
        let http = if config.allow_private_targets { outbound::Client::open()? } else { outbound::Client::guarded()? };
        Ok(Arc::new(Self {
            db,
            events,
            http,
            mailer,
            kube,
            config,
            wake: Notify::new(),
            tests: crate::per_hour::HourlyCounter::new(MAX_TESTS_PER_HOUR),
        }))
    }

    /// Whether users' URLs must be public https ones.
    pub fn guarded(&self) -> bool {
        self.http.is_guarded()
    }

    /// Whether e-mail channels can be made (an SMTP server is configured).
    pub fn can_mail(&self) -> bool {
        self.mailer.is_some()
    }

    /// Whether `address`'s domain is one the operator lets e-mail channels send to.
    pub fn mails_domain_of(&self, address: &str) -> bool {
        address.rsplit_once('@').is_some_and(|(_, domain)| self.config.mail_domains.iter().any(|d| d.eq_ignore_ascii_case(domain)))
    }

    /// Fans out new events and sends what is due until `stop` completes.
    pub async fn run(self: Arc<Self>, stop: impl Future<Output = ()>) {
        tokio::pin!(stop);
        let (mut live, _) = self.events.subscribe();
        let mut cursor = loop {
            match self.load_cursor().await {
                Ok(position) => break position,
                Err(error) => tracing::warn!(%error, "the notifier cannot read where it stopped; retrying"),
            }
            tokio::select! {
                _ = &mut stop => return,
                _ = tokio::time::sleep(POLL) => {}
            }
        };
        let mut behind = true;
        let mut last_prune = None::<DateTime<Utc>>;
        loop {
            if behind {
                match self.catch_up(&mut cursor).await {
                    Ok(()) => behind = false,
                    Err(error) => tracing::warn!(%error, "the notifier failed to read GPR events; retrying"),
                }
            }
            if let Err(error) = self.deliver_due().await {
                tracing::warn!(%error, "the notifier failed to send due notifications; retrying");
            }
            if last_prune.is_none_or(|at| Utc::now() - at > chrono::Duration::hours(1)) {
                last_prune = Some(Utc::now());
                if let Err(error) = self.prune().await {
                    tracing::info!(%error, "could not prune old notification deliveries");
                }
            }
            tokio::select! {
                _ = &mut stop => return,
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(POLL) => {}
                received = live.recv() => match received {
                    Ok(first) => {
                        let mut batch = vec![first];
                        while let Ok(next) = live.try_recv() {
                            batch.push(next);
                        }
                        // A late commit (below the cursor) still goes out: the dedup key keeps a
                        // second copy from being made.
                        let newest = batch.iter().map(|e| e.id).max().unwrap_or(cursor);
                        match self.fan_out(&batch).await {
                            Ok(()) => cursor = self.advance(cursor, newest).await,
                            Err(error) => {
                                tracing::warn!(%error, "the notifier failed to fan out GPR events; re-reading them");
                                behind = true;
                            }
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => behind = true,
                    Err(broadcast::error::RecvError::Closed) => return,
                },
            }
        }
    }

    /// Where this deployment's notifier stopped; a new database starts at its newest event
    /// (history is not news).
    async fn load_cursor(&self) -> Result<i64, DbErr> {
        if let Some(found) = cursor::Entity::find_by_id(CURSOR).one(&self.db).await? {
            return Ok(found.position);
        }
        let start = self.events.published();
        let row = cursor::ActiveModel { name: Set(CURSOR.to_owned()), position: Set(start) };
        cursor::Entity::insert(row)
            .on_conflict(OnConflict::column(cursor::Column::Name).do_nothing().to_owned())
            .try_insert()
            .exec_without_returning(&self.db)
            .await?;
        Ok(cursor::Entity::find_by_id(CURSOR).one(&self.db).await?.map_or(start, |c| c.position))
    }

    /// Moves the stored cursor forward (never back: another replica may be ahead).
    async fn advance(&self, cursor: i64, newest: i64) -> i64 {
        if newest <= cursor {
            return cursor;
        }
        let stored = cursor::Entity::update_many()
            .col_expr(cursor::Column::Position, Expr::value(newest))
            .filter(cursor::Column::Name.eq(CURSOR))
            .filter(cursor::Column::Position.lt(newest))
            .exec(&self.db)
            .await;
        if let Err(error) = stored {
            tracing::info!(%error, "could not store the notifier's position; it re-reads a little after a restart");
        }
        newest
    }

    /// Fans out the stored events after `cursor` that the hub has published.
    async fn catch_up(&self, cursor: &mut i64) -> Result<(), DbErr> {
        loop {
            let until = self.events.published();
            let rows = gpr_event::Entity::find()
                .filter(gpr_event::Column::Id.gt(*cursor))
                .filter(gpr_event::Column::Id.lte(until))
                .order_by_asc(gpr_event::Column::Id)
                .limit(EVENT_BATCH)
                .all(&self.db)
                .await?;
            let Some(newest) = rows.last().map(|e| e.id) else { return Ok(()) };
            let full = rows.len() as u64 == EVENT_BATCH;
            let rows: Vec<Arc<gpr_event::Model>> = rows.into_iter().map(Arc::new).collect();
            self.fan_out(&rows).await?;
            *cursor = self.advance(*cursor, newest).await;
            if !full {
                return Ok(());
            }
        }
    }

    /// Stores a delivery for every channel and namespace that should hear of each event.
    async fn fan_out(&self, events: &[Arc<gpr_event::Model>]) -> Result<(), DbErr> {
        let wanted: Vec<(&gpr_event::Model, Milestone)> = events.iter().filter_map(|e| milestones::of(e.kind).map(|m| (e.as_ref(), m))).collect();
        if wanted.is_empty() {
            return Ok(());
        }
        let gpr_ids: HashSet<i64> = wanted.iter().map(|(e, _)| e.gpr_id).collect();
        let gprs: HashMap<i64, gpr::Model> =
            gpr::Entity::find().filter(gpr::Column::Id.is_in(gpr_ids)).all(&self.db).await?.into_iter().map(|g| (g.id, g)).collect();
        let slice_ids: HashSet<i64> = gprs.values().map(|g| g.slice_id).collect();
        let requesters: HashSet<i64> = gprs.values().filter_map(|g| g.requester_id).collect();
        let channels = channel::Entity::find()
            .filter(channel::Column::Enabled.eq(true))
            .filter(
                Condition::any()
                    .add(channel::Column::SliceId.is_in(slice_ids.iter().copied()))
                    .add(channel::Column::UserId.is_in(requesters.iter().copied())),
            )
            .all(&self.db)
            .await?;
        // A user's channel hears of their GPRs only while they may still see the slice; a
        // slice's channel hears only while the one who made it still owns the slice (or is an
        // admin): removed or demoted, their channel falls silent.
        let people: HashSet<i64> = channels.iter().filter_map(|c| c.user_id.or(c.slice_id.map(|_| c.created_by))).collect();
        let admins: HashSet<i64> = if people.is_empty() {
            HashSet::new()
        } else {
            let found = user::Entity::find().filter(user::Column::Id.is_in(people.iter().copied())).filter(user::Column::Role.eq(Role::Admin));
            found.all(&self.db).await?.into_iter().map(|u| u.id).collect()
        };
        let members: HashMap<(i64, i64), SliceRole> = if people.is_empty() {
            HashMap::new()
        } else {
            slice_member::Entity::find()
                .filter(slice_member::Column::UserId.is_in(people.iter().copied()))
                .filter(slice_member::Column::SliceId.is_in(slice_ids.iter().copied()))
                .all(&self.db)
                .await?
                .into_iter()
                .map(|m| ((m.user_id, m.slice_id), m.role))
                .collect()
        };
        let chosen: Vec<Vec<Milestone>> = channels.iter().map(|c| milestones::decode(&c.milestones)).collect();
        let namespaces = self.kubernetes_namespaces(&slice_ids).await?;
        let now = Utc::now();
        let mut rows = Vec::new();
        for (event, milestone) in &wanted {
            let Some(g) = gprs.get(&event.gpr_id) else { continue };
            for (c, chosen) in channels.iter().zip(&chosen) {
                let audience = match (c.slice_id, c.user_id) {
                    (Some(slice), _) => {
                        slice == g.slice_id && (admins.contains(&c.created_by) || members.get(&(c.created_by, slice)) == Some(&SliceRole::Owner))
                    }
                    (None, Some(user)) => g.requester_id == Some(user) && (admins.contains(&user) || members.contains_key(&(user, g.slice_id))),
                    (None, None) => false,
                };
                let minutes = c.estimate_moved_minutes.unwrap_or(milestones::DEFAULT_ESTIMATE_MOVED_MINUTES);
                if audience && wants(chosen, minutes.into(), *milestone, event.estimate_moved_secs) {
                    rows.push(new_delivery(format!("c{}:e{}", c.id, event.id), Some(c.id), None, event, *milestone, now));
                }
            }
            let kube_worthy = wants(&[*milestone], milestones::KUBERNETES_ESTIMATE_MOVED_MINUTES, *milestone, event.estimate_moved_secs);
            for ns in namespaces.iter().filter(|n| kube_worthy && n.slice_id == g.slice_id) {
                if g.assigned_cluster_id.is_some_and(|assigned| assigned != ns.cluster_id) {
                    continue;
                }
                let key = format!("k{}/{}:e{}", ns.cluster_id, ns.name, event.id);
                rows.push(new_delivery(key, None, Some((ns.cluster_id, ns.name.clone())), event, *milestone, now));
            }
        }
        if rows.is_empty() {
            return Ok(());
        }
        let on_conflict = OnConflict::column(delivery::Column::DedupKey).do_nothing().to_owned();
        delivery::Entity::insert_many(rows).on_conflict(on_conflict).try_insert().exec_without_returning(&self.db).await?;
        self.wake.notify_one();
        Ok(())
    }

    /// The slices' namespaces on Kubernetes clusters (simulated ones have nowhere to post).
    async fn kubernetes_namespaces(&self, slice_ids: &HashSet<i64>) -> Result<Vec<slice_namespace::Model>, DbErr> {
        let all = slice_namespace::Entity::find().filter(slice_namespace::Column::SliceId.is_in(slice_ids.iter().copied())).all(&self.db).await?;
        if all.is_empty() {
            return Ok(all);
        }
        let clusters: HashSet<i64> = cluster::Entity::find()
            .filter(cluster::Column::Id.is_in(all.iter().map(|n| n.cluster_id).collect::<HashSet<_>>()))
            .filter(cluster::Column::Provider.eq(ClusterProvider::Kubernetes))
            .all(&self.db)
            .await?
            .into_iter()
            .map(|c| c.id)
            .collect();
        Ok(all.into_iter().filter(|n| clusters.contains(&n.cluster_id)).collect())
    }

    /// Takes the due deliveries (a batch at a time) and sends them.
    async fn deliver_due(&self) -> Result<(), DbErr> {
        loop {
            let claimed = self.claim().await?;
            let full = claimed.len() as u64 == BATCH;
            let sends = claimed.iter().map(|d| async move {
                let outcome = self.send(d).await;
                if let Err(error) = self.settle(d, outcome).await {
                    // Its claim runs out and it is sent again: twice is better than never.
                    tracing::warn!(delivery = d.id, %error, "could not record a notification's outcome");
                }
            });
            futures_util::future::join_all(sends).await;
            if !full {
                return Ok(());
            }
        }
    }

    /// Claims due deliveries: the update re-checks each is still free, so of two replicas
    /// racing for one, one gets it.
    async fn claim(&self) -> Result<Vec<delivery::Model>, DbErr> {
        let now = Utc::now();
        // A channel's deliveries go in order: only its oldest pending one may be taken (a
        // Kubernetes Event, with no channel, waits for nothing).
        let earlier = || {
            let other = Alias::new("earlier");
            Query::select()
                .expr(Expr::val(1))
                .from_as(delivery::Entity, other.clone())
                .and_where(Expr::col((other.clone(), delivery::Column::ChannelId)).equals((delivery::Entity, delivery::Column::ChannelId)))
                .and_where(Expr::col((other.clone(), delivery::Column::Id)).lt(Expr::col((delivery::Entity, delivery::Column::Id))))
                .and_where(Expr::col((other, delivery::Column::State)).eq(DeliveryState::Pending.as_str()))
                .to_owned()
        };
        let due = || {
            Condition::all()
                .add(delivery::Column::State.eq(DeliveryState::Pending))
                .add(delivery::Column::NextAttemptAt.lte(now))
                .add(Condition::any().add(delivery::Column::ClaimedUntil.is_null()).add(delivery::Column::ClaimedUntil.lt(now)))
                .add(Expr::exists(earlier()).not())
        };
        let ids: Vec<i64> = delivery::Entity::find()
            .select_only()
            .column(delivery::Column::Id)
            .filter(due())
            .order_by_asc(delivery::Column::Id)
            .limit(BATCH)
            .into_tuple()
            .all(&self.db)
            .await?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let until = now + chrono::Duration::from_std(self.config.claim_for).unwrap_or(chrono::Duration::seconds(60));
        delivery::Entity::update_many()
            .col_expr(delivery::Column::ClaimedUntil, Expr::value(until))
            .col_expr(delivery::Column::Attempts, Expr::col(delivery::Column::Attempts).add(1))
            .filter(delivery::Column::Id.is_in(ids))
            .filter(due())
            .exec_with_returning(&self.db)
            .await
    }

    async fn send(&self, d: &delivery::Model) -> Outcome {
        match self.compose(d).await {
            Ok(Some((target, message))) => match target {
                Target::Channel(c) => self.dispatch(&c, &message).await,
                Target::Namespace { cluster_id, namespace, event } => match self.kube.post_namespace_event(cluster_id, &namespace, &event).await {
                    Ok(()) => Outcome::Delivered,
                    Err(crate::ports::ProviderError::Transient(why)) => Outcome::Retry(why),
                    Err(crate::ports::ProviderError::Permanent(why)) => Outcome::GiveUp(why),
                },
            },
            Ok(None) => Outcome::GiveUp("its channel, GPR or event is gone, or the channel was turned off".into()),
            Err(error) => Outcome::Retry(format!("could not read what to send: {error}")),
        }
    }

    /// Where a delivery goes and what it says; `None` when there is nothing to send any more.
    async fn compose(&self, d: &delivery::Model) -> Result<Option<(Target, Message)>, DbErr> {
        let Some(event) = (match d.gpr_event_id {
            Some(id) => gpr_event::Entity::find_by_id(id).one(&self.db).await?,
            None => None,
        }) else {
            return Ok(None);
        };
        let Some(g) = gpr::Entity::find_by_id(event.gpr_id).one(&self.db).await? else { return Ok(None) };
        let slice_name = slice::Entity::find_by_id(g.slice_id).one(&self.db).await?.map(|s| s.name).unwrap_or_default();
        let message = Message::milestone(d.id, &d.milestone, &event, &g, &slice_name);
        if let Some(channel_id) = d.channel_id {
            let found = channel::Entity::find_by_id(channel_id).one(&self.db).await?.filter(|c| c.enabled);
            return Ok(found.map(|c| (Target::Channel(c), message)));
        }
        let (Some(cluster_id), Some(namespace)) = (d.cluster_id, d.namespace.clone()) else { return Ok(None) };
        let cluster_name = cluster::Entity::find_by_id(cluster_id).one(&self.db).await?.map(|c| c.name).unwrap_or_default();
        let resource = g.source_resource_in(&cluster_name).filter(|(ns, _)| *ns == namespace).map(|(_, name)| name.to_owned());
        let (reason, warning) = milestones::kubernetes_reason(event.kind);
        let text = format!("{}: {}", message.headline.replace('`', ""), message.details);
        let event = NamespaceEvent { reason, message: text, warning, resource };
        Ok(Some((Target::Namespace { cluster_id, namespace, event }, message)))
    }

    /// Sends a message through a channel.
    async fn dispatch(&self, c: &channel::Model, message: &Message) -> Outcome {
        match c.kind {
            NotificationKind::Slack | NotificationKind::Webhook => {
                let Some(url) = outbound::parse_url(&c.target) else { return Outcome::GiveUp("the channel's URL is not an http(s) URL".into()) };
                let (body, headers) = if c.kind == NotificationKind::Slack {
                    (message.slack(), vec![("X-EGS-Delivery", message.delivery.clone())])
                } else {
                    let body = message.webhook();
                    let bytes = serde_json::to_vec(&body).unwrap_or_default();
                    let headers = message::signature_headers(c.signing_secret.as_deref().unwrap_or_default(), &bytes, &message.delivery, Utc::now());
                    (body, headers)
                };
                let bytes = serde_json::to_vec(&body).unwrap_or_default();
                let outcome = self.http.post_json(&url, bytes, &headers).await;
                if outcome != Outcome::Delivered {
                    tracing::info!(channel = c.id, webhook = %outbound::shown(&url), ?outcome, "a notification was not delivered");
                }
                outcome
            }
            NotificationKind::Email => match &self.mailer {
                Some(mailer) => {
                    let (subject, body) = message.email();
                    mailer.send(&c.target, &subject, &body).await
                }
                None => Outcome::GiveUp("this gateway no longer sends e-mail (EGS_SMTP_URL is not set)".into()),
            },
        }
    }

    /// Records what came of an attempt, on the delivery and on its channel.
    async fn settle(&self, d: &delivery::Model, outcome: Outcome) -> Result<(), DbErr> {
        let now = Utc::now();
        let mut row = delivery::ActiveModel { id: Set(d.id), claimed_until: Set(None), ..Default::default() };
        let failed = match &outcome {
            Outcome::Delivered => {
                row.state = Set(DeliveryState::Delivered);
                row.delivered_at = Set(Some(now));
                row.last_error = Set(None);
                None
            }
            Outcome::Retry(why) if d.attempts < self.config.attempts => {
                row.next_attempt_at = Set(now + chrono::Duration::from_std(retry_after(&self.config, d.attempts)).unwrap_or_default());
                row.last_error = Set(Some(why.clone()));
                None
            }
            Outcome::Retry(why) | Outcome::GiveUp(why) => {
                row.state = Set(DeliveryState::Failed);
                row.last_error = Set(Some(why.clone()));
                Some(why.clone())
            }
        };
        row.update(&self.db).await?;
        let Some(channel_id) = d.channel_id else {
            if let Some(why) = failed {
                tracing::info!(delivery = d.id, namespace = ?d.namespace, %why, "gave up posting a Kubernetes Event for a GPR milestone");
            }
            return Ok(());
        };
        match (&outcome, failed) {
            (Outcome::Delivered, _) => self.record_on_channel(channel_id, None).await,
            (_, Some(why)) => self.record_on_channel(channel_id, Some(format!("{} (after {} attempt(s)): {why}", d.milestone, d.attempts))).await,
            _ => Ok(()),
        }
    }

    /// A channel's last success, or its last failure and how many in a row.
    async fn record_on_channel(&self, channel_id: i64, failure: Option<String>) -> Result<(), DbErr> {
        let now = Utc::now();
        let update = channel::Entity::update_many().filter(channel::Column::Id.eq(channel_id));
        let update = match failure {
            None => update.col_expr(channel::Column::LastDeliveredAt, Expr::value(now)).col_expr(channel::Column::FailuresInARow, Expr::value(0)),
            Some(why) => update
                .col_expr(channel::Column::LastFailedAt, Expr::value(now))
                .col_expr(channel::Column::LastError, Expr::value(why.chars().take(1000).collect::<String>()))
                .col_expr(channel::Column::FailuresInARow, Expr::col(channel::Column::FailuresInARow).add(1)),
        };
        update.exec(&self.db).await.map(drop)
    }

    async fn prune(&self) -> Result<(), DbErr> {
        delivery::Entity::delete_many()
            .filter(delivery::Column::State.ne(DeliveryState::Pending))
            .filter(delivery::Column::CreatedAt.lt(Utc::now() - KEEP))
            .exec(&self.db)
            .await
            .map(drop)
    }

    /// Counts a test message `user_id` asks for; false past [`MAX_TESTS_PER_HOUR`].
    pub fn allow_test(&self, user_id: i64) -> bool {
        self.tests.allow(user_id)
    }

    /// Sends a test message through a channel now and records the outcome on it.
    pub async fn send_test(&self, c: &channel::Model, by: &str) -> Outcome {
        let outcome = self.dispatch(c, &Message::test(&c.name, by)).await;
        let failure = match &outcome {
            Outcome::Delivered => None,
            Outcome::Retry(why) | Outcome::GiveUp(why) => Some(format!("TEST: {why}")),
        };
        if let Err(error) = self.record_on_channel(c.id, failure).await {
            tracing::info!(channel = c.id, %error, "could not record a test message's outcome");
        }
        outcome
    }
}

/// Whether a channel choosing `chosen` hears of `milestone`: an estimate move only when it is
/// known and at least `minutes` either way.
fn wants(chosen: &[Milestone], minutes: i64, milestone: Milestone, moved_secs: Option<i64>) -> bool {
    chosen.contains(&milestone) && (milestone != Milestone::EstimateMoved || moved_secs.is_some_and(|m| m.abs() >= minutes * 60))
}

/// After `attempts` tries: first_retry × 2^(attempts − 1), at most 15 minutes.
fn retry_after(config: &NotifierConfig, attempts: i32) -> Duration {
    let doublings = attempts.clamp(1, 20) as u32 - 1;
    config.first_retry.saturating_mul(1 << doublings).min(LAST_RETRY)
}

enum Target {
    Channel(channel::Model),
    Namespace { cluster_id: i64, namespace: String, event: NamespaceEvent },
}

fn new_delivery(
    key: String,
    channel_id: Option<i64>,
    namespace: Option<(i64, String)>,
    event: &gpr_event::Model,
    milestone: Milestone,
    now: DateTime<Utc>,
) -> delivery::ActiveModel {
    let (cluster_id, namespace) = namespace.map_or((None, None), |(c, n)| (Some(c), Some(n)));
    delivery::ActiveModel {
        channel_id: Set(channel_id),
        cluster_id: Set(cluster_id),
        namespace: Set(namespace),
        dedup_key: Set(key),
        gpr_id: Set(Some(event.gpr_id)),
        gpr_event_id: Set(Some(event.id)),
        milestone: Set(milestone.as_str().to_owned()),
        state: Set(DeliveryState::Pending),
        attempts: Set(0),
        next_attempt_at: Set(now),
        claimed_until: Set(None),
        last_error: Set(None),
        created_at: Set(now),
        delivered_at: Set(None),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests;
