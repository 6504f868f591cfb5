//! Bounds per user and hour on actions that cost someone else something.

/// Counts what each user does within the current hour (per replica), for bounds on actions
/// that cost someone else something: names that match no one, test messages.
pub struct HourlyCounter {
    max: u32,
    state: std::sync::Mutex<Option<(std::time::Instant, std::collections::HashMap<i64, u32>)>>,
}

impl HourlyCounter {
    pub const fn new(max: u32) -> Self {
        Self { max, state: std::sync::Mutex::new(None) }
    }

    /// Counts one; false once `user_id` is over the hour's bound.
    pub fn allow(&self, user_id: i64) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let now = std::time::Instant::now();
        let (since, counts) = state.get_or_insert_with(|| (now, Default::default()));
        if now.duration_since(*since) >= std::time::Duration::from_secs(3600) {
            *since = now;
            counts.clear();
        }
        let count = counts.entry(user_id).or_default();
        *count += 1;
        *count <= self.max
    }
}
