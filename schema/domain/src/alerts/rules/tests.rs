use super::*;

const T0: i64 = 1_800_000_000;

fn at(s: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(T0 + s, 0).unwrap_or_default()
}

fn h100() -> Limits {
    Limits::resolve((None, None), (None, None), "NVIDIA-H100-80GB-HBM3")
}

fn reading(s: i64, temperature: f64, power: f64) -> Reading<'static> {
    Reading { at: at(s), temperature, power, xid_errors: &[], ecc_uncorrected: None }
}

fn kinds(decisions: &[Decision]) -> Vec<(&'static str, AlertKind)> {
    decisions
        .iter()
        .map(|d| match d {
            Decision::Raise { kind, .. } => ("raise", *kind),
            Decision::Clear { kind, .. } => ("clear", *kind),
            Decision::Recur { kind } => ("recur", *kind),
        })
        .collect()
}

#[test]
fn power_limits_come_from_the_model_name_variants_first() {
    assert_eq!(default_power_limit("NVIDIA-H100-80GB-HBM3"), Some(700.0));
    assert_eq!(default_power_limit("NVIDIA H100 PCIe"), Some(350.0));
    assert_eq!(default_power_limit("NVIDIA-H200"), Some(700.0));
    assert_eq!(default_power_limit("NVIDIA-A100-SXM4-80GB"), Some(400.0));
    assert_eq!(default_power_limit("NVIDIA-L40S"), Some(350.0));
    assert_eq!(default_power_limit("NVIDIA A10"), Some(150.0), "A10 is not an A100");
    assert_eq!(default_power_limit("nvidia-a10g"), Some(300.0));
    assert_eq!(default_power_limit("Radeon Instinct MI300X"), None);
}

#[test]
fn the_most_specific_threshold_wins() {
    let limits = Limits::resolve((None, Some(650.0)), (Some(80.0), Some(600.0)), "NVIDIA-H100-80GB-HBM3");
    assert_eq!((limits.temperature_celsius, limits.temperature_source), (80.0, Source::Shape));
    assert_eq!((limits.power_watts, limits.power_source), (Some(650.0), Source::Node));
    let defaults = h100();
    assert_eq!((defaults.temperature_celsius, defaults.power_watts), (87.0, Some(700.0)));
    assert_eq!(Limits::resolve((None, None), (None, None), "unknown").power_watts, None);
}

#[test]
fn temperature_raises_once_and_clears_only_under_the_band() {
    let mut state = GpuState::default();
    let limits = h100();
    assert!(evaluate_gpu(&mut state, &limits, None, &reading(0, 87.0, 300.0)).is_empty(), "at the threshold is not over it");
    let raised = evaluate_gpu(&mut state, &limits, None, &reading(1, 91.0, 300.0));
    assert_eq!(kinds(&raised), vec![("raise", AlertKind::OverTemperature)]);
    assert!(matches!(&raised[0], Decision::Raise { value: Some(v), threshold: Some(t), .. } if *v == 91.0 && *t == 87.0));
    assert!(evaluate_gpu(&mut state, &limits, None, &reading(2, 95.0, 300.0)).is_empty(), "still hot: no second alert");
    assert!(evaluate_gpu(&mut state, &limits, None, &reading(3, 84.0, 300.0)).is_empty(), "inside the band: stays open");
    assert!(evaluate_gpu(&mut state, &limits, None, &reading(4, 82.0, 300.0)).is_empty(), "at the clear level: stays open");
    let cleared = evaluate_gpu(&mut state, &limits, None, &reading(5, 81.0, 300.0));
    assert_eq!(kinds(&cleared), vec![("clear", AlertKind::OverTemperature)]);
    assert!(evaluate_gpu(&mut state, &limits, None, &reading(6, 86.0, 300.0)).is_empty(), "under the threshold again: nothing");
}

