//! What a notification says, in each channel's shape: a Slack message, a signed JSON body, an
//! e-mail.

use crate::ids::{self, Kind};
use chrono::{DateTime, Utc};
use egs_entities::{GprEventKind, gpr, gpr_event};
use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

/// One notification, whatever carries it.
pub struct Message {
    /// The delivery's id: a receiver that sees it twice (a reply lost after it arrived) can
    /// drop the second.
    pub delivery: String,
    /// `TEST` for a test message.
    pub milestone: String,
    pub headline: String,
    pub details: String,
    pub at: DateTime<Utc>,
    pub gpr: Option<GprFacts>,
    pub event: Option<EventFacts>,
}

pub struct GprFacts {
    pub id: String,
    pub name: String,
    pub slice: String,
    pub phase: String,
    pub provisioned_at: Option<DateTime<Utc>>,
    pub exit_at: Option<DateTime<Utc>>,
    pub start_no_later_than: Option<DateTime<Utc>>,
}

pub struct EventFacts {
    pub id: String,
    pub kind: GprEventKind,
    pub actor: String,
    pub estimate_moved_secs: Option<i64>,
}

impl Message {
    /// A GPR milestone.
    pub fn milestone(delivery_id: i64, milestone: &str, event: &gpr_event::Model, gpr: &gpr::Model, slice: &str) -> Self {
        Self {
            delivery: ids::encode(Kind::NotificationDelivery, delivery_id),
            milestone: milestone.to_owned(),
            headline: format!("GPR `{}` in slice `{slice}` {}", gpr.name, super::milestones::headline(event.kind, gpr.release_reason)),
            details: event.message.clone(),
            at: event.created_at,
            gpr: Some(GprFacts {
                id: ids::encode(Kind::Gpr, gpr.id),
                name: gpr.name.clone(),
                slice: slice.to_owned(),
                phase: gpr.phase.as_str().to_owned(),
                provisioned_at: gpr.provisioned_at,
                exit_at: gpr.exit_at,
                start_no_later_than: gpr.start_no_later_than,
            }),
            event: Some(EventFacts {
                id: ids::encode(Kind::GprEvent, event.id),
                kind: event.kind,
                actor: event.actor.clone(),
                estimate_moved_secs: event.estimate_moved_secs,
            }),
        }
    }

    /// What the Test button sends.
    pub fn test(channel_name: &str, by: &str) -> Self {
        Self {
            delivery: format!("test-{}", rand::random::<u64>()),
            milestone: "TEST".into(),
            headline: format!("Test message for channel `{channel_name}`"),
            details: format!("{by} asked EGS to check this channel. GPR milestones you chose will arrive like this."),
            at: Utc::now(),
            gpr: None,
            event: None,
        }
    }

    fn icon(&self) -> (&'static str, &'static str) {
        use GprEventKind as K;
        match self.event.as_ref().map(|e| e.kind) {
            Some(K::Provisioned) => (":white_check_mark:", "#2e7d32"),
            Some(K::Preempted | K::Evicted | K::Failed | K::Rejected | K::ExtensionRejected) => (":red_circle:", "#c62828"),
            Some(K::ExitWarning | K::ApprovalRequired | K::ExtensionRequested) => (":warning:", "#f9a825"),
            Some(K::Completed) => (":checkered_flag:", "#546e7a"),
            _ => (":information_source:", "#1565c0"),
        }
    }

    /// A Slack incoming-webhook message: `text` for notifications, an attachment with the
    /// details as fields.
    pub fn slack(&self) -> Value {
        let (icon, color) = self.icon();
        let text = format!("{icon} {}", self.headline);
        let mut fields = vec![json!({ "title": "Milestone", "value": self.milestone, "short": true })];
        if let Some(gpr) = &self.gpr {
            fields.push(json!({ "title": "Phase", "value": gpr.phase, "short": true }));
            if let Some(exit) = gpr.exit_at {
                fields.push(json!({ "title": "Window ends", "value": exit.to_rfc3339(), "short": true }));
            } else if let Some(start) = gpr.start_no_later_than {
                fields.push(json!({ "title": "Starts no later than", "value": start.to_rfc3339(), "short": true }));
            }
            fields.push(json!({ "title": "GPR", "value": gpr.id, "short": false }));
        }
        json!({
            "text": text,
            "attachments": [{
                "fallback": text,
                "color": color,
                "text": self.details,
                "fields": fields,
                "footer": "EGS",
                "ts": self.at.timestamp(),
            }],
        })
    }

