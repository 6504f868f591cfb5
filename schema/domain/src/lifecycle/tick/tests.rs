use super::{ADMITTED_NODES_PER_TICK, paced};
use std::collections::HashSet;

fn split(sizes: &[(i64, usize)], preemptors: &[i64]) -> (Vec<i64>, Vec<i64>) {
    let (now, later) = paced(sizes.to_vec(), |a| *a, &preemptors.iter().copied().collect::<HashSet<_>>());
    (now.into_iter().map(|a| a.0).collect(), later.into_iter().map(|a| a.0).collect())
}

#[test]
fn a_tick_stores_admissions_in_queue_order_until_its_nodes_are_handed_out() {
    let half = ADMITTED_NODES_PER_TICK / 2;
    assert_eq!(split(&[(1, half), (2, half), (3, 1)], &[]), (vec![1, 2], vec![3]));
    assert_eq!(split(&[(1, half + 50), (2, half + 50), (3, 1)], &[]), (vec![1], vec![2, 3]), "3 does not overtake 2");
    // Under the bound, everything goes at once.
    assert_eq!(split(&[(1, 10), (2, 10)], &[]), (vec![1, 2], vec![]));
}

#[test]
fn the_first_admission_and_every_preemptor_are_stored_whatever_their_size() {
    let huge = ADMITTED_NODES_PER_TICK * 3;
    assert_eq!(split(&[(1, huge), (2, 1)], &[]), (vec![1], vec![2]));
    assert_eq!(split(&[(1, huge), (2, 1), (3, 8)], &[3]), (vec![1, 3], vec![2]));
}
