//! The pending queue: an order-statistic treap so that insert, remove, re-prioritise (remove +
//! insert), peek and position-of are all O(log n) — a `BTreeSet` cannot answer "position of"
//! without walking.

use super::{GprId, Time};
use std::cmp::Ordering;

/// Where a pending GPR stands: priority (higher first), then its slice's decayed recent use
/// (less first: fair share), then submission time (earlier first), then id (a total order).
#[derive(Clone, Copy, Debug)]
pub struct QueueKey {
    pub priority: i32,
    pub share: f64,
    pub submitted_at: Time,
    pub id: GprId,
}

impl Ord for QueueKey {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .priority
            .cmp(&self.priority)
            .then(self.share.total_cmp(&other.share))
            .then(self.submitted_at.cmp(&other.submitted_at))
            .then(self.id.cmp(&other.id))
    }
}

impl PartialOrd for QueueKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for QueueKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for QueueKey {}

const NIL: u32 = u32::MAX;

#[derive(Clone, Debug)]
struct Node {
    key: QueueKey,
    weight: u64,
    left: u32,
    right: u32,
    size: u32,
}

/// An ordered multiset of queue keys with ranks.
#[derive(Clone, Debug, Default)]
pub struct PendingQueue {
    nodes: Vec<Node>,
    free: Vec<u32>,
    root: Option<u32>,
    /// Deterministic weights (xorshift), so runs and replays are reproducible.
    seed: u64,
}

impl PendingQueue {
    pub fn len(&self) -> usize {
        self.root.map_or(0, |r| self.nodes[r as usize].size as usize)
    }

    pub fn is_empty(&self) -> bool {
        self.root.is_none()
    }

    fn size(&self, n: u32) -> u32 {
        if n == NIL { 0 } else { self.nodes[n as usize].size }
    }

    fn fix(&mut self, n: u32) {
        let (l, r) = (self.nodes[n as usize].left, self.nodes[n as usize].right);
        self.nodes[n as usize].size = 1 + self.size(l) + self.size(r);
    }

