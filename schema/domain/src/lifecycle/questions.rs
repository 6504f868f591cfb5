//! Planning questions: "Get wait time" and how far a window may grow. Each one plans the whole
//! scheduler core (an extension's room plans it a dozen times more), so they are what a user
//! could flood a replica with. Three things keep that bounded:
//!
//! - one planned copy is shared by every question asked at about the same moment (the aliases
//!   of one request, concurrent requests): it is reused while nothing was stored since and it
//!   is under [`SHARE_FOR`] old, and a question that waited for a plan in progress takes that
//!   plan; so a flood costs one plan per change, not one per question;
//! - the copy comes from the leader's scheduler, or on a follower from a shadow driver fed
//!   the rows that changed since its last look (as the leader's is): never a whole-database
//!   load per question;
//! - the CPU work runs off the async workers, at most [`Questions::cpu`] at once per replica,
//!   and a user (or token) may have at most [`MAX_PER_USER`] questions in flight; past that
//!   they are refused with `RATE_LIMITED`, and other users' requests go on.

use super::driver::Driver;
use crate::auth::Principal;
use crate::error::{Error, ErrorCode, Result, UserError};
use chrono::{DateTime, Utc};
use egs_scheduler::{Config, Scheduler};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// A planned copy is shared for at most this long (and only while nothing was stored).
pub const SHARE_FOR: Duration = Duration::from_secs(1);
/// Planning questions one user (or agent token) may have in flight at once, on one replica:
/// what one request may ask (its aliases run together), so a second request waits its turn.
pub const MAX_PER_USER: usize = MAX_PLANNING_QUESTIONS;
/// Most planning questions one request may ask (aliases and spreads counted; the GraphQL
/// gate refuses more).
pub const MAX_PLANNING_QUESTIONS: usize = 4;
/// How long a question waits for a free planner before it is refused.
const CPU_WAIT: Duration = Duration::from_secs(10);

struct Planned {
    /// The change count it was planned at.
    generation: u64,
    /// The scheduler time it was planned for.
    now: i64,
    /// When the planning began.
    started: Instant,
    core: Arc<Scheduler>,
}

pub struct Questions {
    /// Bumped whenever something may have been stored ([`super::SchedulerHandle::wake`]) and
    /// after every tick: a copy planned before is not shared after.
    generation: AtomicU64,
    latest: std::sync::Mutex<Option<Planned>>,
    /// One plan at a time: the others wait for it and share it.
    flight: tokio::sync::Mutex<()>,
    /// A follower's (or a busy leader's) own scheduler, fed from storage.
    shadow: tokio::sync::Mutex<Option<Driver>>,
    /// Planners this replica runs at once.
    cpu: Arc<Semaphore>,
    /// Questions in flight, by whom.
    asking: std::sync::Mutex<HashMap<Principal, usize>>,
}

/// A question's place: counted against its asker until dropped.
pub struct Seat<'a> {
    questions: &'a Questions,
    who: Principal,
}

impl Drop for Seat<'_> {
    fn drop(&mut self) {
        let mut asking = self.questions.asking.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = asking.get_mut(&self.who) {
            *count -= 1;
            if *count == 0 {
                asking.remove(&self.who);
            }
        }
    }
}

fn busy(message: String) -> Error {
    Error::User(vec![UserError { field: Vec::new(), message, code: ErrorCode::RateLimited }])
}

impl Questions {
    pub fn new() -> Self {
        // Half the cores: the other half keeps answering everything else.
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Self::with_planners((cores / 2).max(1))
    }

    pub fn with_planners(planners: usize) -> Self {
        Self {
            generation: AtomicU64::new(0),
            latest: std::sync::Mutex::new(None),
            flight: tokio::sync::Mutex::new(()),
            shadow: tokio::sync::Mutex::new(None),
            cpu: Arc::new(Semaphore::new(planners.max(1))),
            asking: std::sync::Mutex::new(HashMap::new()),
        }
    }

    /// Something may have been stored: plans from before are not shared.
    pub fn changed(&self) {
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// A seat for one question of `who`; refused past [`MAX_PER_USER`].
    pub fn seat(&self, who: Principal) -> Result<Seat<'_>> {
        let mut asking = self.asking.lock().unwrap_or_else(|p| p.into_inner());
        let count = asking.entry(who).or_default();
        if *count >= MAX_PER_USER {
            return Err(busy(format!(
                "you already have {MAX_PER_USER} planning questions (wait times, extension room) being answered; ask again when they are"
            )));
        }
        *count += 1;
        Ok(Seat { questions: self, who })
    }

    /// The shared copy, when one planned for about `now` since the last change is at hand;
    /// or one whose planning began after `asked` (a question that waited for it).
    fn shared(&self, now: i64, asked: Option<Instant>) -> Option<Arc<Scheduler>> {
        let latest = self.latest.lock().unwrap_or_else(|p| p.into_inner());
        let planned = latest.as_ref()?;
        let close = (planned.now - now).abs() <= SHARE_FOR.as_secs() as i64;
        let fresh = planned.generation == self.generation.load(Ordering::Acquire) && planned.started.elapsed() < SHARE_FOR;
        let after = asked.is_some_and(|asked| planned.started >= asked);
        (close && (fresh || after)).then(|| planned.core.clone())
    }

