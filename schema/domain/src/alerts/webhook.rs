//! Posting alert transitions to a Slack-compatible incoming webhook (`EGS_ALERT_WEBHOOK_URL` or `--alert-webhook-url-file`).
//!
//! Ingestion never waits for it: transitions go into a bounded in-memory queue
//! ([`QUEUE_CAPACITY`]; when full, the oldest is dropped with a warning) that one task drains
//! in order, so a raise is always posted before its clear. Each POST has a timeout; failures
//! that may pass (network errors, timeouts, 408, 429, 5xx) are retried with exponential backoff
//! up to [`ATTEMPTS`] attempts, others (a 4xx: the payload or URL is wrong) are given up at once.
//! Everything is logged with the webhook's scheme, host and port only: the path of a Slack
//! webhook URL is its secret.

use super::transition::AlertTransition;
use crate::ids::{self, Kind};
use crate::outbound::{self, Outcome};
use anyhow::Context;
use egs_entities::{AlertAction, AlertSeverity};
use egs_wire::backoff::Backoff;
use egs_wire::duration::format_human;
use serde_json::{Value, json};
use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// Transitions waiting to be posted; beyond this the oldest is dropped (a webhook that has been
/// down long enough to fill it would not make sense of the backlog anyway).
pub const QUEUE_CAPACITY: usize = 1000;
/// Attempts per transition, the first included.
pub const ATTEMPTS: u32 = 5;
/// Wait before the first retry; it doubles for each next one (0.5, 1, 2, 4 s).
pub const FIRST_RETRY: Duration = Duration::from_millis(500);
/// The longest wait between two tries.
const LAST_RETRY: Duration = Duration::from_secs(4);

pub struct Webhook {
    url: reqwest::Url,
    /// The URL as logs show it: scheme, host and port.
    shown: String,
    client: outbound::Client,
    queue: Mutex<VecDeque<Arc<AlertTransition>>>,
    ready: Notify,
}

impl Webhook {
    /// Checks the URL (http or https) without ever printing it.
    pub fn new(url: &str) -> anyhow::Result<Arc<Self>> {
        let url = outbound::parse_url(url).context("the alert webhook URL is not an http(s) URL")?;
        let shown = outbound::shown(&url);
        let client = outbound::Client::open().context("failed to build the alert webhook's HTTP client")?;
        Ok(Arc::new(Self { url, shown, client, queue: Mutex::new(VecDeque::new()), ready: Notify::new() }))
    }

    /// Scheme, host and port, for logs.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Queues a transition; never waits.
    pub fn enqueue(&self, transition: Arc<AlertTransition>) {
        let mut queue = self.queue.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if queue.len() >= QUEUE_CAPACITY
            && let Some(dropped) = queue.pop_front()
        {
            tracing::warn!(
                alert.id = dropped.alert.id,
                webhook = %self.shown,
                queue = QUEUE_CAPACITY,
                "the alert webhook queue is full; dropped its oldest transition"
            );
        }
        queue.push_back(transition);
        drop(queue);
        self.ready.notify_one();
    }

    fn next(&self) -> Option<Arc<AlertTransition>> {
        self.queue.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).pop_front()
    }

    /// Posts queued transitions in order until `stop` completes.
    pub async fn run(self: Arc<Self>, stop: impl Future<Output = ()>) {
        tokio::pin!(stop);
        loop {
            while let Some(transition) = self.next() {
                tokio::select! {
                    _ = &mut stop => return self.log_left_behind(1),
                    _ = self.deliver(&transition) => {}
                }
            }
            tokio::select! {
                _ = &mut stop => return self.log_left_behind(0),
                _ = self.ready.notified() => {}
            }
        }
    }

    fn log_left_behind(&self, in_flight: usize) {
        let left = self.queue.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).len() + in_flight;
        if left > 0 {
            tracing::warn!(webhook = %self.shown, transitions = left, "stopping with alert transitions not posted to the webhook");
        }
    }

    async fn deliver(&self, transition: &AlertTransition) {
        let payload = serde_json::to_vec(&slack_payload(transition)).unwrap_or_default();
        let mut backoff = Backoff::new(FIRST_RETRY, LAST_RETRY);
        for attempt in 1..=ATTEMPTS {
            let why = match self.client.post_json(&self.url, payload.clone(), &[]).await {
                Outcome::Delivered => return,
                Outcome::GiveUp(why) => {
                    tracing::warn!(alert.id = transition.alert.id, webhook = %self.shown, %why, "the alert webhook refused a transition; not retrying");
                    return;
                }
                Outcome::Retry(why) => why,
            };
            if attempt == ATTEMPTS {
                tracing::warn!(alert.id = transition.alert.id, webhook = %self.shown, %why, attempts = ATTEMPTS, "gave up posting an alert transition to the webhook");
                return;
            }
            let wait = backoff.next_delay();
            tracing::debug!(alert.id = transition.alert.id, webhook = %self.shown, %why, attempt, retry_in_ms = wait.as_millis() as u64, "posting to the alert webhook failed; retrying");
            tokio::time::sleep(wait).await;
        }
    }
}

