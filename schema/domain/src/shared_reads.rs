//! Cache misses that share their reads under load.
//!
//! When a fleet's agents all arrive at once (a gateway restarted, a deploy rolled, a network
//! healed), every one of thousands of requests misses the token cache and the node cache in
//! the same second. Read one by one, that is a few statements per request; they queue for the
//! connection pool, time out there (`SERVICE_UNAVAILABLE`) and, having failed, fill no cache,
//! so the same storm comes back the next second and the gateway never recovers (the
//! `live_load` bench at 3,333 agents: every report failing for as long as it ran).
//!
//! A [`SharedReads`] runs one read at a time. A miss first says which key it waits for, then
//! waits for its turn; the read that has the turn takes along the keys others are waiting for,
//! up to a batch. So under load one statement serves hundreds of misses and the number of
//! reads follows the database's speed, not the request rate, while a lone miss still reads at
//! once. (With four reads at a time, misses arriving a little apart each found a turn free and
//! read alone: 100 agents' first reports cost 213 statements on PostgreSQL, against 20 with
//! one.)
//!
//! Correctness stays with the caller, who knows its cache: when its turn comes, a miss decides
//! whether what another read brought will do (a token record no revocation overtook; a node
//! read after the report that missed was refused on the copy kept before) and otherwise reads
//! its own key, which [`Turn::claim`] always includes.

use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::sync::Mutex;
use tokio::sync::{Semaphore, SemaphorePermit};

pub struct SharedReads<K> {
    /// One permit: the turn.
    turn: Semaphore,
    /// Keys misses wait for, with how many wait for each.
    waiting: Mutex<HashMap<K, usize>>,
}

impl<K: Eq + Hash + Clone> Default for SharedReads<K> {
    fn default() -> Self {
        Self { turn: Semaphore::new(1), waiting: Mutex::new(HashMap::new()) }
    }
}

impl<K: Eq + Hash + Clone> SharedReads<K> {
    fn waiting(&self) -> std::sync::MutexGuard<'_, HashMap<K, usize>> {
        self.waiting.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits for the turn to read `key`; meanwhile, the read that has the turn may take `key`
    /// along.
    pub async fn turn(&self, key: K) -> Turn<'_, K> {
        *self.waiting().entry(key.clone()).or_default() += 1;
        // The guard undoes the registration however the wait ends (a dropped request).
        let mut turn = Turn { reads: self, key, _permit: None };
        turn._permit = Some(self.turn.acquire().await.expect("the semaphore is never closed"));
        turn
    }

    /// Waits until `misses` wait in all (tests: spawned waiters have registered).
    #[cfg(test)]
    async fn until_waiting(&self, misses: usize) {
        while self.waiting().values().sum::<usize>() < misses {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
    }
}

/// One miss's turn to read; dropping it ends the turn.
pub struct Turn<'a, K: Eq + Hash + Clone> {
    reads: &'a SharedReads<K>,
    key: K,
    _permit: Option<SemaphorePermit<'a>>,
}

impl<K: Eq + Hash + Clone> Turn<'_, K> {
    /// The keys this turn's read should read: its own first (always: what an earlier read
    /// brought may not do for it), then up to `limit - 1` others that misses wait for, except
    /// those `cached` says the cache holds now, then others from `also` (say, cache entries
    /// worth reading again early).
    ///
    /// A miss whose key an earlier read brought stays waiting until its turn comes round, so
    /// without `cached` most of a storm's waiting keys would already be in the cache, and each
    /// read would take mostly those: at 3,333 agents arriving at once, one read of 500 tokens
    /// after another, for 30 s, each answering a handful of the misses still waiting.
    pub fn claim(&self, limit: usize, also: impl IntoIterator<Item = K>, cached: impl Fn(&K) -> bool) -> Vec<K> {
        let waiting = self.reads.waiting();
        let mut claimed = vec![self.key.clone()];
        let mut taken: HashSet<K> = HashSet::from([self.key.clone()]);
        for key in waiting.keys().filter(|key| !cached(key)).cloned().chain(also) {
            if claimed.len() >= limit {
                break;
            }
            if taken.insert(key.clone()) {
                claimed.push(key);
            }
        }
        claimed
    }
}

impl<K: Eq + Hash + Clone> Drop for Turn<'_, K> {
    fn drop(&mut self) {
        let mut waiting = self.reads.waiting();
        if let Some(count) = waiting.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                waiting.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    fn sorted(keys: &[&'static str]) -> Vec<&'static str> {
        let mut keys = keys.to_vec();
        keys[1..].sort();
        keys
    }

    #[tokio::test]
    async fn a_turn_takes_along_what_others_wait_for_up_to_the_limit() {
        let coalescer = Arc::new(SharedReads::default());
        let first = coalescer.turn("a").await;
        let waiters: Vec<_> = ["b", "c", "a"]
            .into_iter()
            .map(|key| {
                let coalescer = coalescer.clone();
                tokio::spawn(async move { coalescer.turn(key).await.claim(10, [], |_| false) })
            })
            .collect();
        coalescer.until_waiting(4).await;
        // Its own key first, then what the others wait for (its own once), then the extras.
        assert_eq!(sorted(&first.claim(10, ["x"], |_| false)), ["a", "b", "c", "x"]);
        drop(first);
        // The waiters ran one at a time after it; the first of them took the others along.
        let mut claims = Vec::new();
        for waiter in waiters {
            claims.push(sorted(&waiter.await.expect("a waiter")));
        }
        assert!(claims.iter().any(|c| c.len() == 3), "{claims:?}");
        let limited = coalescer.turn("z").await;
        assert_eq!(limited.claim(2, ["x", "y"], |_| false), ["z", "x"], "the limit holds");
    }

    #[tokio::test]
    async fn keys_the_cache_holds_are_left_to_their_misses() {
        let coalescer = Arc::new(SharedReads::default());
        let first = coalescer.turn("a").await;
        let waiters: Vec<_> = ["b", "c"]
            .into_iter()
            .map(|key| {
                let coalescer = coalescer.clone();
                tokio::spawn(async move { drop(coalescer.turn(key).await) })
            })
            .collect();
        coalescer.until_waiting(3).await;
        // `b` came meanwhile: its miss takes it from the cache; `a` is read, being this turn's.
        assert_eq!(first.claim(10, [], |key| *key == "b" || *key == "a"), ["a", "c"]);
        drop(first);
        for waiter in waiters {
            waiter.await.expect("a waiter");
        }
    }

    #[tokio::test]
    async fn a_wait_given_up_leaves_nothing_behind() {
        let coalescer = SharedReads::default();
        let first = coalescer.turn("a").await;
        assert!(tokio::time::timeout(Duration::from_millis(20), coalescer.turn("gone")).await.is_err());
        assert_eq!(first.claim(10, [], |_| false), ["a"], "nobody waits for `gone` any more");
    }
}
