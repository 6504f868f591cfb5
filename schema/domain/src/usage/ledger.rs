//! What a GPR's stored lifecycle events say it waited for and held, as spans of time, and
//! those spans cut into UTC days. Pure: the rollups feed it rows and store what it returns.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use egs_entities::{GprEventKind as Kind, gpr};

/// What a span of a GPR's life counts as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    /// Asking for GPUs: in the queue or waiting for an admin's approval.
    Waiting,
    /// Holding its nodes, from provisioning until the release began.
    Used,
    /// The window as booked: from provisioning to its planned end, however early it ended.
    Reserved,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    pub kind: SpanKind,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
}

/// A window that began: when, and how long the GPR had waited for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Start {
    pub at: DateTime<Utc>,
    pub waited_secs: i64,
}

#[derive(Debug, Default, PartialEq, Eq)]
pub struct Timeline {
    pub spans: Vec<Span>,
    pub starts: Vec<Start>,
}

/// The event kinds the ledger reads.
pub const KINDS: [Kind; 12] = [
    Kind::Provisioned,
    Kind::Releasing,
    Kind::EarlyReleased,
    Kind::IdleReleased,
    Kind::Preempted,
    Kind::Evicted,
    Kind::Completed,
    Kind::Failed,
    Kind::Requeued,
    Kind::Cancelled,
    Kind::Rejected,
    Kind::Created,
];

/// A GPR's spans and starts from its events (`KINDS`, oldest first), up to `now`.
///
/// A window's reservation runs to its planned end: for the GPR's current window, as long as
/// `provisioned_at..exit_at` (extensions included); for an earlier one it was evicted or
/// preempted from, the duration it asked for. Spans end at `now` at the latest: the rest is
/// counted when it has happened. Times are the events' (stored when each happened).
pub fn timeline(g: &gpr::Model, events: &[(Kind, DateTime<Utc>)], now: DateTime<Utc>) -> Timeline {
    let mut out = Timeline::default();
    let mut waiting_since = Some(g.created_at);
    let mut window: Option<DateTime<Utc>> = None;
    let push = |out: &mut Timeline, kind, from: DateTime<Utc>, to: DateTime<Utc>| {
        let to = to.min(now);
        if to > from {
            out.spans.push(Span { kind, from, to });
        }
    };
    // The GPR's current window is its last PROVISIONED (none after a requeue): its length, not
    // its times, comes from the row, whose times may be on another clock than the events'.
    let current = g.provisioned_at.and(events.iter().rposition(|&(kind, _)| kind == Kind::Provisioned));
    let length = |i: usize| match (current, g.provisioned_at, g.exit_at) {
        (Some(c), Some(start), Some(exit)) if c == i => exit - start,
        _ => Duration::seconds(g.duration_secs),
    };
    for (i, &(kind, at)) in events.iter().enumerate() {
        match kind {
            Kind::Provisioned => {
                if let Some(since) = waiting_since.take() {
                    push(&mut out, SpanKind::Waiting, since, at);
                    let asked_from = g.earliest_start_at.map_or(since, |e| e.max(since));
                    out.starts.push(Start { at, waited_secs: (at - asked_from).num_seconds().max(0) });
                }
                if window.is_none() {
                    window = Some(at);
                    push(&mut out, SpanKind::Reserved, at, at + length(i));
                }
            }
            Kind::Releasing | Kind::EarlyReleased | Kind::IdleReleased | Kind::Preempted | Kind::Evicted | Kind::Completed | Kind::Failed => {
                if let Some(start) = window.take() {
                    push(&mut out, SpanKind::Used, start, at);
                }
                if kind == Kind::Failed
                    && let Some(since) = waiting_since.take()
                {
                    push(&mut out, SpanKind::Waiting, since, at);
                }
            }
            Kind::Requeued => {
                waiting_since.get_or_insert(at);
            }
            Kind::Cancelled | Kind::Rejected => {
                if let Some(since) = waiting_since.take() {
                    push(&mut out, SpanKind::Waiting, since, at);
                }
            }
            _ => {}
        }
    }
    if let Some(since) = waiting_since.filter(|_| g.phase.is_pending()) {
        push(&mut out, SpanKind::Waiting, since, now);
    }
    if let Some(start) = window {
        push(&mut out, SpanKind::Used, start, now);
    }
    out
}

/// `[from, to)` cut at UTC midnights: each day it touches and the seconds it has there.
pub fn days(from: DateTime<Utc>, to: DateTime<Utc>) -> impl Iterator<Item = (NaiveDate, i64)> {
    let mut at = from;
    std::iter::from_fn(move || {
        if at >= to {
            return None;
        }
        let day = at.date_naive();
        let next = day_start(day.succ_opt()?).min(to);
        let secs = (next - at).num_seconds();
        at = next;
        Some((day, secs))
    })
}

/// Midnight UTC at the start of `day`.
pub fn day_start(day: NaiveDate) -> DateTime<Utc> {
    day.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc()
}

