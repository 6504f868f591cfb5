//! Sample validation, liveness, access and ranking, without a database.

use super::access::*;
use super::ingest::*;
use super::sample::{Sample, Values};
use super::store::{Allocation, Holder};
use super::summary::*;
use crate::auth::Visible;
use crate::error::{Error, Result};
use crate::inventory::liveness::*;
use chrono::{DateTime, Utc};
use egs_entities::{Health, gpu, node};
use std::sync::Arc;

fn node() -> node::Model {
    let now = Utc::now();
    node::Model {
        id: 1,
        cluster_id: 1,
        name: "n1".into(),
        instance_type: "p5".into(),
        gpu_shape: "H100".into(),
        gpus_per_node: 1,
        zone: None,
        gpu_memory_mib: 81_559,
        health: Health::Healthy,
        state: egs_entities::NodeState::Available,
        allocated_gpr_id: None,
        power_threshold_watts: None,
        temperature_threshold_celsius: None,
        driver_version: None,
        cuda_version: None,
        rdma: false,
        last_heartbeat_at: None,
        cordoned_at: None,
        cordon_reason: None,
        cordoned_by: None,
        created_at: now,
        updated_at: now,
    }
}

fn gpu(id: i64, sample: Option<(f64, f64, f64)>) -> gpu::Model {
    let now = Utc::now();
    gpu::Model {
        id,
        node_id: 1,
        uuid: format!("GPU-{id}"),
        gpu_index: id as i32,
        model: "H100".into(),
        memory_mib: 81_559,
        mig_enabled: false,
        last_sample_at: sample.map(|_| now),
        last_busy_at: None,
        created_at: now,
        updated_at: now,
        latest_util: sample.map(|s| s.0),
        latest_mem_util: sample.map(|_| 10.0),
        latest_mem_used_mib: sample.map(|_| 1000.0),
        latest_temperature_c: sample.map(|s| s.1),
        latest_power_w: sample.map(|s| s.2),
        latest_sm_clock_mhz: sample.map(|_| 1980.0),
        latest_xid_errors: None,
        latest_ecc_corrected: None,
        latest_ecc_uncorrected: None,
    }
}

fn report(uuid: &str, timestamp: DateTime<Utc>) -> SampleReport {
    SampleReport {
        uuid: uuid.into(),
        timestamp,
        util: 50.0,
        mem_util: 20.0,
        mem_used_mib: 40_000.0,
        temperature: 60.0,
        power: 400.0,
        sm_clock_mhz: 1980.0,
        xid_errors: Vec::new(),
        ecc_corrected: Some(0),
        ecc_uncorrected: None,
    }
}

fn fields(error: Error) -> Vec<String> {
    match error {
        Error::User(errors) => errors.into_iter().map(|e| e.field.join(".")).collect(),
        other => panic!("expected user errors, got {other:?}"),
    }
}

#[test]
fn every_bad_field_is_named_and_nothing_passes() {
    let now = Utc::now();
    let gpus = [gpu(1, None)];
    let ok = report("GPU-1", now);
    assert_eq!(check_samples(&node(), &gpus, std::slice::from_ref(&ok), now).expect("valid").len(), 1);
    let bad = vec![
        ok.clone(),
        SampleReport { util: 101.0, temperature: f64::NAN, ..ok.clone() },
        SampleReport { uuid: "GPU-of-another-node".into(), ..ok.clone() },
        SampleReport { timestamp: now + chrono::Duration::seconds(120), ..ok.clone() },
        SampleReport { timestamp: now - chrono::Duration::hours(25), ..ok.clone() },
        SampleReport { mem_used_mib: 200_000.0, power: -1.0, xid_errors: vec![0], ecc_uncorrected: Some(-2), ..ok.clone() },
    ];
    assert_eq!(
        fields(check_samples(&node(), &gpus, &bad, now).expect_err("invalid")),
        vec![
            "input.samples.1.util",
            "input.samples.1.temperature",
            "input.samples.2.uuid",
            "input.samples.3.timestamp",
            "input.samples.4.timestamp",
            "input.samples.5.memUsedMib",
            "input.samples.5.power",
            "input.samples.5.xidErrors",
            "input.samples.5.eccUncorrected",
        ]
    );
    let flood: Vec<SampleReport> = (0..200).map(|_| SampleReport { util: -1.0, ..ok.clone() }).collect();
    let listed = fields(check_samples(&node(), &gpus, &flood, now).expect_err("invalid"));
    assert_eq!(listed.len(), MAX_LISTED_ERRORS + 1, "the list is bounded");
}

