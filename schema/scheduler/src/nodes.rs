//! Nodes joining the core and changing health: pools appear with their first node, and a
//! failed node inside a running GPR is replaced from its pool when one is free.

use super::*;

impl Scheduler {
    /// Adds a node (or moves it between health states); new pools appear as needed.
    pub fn upsert_node(&mut self, spec: NodeSpec) {
        let pool = match self.pool_index.get(&spec.pool) {
            Some(&i) => i,
            None => {
                self.pools.push(Pool {
                    key: spec.pool.clone(),
                    gpus_per_node: spec.gpus,
                    gpu_memory_mib: spec.gpu_memory_mib,
                    nodes: Vec::new(),
                    healthy: 0,
                    rdma: spec.rdma,
                    plan: Timeline::default(),
                    expected: Timeline::default(),
                    planned: Reservations::default(),
                    expected_planned: Reservations::default(),
                    away: Vec::new(),
                    guards: maintenance::Guards::default(),
                });
                self.pool_index.insert(spec.pool.clone(), self.pools.len() - 1);
                let index = self.pools.len() - 1;
                // Waiting GPRs may use the new pool too.
                let waiting: Vec<GprId> = self.pending.keys().copied().collect();
                self.rematch(waiting);
                index
            }
        };
        if let Some(existing) = self.nodes.get(&spec.id) {
            if existing.healthy != spec.healthy {
                self.dirty = true;
                self.pools[existing.pool].healthy += if spec.healthy { 1 } else { -1 };
                if let Some(state) = self.nodes.get_mut(&spec.id) {
                    state.healthy = spec.healthy;
                }
                self.refresh_away_if_planned();
            }
            return;
        }
        let p = &mut self.pools[pool];
        p.gpus_per_node = p.gpus_per_node.min(spec.gpus);
        p.gpu_memory_mib = p.gpu_memory_mib.min(spec.gpu_memory_mib);
        p.rdma &= spec.rdma;
        p.nodes.push(spec.id);
        p.healthy += i32::from(spec.healthy);
        self.nodes.insert(spec.id, NodeState { pool, healthy: spec.healthy, holder: None });
        self.refresh_away_if_planned();
        self.dirty = true;
    }

    /// A node joined or left a pool's capacity: its windows follow.
    fn refresh_away_if_planned(&mut self) {
        if !self.maintenance.is_empty() {
            self.refresh_away();
        }
    }

    /// A node's health changed at `now`. A failed node inside a running GPR is replaced from
    /// the same pool when one is free, otherwise the GPR runs degraded.
    pub fn set_node_health(&mut self, node: NodeId, healthy: bool, now: Time) -> Vec<Decision> {
        self.change_node_health(node, healthy, now, true)
    }

    /// [`Scheduler::set_node_health`] without a replacement: the node leaves (or rejoins) the
    /// pool's capacity, and a GPR holding it keeps it (one still provisioning is judged by its
    /// precheck; one releasing gives it back anyway).
    pub fn mark_node(&mut self, node: NodeId, healthy: bool, now: Time) {
        self.change_node_health(node, healthy, now, false);
    }

    fn change_node_health(&mut self, node: NodeId, healthy: bool, now: Time, replace: bool) -> Vec<Decision> {
        let Some(state) = self.nodes.get(&node).cloned() else { return Vec::new() };
        if state.healthy == healthy {
            return Vec::new();
        }
        self.dirty = true;
        let pool = state.pool;
        self.pools[pool].healthy += if healthy { 1 } else { -1 };
        if let Some(s) = self.nodes.get_mut(&node) {
            s.healthy = healthy;
        }
        self.refresh_away_if_planned();
        let Some(holder) = state.holder else { return Vec::new() };
        let Some(back) = self.running.get(&holder).map(|r| r.spec.nodes_back_by(self.config.release_allowance)) else { return Vec::new() };
        if healthy {
            self.pools[pool].plan.add(now, back.max(now), 1);
            return Vec::new();
        }
        if !replace {
            self.pools[pool].plan.add(now, back.max(now), -1);
            return Vec::new();
        }
        let spare = self.pools[pool].nodes.iter().copied().find(|n| self.nodes.get(n).is_some_and(|s| s.healthy && s.holder.is_none()));
        match spare {
            Some(replacement) => {
                if let Some(s) = self.nodes.get_mut(&node) {
                    s.holder = None;
                }
                if let Some(s) = self.nodes.get_mut(&replacement) {
                    s.holder = Some(holder);
                }
                if let Some(r) = self.running.get_mut(&holder) {
                    r.spec.nodes.retain(|n| *n != node);
                    r.spec.nodes.push(replacement);
                }
                vec![Decision::ReplaceNode { gpr: holder, failed: node, replacement }]
            }
            None => {
                self.pools[pool].plan.add(now, back.max(now), -1);
                vec![Decision::Degraded { gpr: holder, failed: node }]
            }
        }
    }
}