#[test]
fn power_uses_the_model_limit_with_a_margin_and_unknown_models_have_no_rule() {
    let mut state = GpuState::default();
    let limits = h100();
    assert_eq!(kinds(&evaluate_gpu(&mut state, &limits, None, &reading(0, 60.0, 720.0))), vec![("raise", AlertKind::OverPower)]);
    assert!(evaluate_gpu(&mut state, &limits, None, &reading(1, 60.0, 680.0)).is_empty(), "680 W is within 5 % of 700 W");
    assert_eq!(kinds(&evaluate_gpu(&mut state, &limits, None, &reading(2, 60.0, 600.0))), vec![("clear", AlertKind::OverPower)]);
    let unknown = Limits::resolve((None, None), (None, None), "mystery");
    assert!(evaluate_gpu(&mut GpuState::default(), &unknown, None, &reading(0, 60.0, 4000.0)).is_empty());
}

#[test]
fn xid_severity_follows_the_codes_and_clears_after_a_quiet_period() {
    let mut state = GpuState::default();
    let limits = h100();
    let xid = |s: i64, codes: &'static [i32]| Reading { xid_errors: codes, ..reading(s, 50.0, 300.0) };
    let warned = evaluate_gpu(&mut state, &limits, None, &xid(0, &[13]));
    assert!(matches!(&warned[..], [Decision::Raise { kind: AlertKind::XidError, severity: AlertSeverity::Warning, .. }]), "{warned:?}");
    assert_eq!(kinds(&evaluate_gpu(&mut state, &limits, None, &xid(10, &[31]))), vec![("recur", AlertKind::XidError)]);
    // A critical code supersedes the warning.
    let escalated = evaluate_gpu(&mut state, &limits, None, &xid(20, &[13, 79]));
    assert_eq!(kinds(&escalated), vec![("clear", AlertKind::XidError), ("raise", AlertKind::XidError)]);
    assert!(
        matches!(&escalated[1], Decision::Raise { severity: AlertSeverity::Critical, value: Some(v), detail, .. } if *v == 79.0 && detail.contains("fallen off the bus"))
    );
    assert_eq!(kinds(&evaluate_gpu(&mut state, &limits, None, &xid(30, &[13]))), vec![("recur", AlertKind::XidError)], "no downgrade");
    assert!(evaluate_gpu(&mut state, &limits, None, &reading(30 + XID_QUIET_SECS - 1, 50.0, 300.0)).is_empty());
    assert_eq!(kinds(&evaluate_gpu(&mut state, &limits, None, &reading(30 + XID_QUIET_SECS, 50.0, 300.0))), vec![("clear", AlertKind::XidError)]);
}

#[test]
fn only_a_rising_uncorrected_ecc_count_raises() {
    let limits = h100();
    let ecc = |s: i64, count: i64| Reading { ecc_uncorrected: Some(count), ..reading(s, 50.0, 300.0) };
    let mut state = GpuState { ecc_uncorrected: Some(2), ..GpuState::default() };
    assert!(evaluate_gpu(&mut state, &limits, None, &ecc(0, 2)).is_empty(), "an old count is old news");
    let raised = evaluate_gpu(&mut state, &limits, None, &ecc(1, 3));
    assert!(
        matches!(&raised[..], [Decision::Raise { kind: AlertKind::EccError, severity: AlertSeverity::Critical, value: Some(v), threshold: Some(b), .. }] if *v == 3.0 && *b == 2.0)
    );
    assert_eq!(kinds(&evaluate_gpu(&mut state, &limits, None, &ecc(2, 5))), vec![("recur", AlertKind::EccError)]);
    assert!(evaluate_gpu(&mut state, &limits, None, &ecc(3, 0)).is_empty(), "a counter reset is no error");
    assert_eq!(kinds(&evaluate_gpu(&mut state, &limits, None, &ecc(2 + ECC_QUIET_SECS, 0))), vec![("clear", AlertKind::EccError)]);
    let mut fresh = GpuState::default();
    assert_eq!(kinds(&evaluate_gpu(&mut fresh, &limits, None, &ecc(0, 1))), vec![("raise", AlertKind::EccError)], "first report with errors");
}

#[test]
fn a_node_changing_hands_closes_the_previous_holders_alerts_and_opens_its_own() {
    let limits = h100();
    let mut state = GpuState::default();
    evaluate_gpu(&mut state, &limits, Some(1), &reading(0, 95.0, 300.0));
    assert_eq!(state.over_temperature.map(|o| o.gpr_id), Some(Some(1)));
    let moved = evaluate_gpu(&mut state, &limits, Some(2), &reading(1, 95.0, 300.0));
    assert_eq!(kinds(&moved), vec![("clear", AlertKind::OverTemperature), ("raise", AlertKind::OverTemperature)]);
    assert_eq!(state.over_temperature.map(|o| o.gpr_id), Some(Some(2)));
    let released = evaluate_gpu(&mut state, &limits, None, &reading(2, 60.0, 300.0));
    assert_eq!(kinds(&released), vec![("clear", AlertKind::OverTemperature)], "cleared once, for the hand-over");
}

