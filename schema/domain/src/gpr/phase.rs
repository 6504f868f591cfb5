//! What a GPR's stored phase and milestone bits mean, for every rule that reads them.

use egs_entities::{GprEventKind, GprPhase};

/// Phases the scheduler plans: queued, or holding nodes.
pub const ACTIVE: [GprPhase; 4] = [GprPhase::Queued, GprPhase::Provisioning, GprPhase::Provisioned, GprPhase::Releasing];
/// Phases in which a GPR holds nodes.
pub const HOLDING: [GprPhase; 3] = [GprPhase::Provisioning, GprPhase::Provisioned, GprPhase::Releasing];

/// Milestone bits in `gprs.milestones_done`: the share of the window each marks.
pub const MILESTONES: [(i32, GprEventKind, f64); 3] =
    [(1, GprEventKind::Progress25, 0.25), (2, GprEventKind::Progress50, 0.5), (4, GprEventKind::Progress75, 0.75)];
/// The exit warning's bit in `gprs.milestones_done` (cleared when the window grows).
pub const EXIT_WARNING_BIT: i32 = 8;
