//! What one user holds open on this replica: WebSocket connections and live operations. Each
//! is a [`Hold`] that gives its place back when dropped, so a connection or subscription that
//! ends in any way (completed, aborted, the socket cut) frees it.
//!
//! Counted per replica, in memory, like the cost budget: behind N replicas a user may hold N
//! times as much. Agent tokens belong to no user and count by token.

use egs_domain::auth::Principal;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The limits and what each principal holds now.
pub struct PerUser {
    max_connections: Option<usize>,
    max_operations: Option<usize>,
    held: Mutex<HashMap<Principal, Held>>,
}

#[derive(Default)]
struct Held {
    connections: usize,
    operations: usize,
}

#[derive(Clone, Copy)]
enum What {
    Connection,
    Operation,
}

/// One place held; given back on drop.
pub struct Hold {
    owner: Arc<PerUser>,
    who: Principal,
    what: What,
}

impl PerUser {
    /// `0` switches a limit off.
    pub fn new(max_connections: u32, max_operations: u32) -> Arc<Self> {
        let limit = |n: u32| (n > 0).then_some(n as usize);
        Arc::new(Self { max_connections: limit(max_connections), max_operations: limit(max_operations), held: Mutex::new(HashMap::new()) })
    }

    /// A WebSocket connection for `who`, or why not.
    pub fn connection(self: &Arc<Self>, who: Principal) -> Result<Hold, String> {
        self.take(who, What::Connection).map_err(|limit| format!("LIMIT_EXCEEDED: {limit} WebSocket connections open for this user"))
    }

    /// A live operation for `who`, or why not.
    pub fn operation(self: &Arc<Self>, who: Principal) -> Result<Hold, String> {
        self.take(who, What::Operation).map_err(|limit| {
            format!("this user already runs {limit} operations (subscriptions) at once on this server, the most allowed; complete one first")
        })
    }

    /// Takes a place, or says the limit that refused it.
    fn take(self: &Arc<Self>, who: Principal, what: What) -> Result<Hold, usize> {
        let mut held = self.held.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let entry = held.entry(who).or_default();
        let (count, limit) = match what {
            What::Connection => (&mut entry.connections, self.max_connections),
            What::Operation => (&mut entry.operations, self.max_operations),
        };
        if let Some(limit) = limit
            && *count >= limit
        {
            return Err(limit);
        }
        *count += 1;
        Ok(Hold { owner: self.clone(), who, what })
    }

    #[cfg(test)]
    fn holding(&self, who: Principal) -> (usize, usize) {
        let held = self.held.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        held.get(&who).map_or((0, 0), |h| (h.connections, h.operations))
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        let mut held = self.owner.held.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(entry) = held.get_mut(&self.who) {
            match self.what {
                What::Connection => entry.connections = entry.connections.saturating_sub(1),
                What::Operation => entry.operations = entry.operations.saturating_sub(1),
            }
            // Nothing held: forget the principal, so the map holds only who is connected.
            if entry.connections == 0 && entry.operations == 0 {
                held.remove(&self.who);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_per_principal_and_come_back_when_dropped() {
        let limits = PerUser::new(2, 1);
        let (alice, bob) = (Principal::User(1), Principal::User(2));
        let first = limits.connection(alice).expect("first");
        let _second = limits.connection(alice).expect("second");
        let refused = limits.connection(alice).err().expect("a third is refused");
        assert!(refused.starts_with("LIMIT_EXCEEDED"), "{refused}");
        assert!(limits.connection(bob).is_ok(), "another user has their own places");
        assert!(limits.connection(Principal::Token(1)).is_ok(), "an agent token is not user 1");
        drop(first);
        let _third = limits.connection(alice).expect("a dropped connection gives its place back");

        let operation = limits.operation(alice).expect("one operation");
        assert!(limits.operation(alice).is_err(), "the second is refused");
        drop(operation);
        assert!(limits.operation(alice).is_ok());
        assert_eq!(limits.holding(bob), (0, 0), "bob's dropped connection is forgotten");

        let unlimited = PerUser::new(0, 0);
        let held: Vec<_> = (0..1000).map(|_| unlimited.operation(alice).expect("no limit")).collect();
        assert_eq!(unlimited.holding(alice), (0, 1000));
        drop(held);
        assert_eq!(unlimited.holding(alice), (0, 0));
    }
}
