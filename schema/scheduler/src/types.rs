//! What the core speaks in: inventory and slice specs, requests and holds, decisions,
//! promises and estimates, and its configuration.

/// Seconds on whatever clock the caller uses (Unix time in the gateway, trace time in replay).
pub type Time = i64;
pub type GprId = i64;
pub type NodeId = i64;
pub type SliceId = i64;
pub type ClusterId = i64;

/// The unit the scheduler plans on: whole nodes of one instance type and GPU shape on one cluster.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PoolKey {
    pub cluster: ClusterId,
    pub instance_type: String,
    pub gpu_shape: String,
}

#[derive(Clone, Debug)]
pub struct NodeSpec {
    pub id: NodeId,
    pub pool: PoolKey,
    pub gpus: u32,
    pub gpu_memory_mib: i64,
    pub healthy: bool,
    /// An RDMA network to the pool's other nodes.
    pub rdma: bool,
}

#[derive(Clone, Debug)]
pub struct SliceSpec {
    pub id: SliceId,
    pub clusters: Vec<ClusterId>,
    /// Whether the slice's policy lets its GPRs be preempted (`autoEviction`).
    pub evictable: bool,
    /// GPU shapes the slice's policy allows (`allowedShapes`); empty means any. A GPR that
    /// names no shape is planned only in these pools.
    pub shapes: Vec<String>,
}

/// What a GPR asks for, as the scheduler sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub id: GprId,
    pub slice: SliceId,
    pub nodes: u32,
    pub gpus_per_node: Option<u32>,
    pub min_gpu_memory_mib: Option<i64>,
    pub gpu_shape: Option<String>,
    pub instance_type: Option<String>,
    /// Empty: any of the slice's clusters.
    pub preferred_clusters: Vec<ClusterId>,
    pub priority: i32,
    /// The strict reserved window.
    pub duration: Time,
    pub earliest_start: Option<Time>,
    pub submitted_at: Time,
    pub preemptible: bool,
    pub requeue: bool,
    /// Released when all its GPUs stay idle this long.
    pub idle_timeout: Option<Time>,
    /// Its nodes talk over RDMA: with more than one node, only pools whose every node has it.
    pub rdma: bool,
}

/// A node planned out of service over `[start, end)` (an admin's maintenance window): no GPR
/// whose span would overlap it is planned on that node, and the pool counts one node fewer for
/// any span that does.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct MaintenanceWindow {
    pub node: NodeId,
    pub start: Time,
    pub end: Time,
    pub id: i64,
}

impl MaintenanceWindow {
    pub fn overlaps(&self, start: Time, end: Time) -> bool {
        self.start < end && self.end > start
    }
}

/// A plan made by an earlier pass, kept so later passes never start the GPR later than promised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hold {
    pub pool: PoolKey,
    pub start: Time,
}

/// Where a GPR that holds nodes is in its lifecycle: what bounds when its nodes come back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holding {
    /// Admitted at `started_at`; its window ends no later than `ends_at` (the admission plus
    /// the provisioning allowance plus the duration), whenever provisioning finishes.
    Provisioning,
    /// Provisioned at `started_at`; the exit timer ends the window at `ends_at`.
    Provisioned,
    /// Releasing since `since`; the nodes are back by `until` (the eviction deadline).
    Releasing { since: Time, until: Time },
}

/// A GPR that holds nodes now (provisioning, provisioned or releasing).
#[derive(Clone, Debug)]
pub struct RunningSpec {
    pub request: Request,
    pub pool: PoolKey,
    pub nodes: Vec<NodeId>,
    pub started_at: Time,
    /// The reserved window ends here (for a provisioning GPR: no later than here).
    pub ends_at: Time,
    pub holding: Holding,
}

impl RunningSpec {
    /// When the nodes are back at the latest: the window's end plus the release allowance,
    /// or the release's own deadline once it runs. Promises are planned on this.
    pub fn nodes_back_by(&self, release_allowance: Time) -> Time {
        match self.holding {
            Holding::Releasing { until, .. } => until,
            _ => self.ends_at.saturating_add(release_allowance),
        }
    }
}

