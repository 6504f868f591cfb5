//! What the hub publishes and the webhook posts: an alert raised or cleared.

use egs_entities::{AlertAction, alert, alert_change};

/// An alert raised or cleared, with the alert as it was then.
#[derive(Clone, Debug, PartialEq)]
pub struct AlertTransition {
    /// The id of the stored transition (`alert_changes`).
    pub change_id: i64,
    pub action: AlertAction,
    pub alert: alert::Model,
}

impl AlertTransition {
    /// `alert` as read now; a raise is published as it was raised, even if it cleared since.
    pub fn new(change: &alert_change::Model, mut alert: alert::Model) -> Self {
        if change.action == AlertAction::Raised {
            alert.cleared_at = None;
            alert.resolution = None;
        }
        Self { change_id: change.id, action: change.action, alert }
    }
}