    fn next_weight(&mut self) -> u64 {
        self.seed = self.seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Splits `n` into keys `< key` and keys `>= key`.
    fn split(&mut self, n: u32, key: &QueueKey) -> (u32, u32) {
        if n == NIL {
            return (NIL, NIL);
        }
        if self.nodes[n as usize].key < *key {
            let (l, r) = self.split(self.nodes[n as usize].right, key);
            self.nodes[n as usize].right = l;
            self.fix(n);
            (n, r)
        } else {
            let (l, r) = self.split(self.nodes[n as usize].left, key);
            self.nodes[n as usize].left = r;
            self.fix(n);
            (l, n)
        }
    }

    fn merge(&mut self, a: u32, b: u32) -> u32 {
        if a == NIL {
            return b;
        }
        if b == NIL {
            return a;
        }
        if self.nodes[a as usize].weight > self.nodes[b as usize].weight {
            let merged = self.merge(self.nodes[a as usize].right, b);
            self.nodes[a as usize].right = merged;
            self.fix(a);
            a
        } else {
            let merged = self.merge(a, self.nodes[b as usize].left);
            self.nodes[b as usize].left = merged;
            self.fix(b);
            b
        }
    }

    pub fn insert(&mut self, key: QueueKey) {
        let weight = self.next_weight();
        let node = Node { key, weight, left: NIL, right: NIL, size: 1 };
        let index = match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        let root = self.root.unwrap_or(NIL);
        let (l, r) = self.split(root, &key);
        let left = self.merge(l, index);
        let root = self.merge(left, r);
        self.root = Some(root);
    }

    /// Removes `key`; returns whether it was there.
    pub fn remove(&mut self, key: &QueueKey) -> bool {
        let Some(root) = self.root else { return false };
        let (less, rest) = self.split(root, key);
        // `rest` starts with `key` if present: split off everything greater than it.
        let mut found = NIL;
        let mut rest = rest;
        if rest != NIL {
            let first = self.leftmost(rest);
            if self.nodes[first as usize].key == *key {
                rest = self.remove_leftmost(rest);
                found = first;
            }
        }
        let merged = self.merge(less, rest);
        self.root = (merged != NIL).then_some(merged);
        if found != NIL {
            self.free.push(found);
        }
        found != NIL
    }

    fn leftmost(&self, mut n: u32) -> u32 {
        while self.nodes[n as usize].left != NIL {
            n = self.nodes[n as usize].left;
        }
        n
    }

    fn remove_leftmost(&mut self, n: u32) -> u32 {
        let left = self.nodes[n as usize].left;
        if left == NIL {
            return self.nodes[n as usize].right;
        }
        let new_left = self.remove_leftmost(left);
        self.nodes[n as usize].left = new_left;
        self.fix(n);
        n
    }

    /// Number of keys ahead of `key` (its 0-based position when present).
    pub fn rank(&self, key: &QueueKey) -> usize {
        let mut n = self.root.unwrap_or(NIL);
        let mut ahead = 0usize;
        while n != NIL {
            let node = &self.nodes[n as usize];
            if node.key < *key {
                ahead += self.size(node.left) as usize + 1;
                n = node.right;
            } else {
                n = node.left;
            }
        }
        ahead
    }

    /// The key at 0-based position `index`.
    pub fn nth(&self, mut index: usize) -> Option<QueueKey> {
        let mut n = self.root.unwrap_or(NIL);
        while n != NIL {
            let node = &self.nodes[n as usize];
            let left = self.size(node.left) as usize;
            match index.cmp(&left) {
                Ordering::Less => n = node.left,
                Ordering::Equal => return Some(node.key),
                Ordering::Greater => {
                    index -= left + 1;
                    n = node.right;
                }
            }
        }
        None
    }

    pub fn peek(&self) -> Option<QueueKey> {
        self.root.map(|r| self.nodes[self.leftmost(r) as usize].key)
    }

    /// Keys in queue order.
    pub fn in_order(&self) -> Vec<QueueKey> {
        let mut out = Vec::with_capacity(self.len());
        let mut stack = Vec::new();
        let mut n = self.root.unwrap_or(NIL);
        while n != NIL || !stack.is_empty() {
            while n != NIL {
                stack.push(n);
                n = self.nodes[n as usize].left;
            }
            let top = stack.pop().unwrap_or(NIL);
            out.push(self.nodes[top as usize].key);
            n = self.nodes[top as usize].right;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: GprId, priority: i32, share: f64) -> QueueKey {
        QueueKey { priority, share, submitted_at: id * 10, id }
    }

    #[test]
    fn orders_by_priority_then_share_then_age_and_ranks() {
        let mut q = PendingQueue::default();
        let keys = [key(1, 101, 0.0), key(2, 250, 5.0), key(3, 101, 0.0), key(4, 101, -1.0), key(5, 50, 0.0)];
        for k in keys {
            q.insert(k);
        }
        let order: Vec<GprId> = q.in_order().iter().map(|k| k.id).collect();
        assert_eq!(order, [2, 4, 1, 3, 5]);
        assert_eq!(q.rank(&keys[0]), 2);
        assert_eq!(q.nth(3).map(|k| k.id), Some(3));
        assert!(q.remove(&keys[3]));
        assert!(!q.remove(&keys[3]));
        assert_eq!(q.rank(&keys[0]), 1);
        assert_eq!(q.peek().map(|k| k.id), Some(2));
        assert_eq!(q.len(), 4);
    }

    #[test]
    fn matches_a_sorted_vector_under_churn() {
        let mut q = PendingQueue::default();
        let mut model: Vec<QueueKey> = Vec::new();
        let mut x: u64 = 7;
        for i in 0..3000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x.is_multiple_of(3) && !model.is_empty() {
                let k = model.remove((x as usize / 3) % model.len());
                assert!(q.remove(&k));
            } else {
                let k = key(i, (x % 5) as i32, (x % 7) as f64);
                q.insert(k);
                let at = model.partition_point(|m| *m < k);
                model.insert(at, k);
            }
        }
        assert_eq!(q.in_order(), model);
        for (i, k) in model.iter().enumerate().step_by(37) {
            assert_eq!(q.rank(k), i);
            assert_eq!(q.nth(i), Some(*k));
        }
    }
}