/// Which wait bucket a start falls in, as the `within_*` columns count them.
pub fn within(waited_secs: i64) -> [bool; 4] {
    [15 * 60, 3600, 4 * 3600, 24 * 3600].map(|limit| waited_secs <= limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use egs_entities::{ApprovalState, GprPhase, IdList, Labels};

    fn at(h: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 20, 0, 0, 0).single().expect("a time") + Duration::hours(h)
    }

    fn gpr(phase: GprPhase) -> gpr::Model {
        gpr::Model {
            id: 1,
            slice_id: 1,
            name: "g".into(),
            requester_id: Some(1),
            node_count: 2,
            gpus_per_node: None,
            min_gpu_memory_mib: None,
            gpu_shape: Some("H100".into()),
            instance_type: None,
            preferred_cluster_ids: IdList::default(),
            priority: 100,
            duration_secs: 10 * 3600,
            idle_timeout_secs: None,
            preemptible: false,
            requeue_on_failure: false,
            earliest_start_at: None,
            labels: Labels::default(),
            phase,
            reason: None,
            approval: ApprovalState::NotRequired,
            approval_reason: None,
            queue_position: None,
            start_no_later_than: None,
            estimated_start_at: None,
            start_p10_at: None,
            start_p90_at: None,
            fair_share_bonus: None,
            foreseen_at: None,
            foreseen_start_at: None,
            assigned_cluster_id: None,
            assigned_instance_type: None,
            assigned_gpu_shape: None,
            provisioned_at: None,
            exit_at: None,
            completed_at: None,
            release_reason: None,
            preempted_by_id: None,
            holding_since: None,
            holds_until: None,
            milestones_done: 0,
            extended_secs: 0,
            extension_requested_secs: None,
            workload: None,
            template_id: None,
            version: 1,
            source_uid: None,
            source_ref: None,
            created_at: at(0),
            updated_at: at(0),
        }
    }

    fn span(kind: SpanKind, from: i64, to: i64) -> Span {
        Span { kind, from: at(from), to: at(to) }
    }

    #[test]
    fn an_early_release_uses_less_than_it_reserved() {
        let mut g = gpr(GprPhase::Completed);
        g.provisioned_at = Some(at(2));
        g.exit_at = Some(at(14)); // extended by two hours
        let events = [(Kind::Created, at(0)), (Kind::Provisioned, at(2)), (Kind::EarlyReleased, at(5)), (Kind::Completed, at(6))];
        let t = timeline(&g, &events, at(30));
        assert_eq!(t.spans, vec![span(SpanKind::Waiting, 0, 2), span(SpanKind::Reserved, 2, 14), span(SpanKind::Used, 2, 5)]);
        assert_eq!(t.starts, vec![Start { at: at(2), waited_secs: 7200 }]);
    }

    #[test]
    fn an_evicted_window_is_counted_and_the_wait_starts_again() {
        let mut g = gpr(GprPhase::Provisioned);
        g.provisioned_at = Some(at(9));
        g.exit_at = Some(at(19));
        let events = [(Kind::Provisioned, at(1)), (Kind::Evicted, at(3)), (Kind::Requeued, at(4)), (Kind::Provisioned, at(9))];
        let t = timeline(&g, &events, at(12));
        assert_eq!(
            t.spans,
            vec![
                span(SpanKind::Waiting, 0, 1),
                // The evicted window's reservation is the 10 hours it asked for.
                span(SpanKind::Reserved, 1, 11),
                span(SpanKind::Used, 1, 3),
                span(SpanKind::Waiting, 4, 9),
                span(SpanKind::Reserved, 9, 12),
                span(SpanKind::Used, 9, 12),
            ]
        );
        assert_eq!(t.starts.iter().map(|s| s.waited_secs).collect::<Vec<_>>(), vec![3600, 5 * 3600]);
    }

    #[test]
    fn a_waiting_gpr_asks_until_now_and_a_cancelled_one_until_it_was_cancelled() {
        let t = timeline(&gpr(GprPhase::Queued), &[(Kind::Created, at(0))], at(5));
        assert_eq!(t.spans, vec![span(SpanKind::Waiting, 0, 5)]);
        assert!(t.starts.is_empty());
        let t = timeline(&gpr(GprPhase::Cancelled), &[(Kind::Cancelled, at(3))], at(5));
        assert_eq!(t.spans, vec![span(SpanKind::Waiting, 0, 3)]);
    }

    #[test]
    fn the_wait_counts_from_the_earliest_start_asked_for() {
        let mut g = gpr(GprPhase::Provisioned);
        g.earliest_start_at = Some(at(6));
        let t = timeline(&g, &[(Kind::Provisioned, at(7))], at(8));
        assert_eq!(t.starts, vec![Start { at: at(7), waited_secs: 3600 }]);
    }

    #[test]
    fn a_span_is_cut_at_midnights() {
        let cut: Vec<_> = days(at(20), at(50)).collect();
        let d = |n: u32| NaiveDate::from_ymd_opt(2026, 11, n).expect("a day");
        assert_eq!(cut, vec![(d(20), 4 * 3600), (d(21), 24 * 3600), (d(22), 2 * 3600)]);
        assert_eq!(days(at(3), at(3)).count(), 0);
    }

    #[test]
    fn wait_buckets_include_their_limit() {
        assert_eq!(within(900), [true, true, true, true]);
        assert_eq!(within(3601), [false, false, true, true]);
        assert_eq!(within(2 * 86400), [false; 4]);
    }
}
