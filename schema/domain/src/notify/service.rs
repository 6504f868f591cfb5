//! Notification channels: who may keep which, what a channel may name, and changing them.
//!
//! A user keeps channels for the GPRs they ask for; a slice's owners (and admins) keep channels
//! for all the slice's GPRs. A channel's URL is stored but never shown again whole (a Slack
//! webhook's path is its secret): reads show its scheme and host.

use super::{Notifier, milestones};
use crate::auth::Caller;
use crate::error::{Error, ErrorCode, Result, UserError};
use crate::outbound;
use chrono::Utc;
use egs_entities::{Milestone, NotificationKind, SliceRole, gpr, notification_channel as channel, notification_delivery as delivery};
use sea_orm::{ActiveModelTrait, ColumnTrait, Condition, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set};

/// Channels one user keeps for themself, and one slice keeps.
pub const MAX_CHANNELS: u64 = 20;
const MAX_NAME: usize = 64;
const MAX_URL: usize = 2048;
const MAX_ADDRESS: usize = 254;
/// Thresholds for `ESTIMATE_MOVED`, in minutes: a minute to a week.
pub const ESTIMATE_MOVED_MINUTES: std::ops::RangeInclusive<i32> = 1..=10_080;

/// A channel as asked for.
pub struct ChannelSpec {
    pub slice_id: Option<i64>,
    pub kind: NotificationKind,
    pub name: String,
    pub target: String,
    pub milestones: Option<Vec<Milestone>>,
    pub estimate_moved_minutes: Option<i32>,
    pub enabled: bool,
}

/// Changes to a channel; `None` keeps a field.
#[derive(Default)]
pub struct ChannelChanges {
    pub name: Option<String>,
    pub target: Option<String>,
    pub milestones: Option<Vec<Milestone>>,
    pub estimate_moved_minutes: Option<Option<i32>>,
    pub enabled: Option<bool>,
    pub rotate_signing_secret: bool,
}

/// A channel and, when it was made or its key rotated, the key its bodies are signed with.
pub struct Saved {
    pub channel: channel::Model,
    pub signing_secret: Option<String>,
}

/// The channels the caller manages: their own, and those of the slices they own (every slice's
/// for admins); with `slice_id`, only that slice's.
pub async fn list_channels(db: &DatabaseConnection, caller: &Caller, slice_id: Option<i64>) -> Result<Vec<channel::Model>> {
    caller.require_person()?;
    let condition = match slice_id {
        Some(slice) => {
            caller.require_slice_role(db, slice, SliceRole::Owner, "slice").await?;
            Condition::all().add(channel::Column::SliceId.eq(slice))
        }
        None => {
            // A user's own channels hear every slice of theirs: not a scoped token's business.
            let mine = match caller.is_scoped() {
                true => Condition::all().add(channel::Column::Id.eq(-1)),
                false => Condition::all().add(channel::Column::UserId.eq(caller.record.user_id.unwrap_or_default())),
            };
            let owned = match caller.visible_slices(db).await? {
                crate::auth::Visible::All => Condition::all().add(channel::Column::SliceId.is_not_null()),
                crate::auth::Visible::Only(slices) => {
                    let mut owned = Vec::new();
                    for slice in slices {
                        if caller.slice_role(db, slice).await? == Some(SliceRole::Owner) {
                            owned.push(slice);
                        }
                    }
                    Condition::all().add(channel::Column::SliceId.is_in(owned))
                }
            };
            Condition::any().add(mine).add(owned)
        }
    };
    Ok(channel::Entity::find().filter(condition).order_by_asc(channel::Column::Name).order_by_asc(channel::Column::Id).all(db).await?)
}

/// A channel the caller may manage (`NOT_FOUND` otherwise, as for a missing one).
pub async fn find_channel(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<channel::Model> {
    caller.require_person()?;
    let found = channel::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("notification channel"))?;
    let allowed = match (found.user_id, found.slice_id) {
        (Some(user), _) => !caller.is_scoped() && (caller.is_admin() || caller.record.user_id == Some(user)),
        (None, Some(slice)) => caller.slice_role(db, slice).await? == Some(SliceRole::Owner),
        (None, None) => false,
    };
    if allowed { Ok(found) } else { Err(Error::NotFound("notification channel")) }
}

/// The most deliveries one channel's page lists.
pub const MAX_DELIVERIES: i32 = 100;

/// A channel's newest `first` deliveries (1 to [`MAX_DELIVERIES`]; kept a week). The caller
/// reached the channel through [`find_channel`] or [`list_channels`].
pub async fn deliveries(db: &DatabaseConnection, channel_id: i64, first: i32) -> Result<Vec<delivery::Model>> {
    if !(1..=MAX_DELIVERIES).contains(&first) {
        return Err(Error::invalid("first", format!("give 1 to {MAX_DELIVERIES}")));
    }
    Ok(delivery::Entity::find()
        .filter(delivery::Column::ChannelId.eq(channel_id))
        .order_by_desc(delivery::Column::Id)
        .limit(first as u64)
        .all(db)
        .await?)
}