    /// A planned copy for `now`: shared when it may be, else planned (one at a time, off the
    /// async workers) from `current`, the scheduler as it stands.
    pub async fn planned(&self, now: DateTime<Utc>, current: impl Future<Output = Result<Scheduler>>) -> Result<Arc<Scheduler>> {
        let t = now.timestamp();
        if let Some(core) = self.shared(t, None) {
            return Ok(core);
        }
        let asked = Instant::now();
        let _flight = self.flight.lock().await;
        if let Some(core) = self.shared(t, Some(asked)) {
            return Ok(core);
        }
        let generation = self.generation.load(Ordering::Acquire);
        let started = Instant::now();
        let core = Arc::new(self.plan(current.await?, t).await?);
        *self.latest.lock().unwrap_or_else(|p| p.into_inner()) = Some(Planned { generation, now: t, started, core: core.clone() });
        Ok(core)
    }

    /// `core` planned at time `t`, off the async workers (see [`Self::run`]).
    pub async fn plan(&self, mut core: Scheduler, t: i64) -> Result<Scheduler> {
        self.run(move || {
            core.plan(t);
            core
        })
        .await
    }

    /// Runs `work` (planning) on a blocking thread once one of this replica's planners is free.
    pub async fn run<T: Send + 'static>(&self, work: impl FnOnce() -> T + Send + 'static) -> Result<T> {
        let permit = match tokio::time::timeout(CPU_WAIT, self.cpu.clone().acquire_owned()).await {
            Ok(Ok(permit)) => permit,
            _ => return Err(busy("every planner of this replica is busy; retry in a few seconds".into())),
        };
        let answer = tokio::task::spawn_blocking(move || {
            let answer = work();
            drop(permit);
            answer
        })
        .await
        .map_err(|e| Error::Internal(anyhow::anyhow!("a planning question failed: {e}")))?;
        Ok(answer)
    }

    /// The scheduler as storage describes it, from the shadow driver: built once, then fed
    /// only what changed since its last look.
    pub async fn from_shadow<C>(&self, db: &C, now: DateTime<Utc>, config: &Config) -> Result<Scheduler>
    where
        C: sea_orm::ConnectionTrait + sea_orm::TransactionTrait,
    {
        let mut slot = self.shadow.lock().await;
        if let Some(driver) = slot.as_mut() {
            match driver.look(db, now, config).await {
                Ok(true) => {
                    // Nobody acts on a shadow's decisions: the leader makes its own.
                    driver.failures.clear();
                    return Ok(driver.core.clone());
                }
                Ok(false) => {}
                Err(error) => {
                    *slot = None;
                    return Err(error);
                }
            }
        }
        let driver = Driver::build(db, 0, now, config).await?;
        let core = driver.core.clone();
        *slot = Some(driver);
        Ok(core)
    }
}

impl Default for Questions {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn a_user_holds_at_most_one_requests_worth_of_questions_and_others_are_not_held_up() {
        let questions = Questions::with_planners(1);
        let alice = Principal::User(1);
        let seats: Vec<Seat<'_>> = (0..MAX_PER_USER).map(|_| questions.seat(alice).expect("a seat")).collect();
        let refused = questions.seat(alice).err().expect("one too many");
        assert_eq!(refused.code(), ErrorCode::RateLimited, "{}", refused.public_message());
        assert!(questions.seat(Principal::User(2)).is_ok(), "another user asks meanwhile");
        assert!(questions.seat(Principal::Token(1)).is_ok(), "an agent token counts on its own");
        drop(seats);
        assert!(questions.seat(alice).is_ok(), "answered questions give their seats back");
    }

    #[tokio::test]
    async fn questions_asked_together_share_one_plan_until_something_is_stored() {
        let questions = Arc::new(Questions::with_planners(1));
        let plans = Arc::new(AtomicUsize::new(0));
        let now = DateTime::from_timestamp(1_000_000, 0).expect("a time");
        let current = |plans: Arc<AtomicUsize>| async move {
            plans.fetch_add(1, Ordering::SeqCst);
            // As long as a real read of the scheduler: the others arrive meanwhile.
            tokio::time::sleep(Duration::from_millis(50)).await;
            Ok(Scheduler::new(Config::default()))
        };
        // Sixteen at once (aliases of one request, concurrent requests): one plan.
        let asked: Vec<_> = (0..16)
            .map(|_| {
                let (questions, plans) = (questions.clone(), plans.clone());
                tokio::spawn(async move { questions.planned(now, current(plans)).await.expect("planned") })
            })
            .collect();
        let mut copies = Vec::new();
        for one in asked {
            copies.push(one.await.expect("answered"));
        }
        assert_eq!(plans.load(Ordering::SeqCst), 1, "one plan for all");
        assert!(copies.iter().all(|c| Arc::ptr_eq(c, &copies[0])), "the same copy");
        // Asked again at once: still that copy.
        questions.planned(now, current(plans.clone())).await.expect("planned");
        assert_eq!(plans.load(Ordering::SeqCst), 1);
        // Something was stored: the next question plans afresh; so does one for a later time.
        questions.changed();
        questions.planned(now, current(plans.clone())).await.expect("planned");
        assert_eq!(plans.load(Ordering::SeqCst), 2);
        questions.planned(now + chrono::Duration::hours(1), current(plans.clone())).await.expect("planned");
        assert_eq!(plans.load(Ordering::SeqCst), 3);
    }
}