    /// The JSON webhook's body.
    pub fn webhook(&self) -> Value {
        let gpr = self.gpr.as_ref().map(|g| {
            json!({
                "id": g.id, "name": g.name, "slice": g.slice, "phase": g.phase,
                "provisionedAt": g.provisioned_at, "exitAt": g.exit_at, "startNoLaterThan": g.start_no_later_than,
            })
        });
        let event = self
            .event
            .as_ref()
            .map(|e| json!({ "id": e.id, "kind": e.kind.as_str(), "actor": e.actor, "estimateMovedSeconds": e.estimate_moved_secs }));
        json!({
            "delivery": self.delivery,
            "milestone": self.milestone,
            "headline": self.headline,
            "message": self.details,
            "at": self.at,
            "gpr": gpr,
            "event": event,
        })
    }

    /// The e-mail's subject and plain-text body.
    pub fn email(&self) -> (String, String) {
        let subject = format!("[EGS] {}", self.headline.replace('`', ""));
        let mut body = format!("{}\n\n{}\n\nMilestone: {}\nAt: {}\n", self.headline, self.details, self.milestone, self.at.to_rfc3339());
        if let Some(gpr) = &self.gpr {
            body.push_str(&format!("GPR: {} ({})\nSlice: {}\nPhase: {}\n", gpr.name, gpr.id, gpr.slice, gpr.phase));
            if let Some(exit) = gpr.exit_at {
                body.push_str(&format!("Window ends: {}\n", exit.to_rfc3339()));
            }
        }
        body.push_str("\nYou get this because a notification channel in EGS names this address; its owner can change or delete it there.\n");
        (subject, body)
    }
}

/// The headers a JSON webhook's body is signed with: `X-EGS-Signature: sha256=<hex>` over
/// `<timestamp>.<body>`, the timestamp in `X-EGS-Timestamp` (a receiver refuses old ones, so a
/// captured body cannot be replayed later).
pub fn signature_headers(secret: &str, body: &[u8], delivery: &str, at: DateTime<Utc>) -> Vec<(&'static str, String)> {
    let timestamp = at.timestamp().to_string();
    let mut headers = vec![("X-EGS-Delivery", delivery.to_owned()), ("X-EGS-Timestamp", timestamp.clone())];
    if let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret.as_bytes()) {
        mac.update(timestamp.as_bytes());
        mac.update(b".");
        mac.update(body);
        let hex = hex::encode(mac.finalize().into_bytes());
        headers.push(("X-EGS-Signature", format!("sha256={hex}")));
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_covers_the_timestamp_and_the_body() {
        let at = DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap_or_default();
        let one = signature_headers("whsec_1", b"{}", "d1", at);
        assert_eq!(one[1], ("X-EGS-Timestamp", "1800000000".to_owned()));
        let signature = |h: &[(&str, String)]| h.iter().find(|(n, _)| *n == "X-EGS-Signature").map(|(_, v)| v.clone()).unwrap_or_default();
        assert!(signature(&one).starts_with("sha256=") && signature(&one).len() == 7 + 64);
        assert_ne!(signature(&one), signature(&signature_headers("whsec_1", b"{ }", "d1", at)));
        assert_ne!(signature(&one), signature(&signature_headers("whsec_1", b"{}", "d1", at + chrono::Duration::seconds(1))));
        assert_ne!(signature(&one), signature(&signature_headers("whsec_2", b"{}", "d1", at)));
    }

    #[test]
    fn a_test_message_has_every_shape() {
        let message = Message::test("ops", "ada");
        assert!(message.slack()["text"].as_str().unwrap_or_default().contains("Test message for channel `ops`"));
        assert_eq!(message.webhook()["milestone"], "TEST");
        let (subject, body) = message.email();
        assert_eq!(subject, "[EGS] Test message for channel ops");
        assert!(body.contains("ada asked EGS"));
    }
}