#[test]
fn a_silent_agent_raises_stale_and_reporting_clears_it() {
    let open = |gpr_id| Open { severity: AlertSeverity::Warning, gpr_id, last_seen: at(0) };
    assert!(node_staleness(at(100), None, 30, None, None).is_empty(), "never reported: no agent to miss");
    assert!(node_staleness(at(29), Some(at(0)), 30, None, None).is_empty());
    let raised = node_staleness(at(45), Some(at(0)), 30, None, None);
    assert!(
        matches!(&raised[..], [Decision::Raise { kind: AlertKind::NodeStale, severity: AlertSeverity::Warning, value: Some(v), detail, .. }] if *v == 45.0 && detail.contains("45s"))
    );
    let held = node_staleness(at(45), Some(at(0)), 30, None, Some(7));
    assert!(matches!(&held[..], [Decision::Raise { severity: AlertSeverity::Critical, .. }]), "a held node is critical");
    assert!(node_staleness(at(90), Some(at(0)), 30, Some(&open(None)), None).is_empty(), "raised once");
    assert_eq!(kinds(&node_staleness(at(91), Some(at(90)), 30, Some(&open(None)), None)), vec![("clear", AlertKind::NodeStale)]);
    assert_eq!(
        kinds(&node_staleness(at(90), Some(at(0)), 30, Some(&open(None)), Some(7))),
        vec![("clear", AlertKind::NodeStale), ("raise", AlertKind::NodeStale)]
    );
}

#[test]
fn an_idle_gpr_is_warned_before_its_release_and_cleared_when_busy() {
    let timeout = 1800;
    assert_eq!(gpr_idleness(at(3600), timeout, None, false), None, "no telemetry, no verdict");
    assert_eq!(gpr_idleness(at(1349), timeout, Some(at(0)), false), None);
    let raised = gpr_idleness(at(1350), timeout, Some(at(0)), false);
    assert!(
        matches!(&raised, Some(Decision::Raise { kind: AlertKind::GprIdle, value: Some(v), threshold: Some(t), .. }) if *v == 1350.0 && *t == 1800.0)
    );
    assert_eq!(gpr_idleness(at(1500), timeout, Some(at(0)), true), None, "raised once");
    assert!(matches!(gpr_idleness(at(1500), timeout, Some(at(1400)), true), Some(Decision::Clear { kind: AlertKind::GprIdle, .. })));
}

#[test]
fn under_use_is_a_time_weighted_mean_over_the_whole_period() {
    let at = |secs: i64| DateTime::<Utc>::from_timestamp(T0 + secs, 0).unwrap_or_default();
    let window: UtilisationWindow = [(at(0), 2.0), (at(1800), 30.0), (at(3000), 4.0)].into_iter().collect();
    assert!(gpr_underuse(at(3500), &window, 10.0, 3600, false).is_none(), "not an hour of samples yet");
    // Over 0–3600: 2 % for 30 min, 30 % for 20 min, 4 % for 10 min = 11.7 %.
    assert!(gpr_underuse(at(3600), &window, 10.0, 3600, false).is_none());
    match gpr_underuse(at(3600), &window, 15.0, 3600, false) {
        Some(Decision::Raise { kind: AlertKind::GprUnderused, value: Some(v), .. }) => assert!((v - 11.7).abs() < 0.05, "{v}"),
        other => panic!("{other:?}"),
    }
    // Later, only the last hour counts: 600–1800 at 2 %, 1800–3000 at 30 %, 3000–4200 at 4 % = 12 %.
    assert!(gpr_underuse(at(4200), &window, 15.0, 3600, true).is_none(), "still under 15 + 5");
    assert!(matches!(gpr_underuse(at(4200), &window, 7.0, 3600, true), Some(Decision::Clear { .. })), "12 % ≥ 7 + 5");
}