#[test]
fn a_silent_agent_makes_a_healthy_node_stale_but_not_an_unhealthy_one() {
    let now = Utc::now();
    let mut n = node();
    assert_eq!(effective_health(&n, now), Health::Healthy, "no agent yet: as reported");
    n.last_heartbeat_at = Some(now - chrono::Duration::seconds(5));
    assert_eq!(effective_health(&n, now), Health::Healthy);
    n.last_heartbeat_at = Some(now - chrono::Duration::seconds(STALE_AFTER_SECS));
    assert_eq!(effective_health(&n, now), Health::Stale);
    n.health = Health::Unhealthy;
    assert_eq!(effective_health(&n, now), Health::Unhealthy);
}

#[test]
fn windows_pick_a_ring_and_refuse_what_history_does_not_hold() {
    let now = Utc::now();
    let t = now.timestamp();
    assert_eq!(window(now, None, None, None).ok(), Some(Window { from: t - 600, to: t + 60, step: 1 }));
    let hour = now - chrono::Duration::hours(1);
    assert_eq!(window(now, Some(hour), None, None).ok(), Some(Window { from: t - 3600, to: t + 60, step: 60 }));
    let field = |r: Result<Window>| fields(r.expect_err("refused"));
    assert_eq!(field(window(now, Some(now), Some(hour), None)), vec!["input.from"]);
    assert_eq!(field(window(now, Some(hour), None, Some(5))), vec!["input.from"], "1 s history is 10 minutes deep");
    assert_eq!(field(window(now, None, None, Some(90))), vec!["input.step"]);
    assert_eq!(field(window(now, None, None, Some(0))), vec!["input.step"]);
    assert_eq!(field(window(now, Some(now - chrono::Duration::hours(30)), None, Some(60))), vec!["input.from", "input.from"]);
}

#[test]
fn live_samples_reach_only_the_holding_slice_and_only_from_its_assignment() {
    let t = 1_800_000_000;
    let allocation = Allocation::from([(1, Holder { gpr_id: 10, slice_id: 100, since: t })]);
    let at = |node_id: i64, gpu_id: i64, at: i64| Sample {
        gpu_id,
        uuid: Arc::from("GPU"),
        node_id,
        at,
        values: Values::default(),
        sm_clock_mhz: 0.0,
        xid_errors: Vec::new(),
        ecc_corrected: None,
        ecc_uncorrected: None,
    };
    let member = Visible::Only(vec![100]);
    let outsider = Visible::Only(vec![200]);
    for scope in [Scope::Gpu(5), Scope::Node(1), Scope::Gpr(10), Scope::Slice(100)] {
        assert!(live_wanted(scope, &member, &allocation, &at(1, 5, t)), "{scope:?}");
        assert!(!live_wanted(scope, &member, &allocation, &at(1, 5, t - 1)), "{scope:?}: the previous holder's sample");
        assert!(!live_wanted(scope, &outsider, &allocation, &at(1, 5, t)), "{scope:?}");
    }
    assert!(!live_wanted(Scope::Gpr(10), &member, &allocation, &at(2, 6, t)), "a node the GPR does not hold");
    assert!(live_wanted(Scope::Node(2), &Visible::All, &allocation, &at(2, 6, t - 99)), "admins see free nodes too");
    let since = DateTime::from_timestamp(t, 0);
    assert!(Access::of(allocation.get(&1).copied(), true).allows(since));
    assert!(!Access::of(allocation.get(&1).copied(), false).allows(since));
    assert!(!Access::of(None, true).allows(since));
}

#[test]
fn hot_spots_come_first_and_unreadable_gpus_last() {
    let mut gpus = vec![gpu(1, Some((10.0, 50.0, 100.0))), gpu(2, None), gpu(3, Some((90.0, 85.0, 700.0))), gpu(4, Some((99.0, 95.0, 690.0)))];
    rank(&mut gpus, Rank::HotSpots, |g| g.id != 4);
    assert_eq!(gpus.iter().map(|g| g.id).collect::<Vec<_>>(), vec![3, 1, 2, 4]);
    rank(&mut gpus, Rank::Idlest, |_| true);
    assert_eq!(gpus.iter().map(|g| g.id).collect::<Vec<_>>(), vec![1, 3, 4, 2]);
    let summary = summarize(gpus);
    assert_eq!((summary.gpus, summary.reporting, summary.idle), (4, 3, 0));
    assert_eq!(summary.hottest.map(|g| g.id), Some(4));
    assert_eq!(summary.highest_power.map(|g| g.id), Some(3));
    assert!((summary.avg_util.unwrap_or_default() - 199.0 / 3.0).abs() < 1e-9);
}
