use super::*;

#[test]
fn a_channel_hears_its_milestones_and_estimate_moves_past_its_threshold() {
    let chosen = [Milestone::Provisioned, Milestone::EstimateMoved];
    assert!(wants(&chosen, 30, Milestone::Provisioned, None));
    assert!(!wants(&chosen, 30, Milestone::Released, None), "not chosen");
    assert!(wants(&chosen, 30, Milestone::EstimateMoved, Some(45 * 60)), "45 minutes later");
    assert!(wants(&chosen, 30, Milestone::EstimateMoved, Some(-30 * 60)), "30 minutes earlier");
    assert!(!wants(&chosen, 30, Milestone::EstimateMoved, Some(29 * 60)), "under the threshold");
    assert!(!wants(&chosen, 30, Milestone::EstimateMoved, None), "a move from or to unknown has no size");
    assert!(!wants(&[Milestone::Provisioned], 30, Milestone::EstimateMoved, Some(3600)), "not chosen");
}

#[test]
fn retries_double_up_to_fifteen_minutes() {
    let config = NotifierConfig { first_retry: Duration::from_secs(10), ..NotifierConfig::default() };
    let delays: Vec<u64> = (1..=9).map(|attempts| retry_after(&config, attempts).as_secs()).collect();
    assert_eq!(delays, [10, 20, 40, 80, 160, 320, 640, 900, 900]);
}