/// Why a promise (`start_no_later_than`) moved later: the causes docs/design.md §4.5 allows, and
/// `Overdue` for the one it does not (a plan's start passed without an admission).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cause {
    /// A GPR of higher priority, ranked after the promise was made (new, re-prioritised or
    /// requeued after preemption), took the room.
    HigherPriority { gpr: GprId, priority: i32 },
    /// A GPR of the same priority whose slice used less lately was ranked ahead of it when it
    /// arrived (fair share's bounded points, see `Config::fair_share_bonus`) and took the room.
    FairShare { gpr: GprId },
    /// Capacity the plan counted on was lost (a node failed, went stale or was cordoned).
    CapacityLost { pool: PoolKey },
    /// A node of the pool was planned out for maintenance over the plan's span.
    Maintenance { window: MaintenanceWindow },
    /// The GPR itself changed: its size, window or priority (an edit or an admin's reorder).
    OwnChange,
    /// Not a §4.5 cause: the planned start passed without an admission, because something
    /// held its nodes past the bound it was planned with.
    Overdue,
}

impl Cause {
    /// Whether docs/design.md §4.5 allows a promise to move later for this.
    pub fn is_allowed(&self) -> bool {
        !matches!(self, Cause::Overdue)
    }
}

/// A promise that moved later in a call into the core; `to` is `None` when no plan is left.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromiseMove {
    pub gpr: GprId,
    pub from: Time,
    pub to: Option<Time>,
    pub cause: Cause,
}

/// What the gateway must carry out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Start provisioning `gpr` on these nodes now.
    Admit { gpr: GprId, pool: PoolKey, nodes: Vec<NodeId>, start: Time, end: Time },
    /// Release `victim` so that `by` can start; `requeued` when its policy asks for it.
    Preempt { victim: GprId, by: GprId, requeued: bool },
    /// `failed` left the GPR; `replacement` from the same pool took its place.
    ReplaceNode { gpr: GprId, failed: NodeId, replacement: NodeId },
    /// `failed` left the GPR and no node of the pool was free to replace it.
    Degraded { gpr: GprId, failed: NodeId },
}

/// Where a pending GPR stands after the last pass.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingStatus {
    /// 1-based: one more than the pending GPRs planned to start before it in the pools it may
    /// use, so position order is start order.
    pub position: usize,
    pub start_no_later_than: Option<Time>,
    /// The middle of `start_range`.
    pub estimated_start: Option<Time>,
    /// When it is likely to start: calibrated on how the gateway's own past estimates turned out.
    pub start_range: Option<StartRange>,
    pub pool: Option<PoolKey>,
    /// The priority points fair share gave it when it was first ranked (see
    /// [`Config::fair_share_bonus`]): stored, so a new leader ranks it the same.
    pub fair_share_bonus: i32,
    /// When it was first estimated and the start foreseen then (see [`WaitCalibration`](crate::predict::WaitCalibration)).
    pub foreseen: Option<(Time, Time)>,
}

/// A start-time range: the GPR starts before `p10` one time in ten, before `p90` nine times in
/// ten, `p50` is the middle. Learned from how past estimates turned out, so it carries what the
/// estimator cannot see (how much of their windows others use, who arrives ahead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StartRange {
    pub p10: Time,
    pub p50: Time,
    pub p90: Time,
}

/// One row of "Get wait time".
#[derive(Clone, Debug, PartialEq)]
pub struct PoolEstimate {
    pub pool: PoolKey,
    pub start_no_later_than: Time,
    /// The middle of `start_range`.
    pub estimated_start: Time,
    pub start_range: StartRange,
    pub free_nodes_now: u32,
    pub healthy_nodes: u32,
    /// It would start now by preempting these lower-priority GPRs (then both estimates are now).
    pub preempts: Vec<GprId>,
    /// The slice's own GPR that holds nodes, and when they are back at the latest: a slice runs
    /// one GPR at a time, so nothing of the slice starts before.
    pub behind_own: Option<(GprId, Time)>,
}

