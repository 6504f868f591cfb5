//! Which GPR events are milestones, and what each is called where it goes.

use egs_entities::{GprEventKind, Milestone, ReleaseReason};

/// The milestones a new channel gets when none are chosen: what a GPR's owner acts on.
pub const DEFAULT: [Milestone; 5] = [Milestone::Provisioned, Milestone::ExitWarning, Milestone::Released, Milestone::Preempted, Milestone::Failed];

/// An `ESTIMATE_MOVED` channel without its own threshold hears of moves of at least this.
pub const DEFAULT_ESTIMATE_MOVED_MINUTES: i32 = 30;

/// Kubernetes Events are posted for estimate moves of at least this many minutes (smaller
/// moves would flood `kubectl get events` in a deep queue).
pub const KUBERNETES_ESTIMATE_MOVED_MINUTES: i64 = 15;

/// The milestone an event is, if it is one.
pub fn of(kind: GprEventKind) -> Option<Milestone> {
    use GprEventKind as K;
    Some(match kind {
        K::Queued | K::Requeued => Milestone::Queued,
        K::Provisioned => Milestone::Provisioned,
        K::Progress25 => Milestone::Progress25,
        K::Progress50 => Milestone::Progress50,
        K::Progress75 => Milestone::Progress75,
        K::ExitWarning => Milestone::ExitWarning,
        // The end of every release (early, idle, expired, preempted): the nodes are back.
        K::Completed => Milestone::Released,
        K::Preempted | K::Evicted => Milestone::Preempted,
        K::EstimateChanged => Milestone::EstimateMoved,
        K::Failed => Milestone::Failed,
        K::ApprovalRequired | K::Approved | K::Rejected | K::ExtensionRequested | K::ExtensionRejected => Milestone::Approval,
        K::Created
        | K::PriorityChanged
        | K::Edited
        | K::ProvisioningStarted
        | K::PrecheckPassed
        | K::PrecheckFailed
        | K::Releasing
        | K::EarlyReleased
        | K::IdleReleased
        | K::Cancelled
        | K::NodeReplaced
        | K::Degraded
        | K::Extended => return None,
    })
}

/// Stored as a comma-separated list.
pub fn encode(milestones: &[Milestone]) -> String {
    milestones.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(",")
}

pub fn decode(stored: &str) -> Vec<Milestone> {
    use sea_orm::ActiveEnum;
    stored.split(',').filter_map(|m| Milestone::try_from_value(&m.to_owned()).ok()).collect()
}

/// The Kubernetes Event's reason (`GPRProvisioned`, …) and whether it is a warning.
pub fn kubernetes_reason(kind: GprEventKind) -> (String, bool) {
    let words: String = kind.as_str().split('_').map(|w| format!("{}{}", &w[..1], w[1..].to_lowercase())).collect();
    let warning =
        matches!(kind, GprEventKind::Preempted | GprEventKind::Evicted | GprEventKind::Failed | GprEventKind::Rejected | GprEventKind::ExitWarning);
    (format!("GPR{words}"), warning)
}

/// A few words for a milestone's headline ("is provisioned"); a release says why.
pub fn headline(kind: GprEventKind, reason: Option<ReleaseReason>) -> &'static str {
    use GprEventKind as K;
    match kind {
        K::Completed => match reason {
            Some(ReleaseReason::EarlyReleased) => "was released early; its nodes are back in the pool",
            Some(ReleaseReason::IdleTimeout) => "was released for being idle; its nodes are back in the pool",
            Some(ReleaseReason::Preempted) => "was preempted; its nodes are back in the pool",
            Some(ReleaseReason::NodeFailure) => "lost its nodes to a failure",
            Some(ReleaseReason::Admin) => "was released by an admin; its nodes are back in the pool",
            Some(ReleaseReason::Evicted) => "was evicted by an admin; its nodes are back in the pool",
            Some(ReleaseReason::Expired) | None => "has ended; its nodes are back in the pool",
        },
        K::Queued => "is queued",
        K::Requeued => "is back in the queue",
        K::Provisioned => "is provisioned",
        K::Progress25 => "is 25 % through its window",
        K::Progress50 => "is halfway through its window",
        K::Progress75 => "is 75 % through its window",
        K::ExitWarning => "ends soon",
        K::Preempted => "was preempted",
        K::Evicted => "was evicted by an admin; it goes back to the queue",
        K::EstimateChanged => "has a new start estimate",
        K::Failed => "failed",
        K::ApprovalRequired => "waits for an admin's approval",
        K::Approved => "was approved",
        K::Rejected => "was rejected",
        K::ExtensionRequested => "asks for an extension an admin must approve",
        K::ExtensionRejected => "had its extension refused",
        _ => "changed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sea_orm::Iterable;

    #[test]
    fn every_milestone_has_events_and_round_trips() {
        for milestone in Milestone::iter() {
            assert!(GprEventKind::iter().any(|k| of(k) == Some(milestone)), "{milestone:?} comes from no event");
        }
        let all: Vec<Milestone> = Milestone::iter().collect();
        assert_eq!(decode(&encode(&all)), all);
        assert_eq!(kubernetes_reason(GprEventKind::ExitWarning), ("GPRExitWarning".to_owned(), true));
        assert_eq!(kubernetes_reason(GprEventKind::Progress50).0, "GPRProgress50");
    }
}
