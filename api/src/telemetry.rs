//! The gateway's log: `EGS_LOG` (an `EnvFilter`, default `info`) to stderr, with the lines a
//! flood would repeat thinned out. sqlx warns once per slow pool acquire, from inside the
//! pool, with no throttle of its own (858 lines in a 15 s flood): kept here to one every
//! [`SLOW_ACQUIRE_EVERY`]; the gateway's own "pool exhausted" warning says how many it left out.

use egs_domain::log_throttle::Throttle;
use std::time::Duration;
use tracing_subscriber::filter::{self, EnvFilter};
use tracing_subscriber::prelude::*;

/// sqlx's target for its slow-acquire warning.
const SLOW_ACQUIRE_TARGET: &str = "sqlx::pool::acquire";
/// At most one of sqlx's slow-acquire warnings this often.
pub const SLOW_ACQUIRE_EVERY: Duration = Duration::from_secs(10);

/// A filter that lets through one sqlx slow-acquire event per `throttle` interval and every
/// other event.
pub fn thinned<S: tracing::Subscriber>(throttle: &'static Throttle) -> impl tracing_subscriber::layer::Filter<S> {
    filter::dynamic_filter_fn(move |meta, _| meta.target() != SLOW_ACQUIRE_TARGET || !meta.is_event() || throttle.admit().is_some())
}

/// Installs the log for `egs` (every command).
pub fn init() {
    static SLOW_ACQUIRES: Throttle = Throttle::new(SLOW_ACQUIRE_EVERY);
    let levels = EnvFilter::try_from_env("EGS_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let log = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_filter(levels).with_filter(thinned(&SLOW_ACQUIRES));
    tracing_subscriber::registry().with(log).init();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Lines {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("lock").extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_flood_of_slow_acquire_warnings_is_one_line_and_other_lines_pass() {
        static THROTTLE: Throttle = Throttle::new(Duration::from_secs(3600));
        let lines = Lines::default();
        let writer = lines.clone();
        let log = tracing_subscriber::fmt::layer().with_writer(move || writer.clone()).with_ansi(false).with_filter(thinned(&THROTTLE));
        let subscriber = tracing_subscriber::registry().with(log);
        tracing::subscriber::with_default(subscriber, || {
            for _ in 0..858 {
                tracing::warn!(target: "sqlx::pool::acquire", "acquired connection, but time to acquire exceeded slow threshold");
            }
            for n in 0..3 {
                tracing::warn!(target: "egs_domain::lifecycle", n, "a tick failed");
            }
        });
        let text = String::from_utf8(lines.0.lock().expect("lock").clone()).expect("utf-8");
        assert_eq!(text.matches("slow threshold").count(), 1, "{text}");
        assert_eq!(text.matches("a tick failed").count(), 3, "{text}");
    }
}