/// Why a request can never be planned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unfit {
    /// No pool on the allowed clusters matches shape, instance type, GPUs and memory.
    NoMatchingPool,
    /// Pools match, but none has this many healthy nodes.
    TooManyNodes { largest: u32 },
}

/// The gateway's (and the replay's) [`Config::fair_share_bonus`]: a tenth of a band.
pub const FAIR_SHARE_BONUS: i32 = 10;

/// The top of `priority`'s band (100, 200, 300).
pub fn band_top(priority: i32) -> i32 {
    match priority {
        ..=100 => 100,
        101..=200 => 200,
        _ => 300,
    }
}

#[derive(Clone, Debug)]
pub struct Config {
    /// Fair share forgets a slice's use with this half-life.
    pub fair_share_half_life: Time,
    /// Share of the reserved window a GPR is expected to use before anything is observed.
    pub prior_use_ratio: f64,
    /// Planning stops giving fresh plans after this many GPRs per pass (deeper GPRs keep
    /// their holds); `usize::MAX` plans everything.
    pub max_plan_depth: usize,
    /// How long provisioning may take: a plan reserves it before the window, and an admitted
    /// GPR's window ends no later than its admission plus this plus its duration.
    pub provisioning_allowance: Time,
    /// How long a release may take (the eviction deadline): a plan reserves it after the
    /// window, so a promise made behind a running GPR allows for its release.
    pub release_allowance: Time,
    /// Priority points a waiting GPR gains per hour it waits, so no band starves. An aged
    /// GPR is ranked higher but never displaces a plan: only fresh GPRs do that.
    pub aging_per_hour: f64,
    /// The most points aging adds.
    pub aging_cap: i32,
    /// Aging never lifts a GPR above this: the high band (201–300) stays for GPRs submitted
    /// there, so they still go ahead of everyone who waited.
    pub aging_ceiling: i32,
    /// The most priority points fair share gives a GPR when it is first ranked: a slice that
    /// used nothing lately gets all of them, one that used as much as the average active slice
    /// half, a heavy one about none. Fixed for the GPR's life (its `fair_share_bonus`), never
    /// past its band's top, and never a reason to preempt: ranked this way it is, for the GPRs
    /// of heavier slices behind it, a higher-priority arrival (docs/design.md §4.5). 0: off.
    pub fair_share_bonus: i32,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            fair_share_half_life: 7 * 24 * 3600,
            prior_use_ratio: 1.0,
            max_plan_depth: usize::MAX,
            provisioning_allowance: 0,
            release_allowance: 0,
            aging_per_hour: 0.0,
            aging_cap: 0,
            aging_ceiling: 200,
            fair_share_bonus: 0,
        }
    }
}

impl Config {
    /// The gateway's and the replay's planning: allowances for provisioning and release, and
    /// aging of ten points an hour up to one band (100), never into the high band.
    pub fn live(provisioning_allowance: Time, release_allowance: Time) -> Self {
        Self {
            provisioning_allowance,
            release_allowance,
            aging_per_hour: 10.0,
            aging_cap: 100,
            fair_share_bonus: FAIR_SHARE_BONUS,
            ..Self::default()
        }
    }

    /// The latest a window of `duration` admitted at `admitted` ends, however long provisioning
    /// takes: the exit timer enforces it, and plans behind it count on it.
    pub fn latest_window_end(&self, admitted: Time, duration: Time) -> Time {
        admitted.saturating_add(self.provisioning_allowance).saturating_add(duration)
    }

    /// How long a plan of `duration` reserves its pool: provisioning, the window, the release.
    pub fn span(&self, duration: Time) -> Time {
        self.latest_window_end(0, duration).saturating_add(self.release_allowance)
    }
}