/// The Slack incoming-webhook message for a transition: `text` (what notifications show) and
/// one attachment with the colour of its severity and the details as fields.
pub fn slack_payload(transition: &AlertTransition) -> Value {
    let alert = &transition.alert;
    let kind = alert.kind.as_str();
    let severity = alert.severity.as_str();
    let (icon, color, verb) = match (transition.action, alert.severity) {
        (AlertAction::Cleared, _) => (":white_check_mark:", "#2e7d32", "cleared"),
        (AlertAction::Raised, AlertSeverity::Critical) => (":red_circle:", "#c62828", "raised"),
        (AlertAction::Raised, AlertSeverity::Warning) => (":warning:", "#f9a825", "raised"),
        (AlertAction::Raised, AlertSeverity::Info) => (":information_source:", "#1565c0", "raised"),
    };
    let mut text = format!("{icon} {severity} {kind} {verb}: {}", alert.message);
    let mut details = alert.message.clone();
    if transition.action == AlertAction::Cleared {
        let lasted = alert.cleared_at.map(|c| format_human((c - alert.raised_at).num_seconds())).unwrap_or_default();
        let why = alert.resolution.as_deref().unwrap_or("the condition ended");
        text = format!("{icon} {kind} cleared after {lasted}: {why} ({})", alert.message);
        details = format!("{}\nCleared: {why}", alert.message);
    }
    let number = |v: Option<f64>| v.map_or_else(|| "–".to_owned(), |v| format!("{}", (v * 100.0).round() / 100.0));
    let mut fields = vec![
        json!({ "title": "Kind", "value": kind, "short": true }),
        json!({ "title": "Severity", "value": severity, "short": true }),
        json!({ "title": "Value", "value": number(alert.value), "short": true }),
        json!({ "title": "Threshold", "value": number(alert.threshold), "short": true }),
        json!({ "title": "Raised at", "value": alert.raised_at.to_rfc3339(), "short": true }),
    ];
    if let Some(cleared) = alert.cleared_at.filter(|_| transition.action == AlertAction::Cleared) {
        fields.push(json!({ "title": "Cleared at", "value": cleared.to_rfc3339(), "short": true }));
    }
    fields.push(json!({ "title": "Alert", "value": ids::encode(Kind::Alert, alert.id), "short": false }));
    let at = if transition.action == AlertAction::Cleared { alert.cleared_at.unwrap_or(alert.raised_at) } else { alert.raised_at };
    json!({
        "text": text,
        "attachments": [{
            "fallback": text,
            "color": color,
            "title": format!("{kind} {verb}"),
            "text": details,
            "fields": fields,
            "footer": "EGS alerts",
            "ts": at.timestamp(),
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{DateTime, Utc};
    use egs_entities::{AlertKind, alert};

    fn transition(action: AlertAction) -> AlertTransition {
        let raised = DateTime::<Utc>::from_timestamp(1_800_000_000, 0).unwrap_or_default();
        let cleared = (action == AlertAction::Cleared).then(|| raised + chrono::Duration::seconds(330));
        AlertTransition {
            change_id: 1,
            action,
            alert: alert::Model {
                id: 42,
                kind: AlertKind::OverTemperature,
                severity: AlertSeverity::Warning,
                subject: "gpu:1".into(),
                cluster_id: Some(1),
                node_id: Some(2),
                gpu_id: Some(3),
                slice_id: None,
                gpr_id: None,
                message: "GPU 0 (GPU-1) of node `n1` in cluster `c1` is at 91 °C, over its 87 °C threshold".into(),
                value: Some(91.0),
                threshold: Some(87.0),
                raised_at: raised,
                cleared_at: cleared,
                last_seen_at: Some(raised),
                resolution: cleared.map(|_| "cooled to 80 °C, under 82 °C".into()),
            },
        }
    }

    #[test]
    fn payloads_are_slack_messages_with_the_details_as_fields() {
        let raised = slack_payload(&transition(AlertAction::Raised));
        let text = raised["text"].as_str().unwrap_or_default();
        assert!(text.starts_with(":warning: WARNING OVER_TEMPERATURE raised: GPU 0"), "{text}");
        let attachment = &raised["attachments"][0];
        assert_eq!(attachment["color"], "#f9a825");
        assert_eq!(attachment["ts"], 1_800_000_000);
        let fields = attachment["fields"].as_array().map(Vec::len);
        assert_eq!(fields, Some(6));
        assert_eq!(attachment["fields"][2], json!({ "title": "Value", "value": "91", "short": true }));

        let cleared = slack_payload(&transition(AlertAction::Cleared));
        let text = cleared["text"].as_str().unwrap_or_default();
        assert!(text.starts_with(":white_check_mark: OVER_TEMPERATURE cleared after 5m 30s: cooled to 80 °C"), "{text}");
        assert_eq!(cleared["attachments"][0]["color"], "#2e7d32");
    }

    #[test]
    fn the_url_must_be_http_and_is_never_shown_whole() {
        assert!(Webhook::new("hooks.slack.com/services/T0/B0/secret").is_err());
        assert!(Webhook::new("ftp://example.com/x").is_err());
        let error = Webhook::new("not a url with secret").err().map(|e| format!("{e:#}")).unwrap_or_default();
        assert!(!error.contains("secret"), "{error}");
        let hook = Webhook::new("https://hooks.slack.com/services/T0/B0/secret").expect("valid");
        assert_eq!(hook.shown(), "https://hooks.slack.com");
    }
}