/// The GPR a delivery was about, when `caller` may still see it.
pub async fn delivery_gpr(db: &DatabaseConnection, caller: &Caller, gpr_id: i64) -> Result<Option<gpr::Model>> {
    let Some(found) = gpr::Entity::find_by_id(gpr_id).one(db).await? else { return Ok(None) };
    Ok(caller.can_see_slice(db, found.slice_id).await?.then_some(found))
}

/// A channel as stored now (after a test delivery changed its counters), if it still is.
pub async fn reread(db: &DatabaseConnection, id: i64) -> Result<Option<channel::Model>> {
    Ok(channel::Entity::find_by_id(id).one(db).await?)
}

pub async fn create_channel(db: &DatabaseConnection, notifier: &Notifier, caller: &Caller, spec: ChannelSpec) -> Result<Saved> {
    caller.require_person()?;
    let user_id = caller.record.user_id.ok_or_else(|| Error::Forbidden("only a user's token keeps notification channels".into()))?;
    let owner = match spec.slice_id {
        Some(slice) => {
            caller.require_slice_role(db, slice, SliceRole::Owner, "slice").await?;
            channel::Column::SliceId.eq(slice)
        }
        None if caller.is_scoped() => {
            return Err(Error::Forbidden(
                "a token scoped to some slices cannot keep your own notification channels (they hear every slice of yours); use an unscoped token, or make a channel of a slice in its scope".into(),
            ));
        }
        None => channel::Column::UserId.eq(user_id),
    };
    let mut errors = Vec::new();
    let name = check_name(&spec.name, &mut errors);
    let target = check_target(notifier, spec.kind, &spec.target, &mut errors);
    check_recipient(db, notifier, caller, spec.kind, &target, &mut errors).await?;
    let milestones = check_milestones(spec.milestones.as_deref(), &mut errors).unwrap_or_else(|| milestones::DEFAULT.to_vec());
    check_threshold(spec.estimate_moved_minutes, &mut errors);
    if !errors.is_empty() {
        return Err(Error::User(errors));
    }
    if channel::Entity::find().filter(owner).count(db).await? >= MAX_CHANNELS {
        let whose = if spec.slice_id.is_some() { "a slice" } else { "you" };
        return Err(Error::User(vec![UserError {
            field: Vec::new(),
            message: format!(
                "{whose} already keep{} {MAX_CHANNELS} notification channels, the most there may be; delete one first",
                if spec.slice_id.is_some() { "s" } else { "" }
            ),
            code: ErrorCode::LimitExceeded,
        }]));
    }
    let signing_secret = (spec.kind == NotificationKind::Webhook).then(new_secret);
    let now = Utc::now();
    let created = channel::ActiveModel {
        user_id: Set(spec.slice_id.is_none().then_some(user_id)),
        slice_id: Set(spec.slice_id),
        kind: Set(spec.kind),
        name: Set(name),
        target: Set(target),
        signing_secret: Set(signing_secret.clone()),
        milestones: Set(milestones::encode(&milestones)),
        estimate_moved_minutes: Set(spec.estimate_moved_minutes),
        enabled: Set(spec.enabled),
        created_by: Set(user_id),
        created_at: Set(now),
        updated_at: Set(now),
        last_delivered_at: Set(None),
        last_failed_at: Set(None),
        last_error: Set(None),
        failures_in_a_row: Set(0),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(Saved { channel: created, signing_secret })
}

pub async fn update_channel(db: &DatabaseConnection, notifier: &Notifier, caller: &Caller, id: i64, changes: ChannelChanges) -> Result<Saved> {
    let found = find_channel(db, caller, id).await?;
    let mut errors = Vec::new();
    let mut row: channel::ActiveModel = found.clone().into();
    if let Some(name) = &changes.name {
        row.name = Set(check_name(name, &mut errors));
    }
    if let Some(target) = &changes.target {
        let target = check_target(notifier, found.kind, target, &mut errors);
        check_recipient(db, notifier, caller, found.kind, &target, &mut errors).await?;
        row.target = Set(target);
    }
    if let Some(milestones) = check_milestones(changes.milestones.as_deref(), &mut errors) {
        row.milestones = Set(milestones::encode(&milestones));
    }
    if let Some(minutes) = changes.estimate_moved_minutes {
        check_threshold(minutes, &mut errors);
        row.estimate_moved_minutes = Set(minutes);
    }
    if changes.rotate_signing_secret && found.kind != NotificationKind::Webhook {
        errors.push(UserError::invalid("rotateSigningSecret", "only JSON webhooks are signed"));
    }
    if !errors.is_empty() {
        return Err(Error::User(errors));
    }
    if let Some(enabled) = changes.enabled {
        row.enabled = Set(enabled);
        if enabled && !found.enabled {
            // A fresh start: failures from before it was paused are history.
            row.failures_in_a_row = Set(0);
        }
    }
    let signing_secret = changes.rotate_signing_secret.then(new_secret);
    if let Some(secret) = &signing_secret {
        row.signing_secret = Set(Some(secret.clone()));
    }
    row.updated_at = Set(Utc::now());
    Ok(Saved { channel: row.update(db).await?, signing_secret })
}

/// Deletes a channel and what it had not sent yet.
pub async fn delete_channel(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<channel::Model> {
    let found = find_channel(db, caller, id).await?;
    channel::Entity::delete_by_id(found.id).exec(db).await?;
    Ok(found)
}

fn check_name(name: &str, errors: &mut Vec<UserError>) -> String {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME || name.chars().any(char::is_control) {
        errors.push(UserError::invalid("name", format!("give a name of 1 to {MAX_NAME} characters, without control characters")));
    }
    name.to_owned()
}

fn check_target(notifier: &Notifier, kind: NotificationKind, target: &str, errors: &mut Vec<UserError>) -> String {
    let target = target.trim();
    match kind {
        NotificationKind::Slack | NotificationKind::Webhook => {
            let Some(url) = outbound::parse_url(target).filter(|_| target.len() <= MAX_URL) else {
                errors.push(UserError::invalid("target", format!("give an http(s) URL of at most {MAX_URL} characters")));
                return target.to_owned();
            };
            if notifier.guarded() {
                if url.scheme() != "https" {
                    errors.push(UserError::invalid("target", "give an https URL: what EGS sends is private to your team"));
                } else if let Some(refusal) = outbound::literal_refusal(&url) {
                    errors.push(UserError::invalid("target", format!("EGS does not post to this URL: {refusal}")));
                }
            }
            if !url.username().is_empty() || url.password().is_some() {
                errors.push(UserError::invalid("target", "put no user name or password in the URL"));
            }
        }
        NotificationKind::Email => {
            if !notifier.can_mail() {
                errors
                    .push(UserError::invalid("kind", "this gateway sends no e-mail (its operator has not set EGS_SMTP_URL); use Slack or a webhook"));
            } else if !is_address(target) {
                errors.push(UserError::invalid("target", format!("give one e-mail address (name@example.com), at most {MAX_ADDRESS} characters")));
            }
        }
    }
    target.to_owned()
}

/// An e-mail channel mails only its maker's own address or one of a domain the operator
/// allows (`--notify-email-domains`): otherwise anyone could have the gateway mail strangers,
/// with their words in the subject.
async fn check_recipient(
    db: &DatabaseConnection,
    notifier: &Notifier,
    caller: &Caller,
    kind: NotificationKind,
    target: &str,
    errors: &mut Vec<UserError>,
) -> Result<()> {
    if kind != NotificationKind::Email || !is_address(target) || notifier.mails_domain_of(target) {
        return Ok(());
    }
    let own = match caller.record.user_id {
        Some(id) => egs_entities::user::Entity::find_by_id(id).one(db).await?.and_then(|u| u.email),
        None => None,
    };
    if !own.is_some_and(|own| own.eq_ignore_ascii_case(target)) {
        errors.push(UserError::invalid(
            "target",
            "e-mail channels send to your own address (as your account has it) or to a domain this gateway's operator allows (EGS_NOTIFY_EMAIL_DOMAINS)",
        ));
    }
    Ok(())
}

/// One plain address: a local part and a domain with a dot, nothing that could add a header or a
/// second recipient.
fn is_address(text: &str) -> bool {
    let Some((local, domain)) = text.rsplit_once('@') else { return false };
    text.len() <= MAX_ADDRESS
        && !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && text.chars().all(|c| c.is_ascii_graphic() && !matches!(c, ',' | ';' | '<' | '>' | '"' | '(' | ')' | '[' | ']' | '\\'))
        && domain.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
}

fn check_milestones(milestones: Option<&[Milestone]>, errors: &mut Vec<UserError>) -> Option<Vec<Milestone>> {
    let milestones = milestones?;
    if milestones.is_empty() {
        errors.push(UserError::invalid("milestones", "choose at least one milestone (or disable the channel)"));
    }
    let mut chosen = Vec::new();
    for m in milestones {
        if !chosen.contains(m) {
            chosen.push(*m);
        }
    }
    Some(chosen)
}

fn check_threshold(minutes: Option<i32>, errors: &mut Vec<UserError>) {
    if let Some(minutes) = minutes.filter(|m| !ESTIMATE_MOVED_MINUTES.contains(m)) {
        errors.push(UserError::invalid(
            "estimateMovedMinutes",
            format!("{minutes} is out of range: from {} to {} minutes", ESTIMATE_MOVED_MINUTES.start(), ESTIMATE_MOVED_MINUTES.end()),
        ));
    }
}

fn new_secret() -> String {
    let bytes: [u8; 24] = rand::random();
    format!("whsec_{}", hex::encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::is_address;

    #[test]
    fn addresses_are_one_plain_recipient() {
        assert!(is_address("ada@example.com"));
        assert!(is_address("ml-team+gpr@corp.example.co.uk"));
        for bad in ["ada", "ada@localhost", "a@b.com, c@d.com", "ada@example.com\r\nBcc: x@y.z", "<ada@example.com>", "@example.com", "ada@.com"] {
            assert!(!is_address(bad), "{bad}");
        }
    }
}
