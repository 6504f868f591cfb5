//! Two weeks of finished GPRs for the demo, so the usage reports and the dashboard's chart have
//! history to show on a fresh start: stored as the lifecycle stores them (the GPR, and its
//! events at the times they happened), from a fixed pattern rather than chance.

use chrono::{DateTime, Duration, Utc};
use egs_entities::{ApprovalState, GprEventKind, GprPhase, IdList, Labels, ReleaseReason, gpr, gpr_event};
use sea_orm::{ActiveModelTrait, DatabaseConnection, EntityTrait, Set};
use std::collections::BTreeMap;

/// One past GPR of a slice.
pub struct Past<'a> {
    pub slice_id: i64,
    pub requester_id: i64,
    pub requester: &'a str,
    pub cluster_id: i64,
    pub shape: &'a str,
    pub instance_type: &'a str,
    pub priority: i32,
}

/// Days of history the demo starts with.
pub const DAYS: i64 = 14;

/// Stores `DAYS` days of finished GPRs for each of `who`, ending before `now`.
pub async fn seed(db: &DatabaseConnection, who: &[Past<'_>], now: DateTime<Utc>) -> Result<usize, sea_orm::DbErr> {
    let mut stored = 0;
    for day in 1..=DAYS {
        for (i, p) in who.iter().enumerate() {
            // A varied but fixed pattern: asked in the morning or the afternoon, waits from
            // minutes to hours, 1–3 nodes, some released early.
            let n = day * 7 + i as i64 * 3;
            let asked = now - Duration::days(day) + Duration::hours(8 + (n % 9));
            let waited = Duration::minutes([2, 10, 35, 80, 150, 5][(n % 6) as usize]);
            let window = Duration::hours([2, 4, 6, 3][(n % 4) as usize]);
            let early = n % 3 == 0;
            let used = if early { window / 2 } else { window };
            let nodes = 1 + (n % 3) as i32;
            let started = asked + waited;
            let released = started + used;
            let name = format!("history-{}-d{day}", p.requester);
            let g = gpr::ActiveModel {
                slice_id: Set(p.slice_id),
                name: Set(name),
                requester_id: Set(Some(p.requester_id)),
                node_count: Set(nodes),
                gpus_per_node: Set(None),
                min_gpu_memory_mib: Set(None),
                gpu_shape: Set(Some(p.shape.into())),
                instance_type: Set(None),
                preferred_cluster_ids: Set(IdList::default()),
                priority: Set(p.priority),
                duration_secs: Set(window.num_seconds()),
                idle_timeout_secs: Set(None),
                preemptible: Set(true),
                requeue_on_failure: Set(false),
                earliest_start_at: Set(None),
                labels: Set(Labels(BTreeMap::from([("team".to_owned(), "demo-history".to_owned())]))),
                phase: Set(GprPhase::Completed),
                reason: Set(None),
                approval: Set(ApprovalState::NotRequired),
                approval_reason: Set(None),
                queue_position: Set(None),
                start_no_later_than: Set(None),
                estimated_start_at: Set(None),
                assigned_cluster_id: Set(Some(p.cluster_id)),
                assigned_instance_type: Set(Some(p.instance_type.into())),
                assigned_gpu_shape: Set(Some(p.shape.into())),
                provisioned_at: Set(Some(started)),
                exit_at: Set(Some(started + window)),
                completed_at: Set(Some(released + Duration::minutes(1))),
                release_reason: Set(Some(if early { ReleaseReason::EarlyReleased } else { ReleaseReason::Expired })),
                preempted_by_id: Set(None),
                milestones_done: Set(0),
                version: Set(1),
                source_uid: Set(None),
                source_ref: Set(None),
                template_id: Set(None),
                workload: Set(None),
                created_at: Set(asked),
                updated_at: Set(released + Duration::minutes(1)),
                ..Default::default()
            }
            .insert(db)
            .await?;
            let mut events = vec![
                (GprEventKind::Created, asked, format!("{} asked for {nodes} node(s)", p.requester)),
                (GprEventKind::Queued, asked, "queued".to_owned()),
                (GprEventKind::ProvisioningStarted, started, "provisioning".to_owned()),
                (GprEventKind::Provisioned, started, "the nodes are the slice's".to_owned()),
            ];
            if early {
                events.push((GprEventKind::EarlyReleased, released, format!("early-released by {}", p.requester)));
            }
            events.push((GprEventKind::Releasing, released, "releasing its nodes".to_owned()));
            events.push((GprEventKind::Completed, released + Duration::minutes(1), "the nodes are back in the pool".to_owned()));
            let rows = events.into_iter().map(|(kind, at, message)| gpr_event::ActiveModel {
                gpr_id: Set(g.id),
                slice_id: Set(g.slice_id),
                kind: Set(kind),
                message: Set(message),
                actor: Set("system".into()),
                created_at: Set(at),
                ..Default::default()
            });
            gpr_event::Entity::insert_many(rows).exec_without_returning(db).await?;
            stored += 1;
        }
    }
    Ok(stored)
}
