//! The alert rules, pure: no database, no clock (time is a parameter), no I/O. The service feeds
//! them what is stored (open alerts, the latest samples, heartbeats, idle times) and writes the
//! [`Decision`]s they return; so every rule, its hysteresis included, is tested here.
//!
//! Rules are level-triggered: each looks at the current condition and at whether an alert of
//! its kind is open for the subject, so a lost write is repaired by the next evaluation and
//! evaluating twice decides nothing twice.
//!
//! | kind               | raised when                                             | cleared when                                          |
//! |--------------------|---------------------------------------------------------|-------------------------------------------------------|
//! | `OVER_TEMPERATURE` | a sample is over the threshold (default 87 °C)          | a sample is [`TEMPERATURE_CLEAR_MARGIN_CELSIUS`] under it |
//! | `OVER_POWER`       | a sample is over the model's power limit                | a sample is [`POWER_CLEAR_MARGIN`] (5 %) under it     |
//! | `XID_ERROR`        | a sample carries XID codes (critical for [`CRITICAL_XIDS`]) | none for [`XID_QUIET_SECS`]                      |
//! | `ECC_ERROR`        | the uncorrected ECC count goes up                       | it stays put for [`ECC_QUIET_SECS`]                   |
//! | `NODE_STALE`       | an agent that reported is silent for the stale threshold | it reports again                                     |
//! | `GPR_IDLE`         | every GPU of a GPR idle for [`IDLE_WARNING_SHARE`] of its idle timeout | one does work again                    |
//!
//! The band between the raise and the clear level is the hysteresis: a GPU hovering at its
//! threshold raises one alert, not one per sample. An alert also clears when its node changes
//! hands, so a slice never keeps reading about a node it gave back, and the next holder gets an
//! alert of its own if the condition persists.

use chrono::{DateTime, Utc};
use egs_entities::{AlertKind, AlertSeverity};
use egs_wire::duration::format_human;

/// The temperature threshold when neither the node nor its shape sets one: where data-centre
/// GPUs (A100, H100) begin to throttle.
pub const DEFAULT_TEMPERATURE_CELSIUS: f64 = 87.0;
/// An over-temperature alert clears only this far under the threshold.
pub const TEMPERATURE_CLEAR_MARGIN_CELSIUS: f64 = 5.0;
/// An over-power alert clears only this share of the limit under it (power draw is spiky).
pub const POWER_CLEAR_MARGIN: f64 = 0.05;
/// An XID alert clears after this long without another XID error on the GPU.
pub const XID_QUIET_SECS: i64 = 600;
/// An ECC alert clears after this long without the uncorrected count going up.
pub const ECC_QUIET_SECS: i64 = 3600;
/// XID codes that mean the GPU (or its memory or links) needs attention now: double-bit ECC
/// (48), row-remapping events and failures (63, 64), NVLink errors (74), the GPU falling off
/// the bus (79), a high single-bit ECC rate (92), contained and uncontained ECC errors (94, 95).
pub const CRITICAL_XIDS: [i32; 8] = [48, 63, 64, 74, 79, 92, 94, 95];
/// `GPR_IDLE` warns once the GPUs have been idle for this share of the idle timeout, leaving
/// a quarter of it to get back to work before the release.
pub const IDLE_WARNING_SHARE: f64 = 0.75;

/// Board power limits by GPU model, for models whose shape sets none. Matched on the words of
/// the shape (`NVIDIA-H100-80GB-HBM3` → `H100`, `HBM3`); the first entry whose words all appear
/// wins, so variants come before their family.
const POWER_LIMITS: [(&[&str], f64); 16] = [
    (&["B200"], 1000.0),
    (&["H200"], 700.0),
    (&["H100", "PCIE"], 350.0),
    (&["H100", "NVL"], 400.0),
    (&["H100"], 700.0),
    (&["A100", "PCIE"], 300.0),
    (&["A100"], 400.0),
    (&["L40S"], 350.0),
    (&["L40"], 300.0),
    (&["L4"], 72.0),
    (&["A10G"], 300.0),
    (&["A10"], 150.0),
    (&["T4"], 70.0),
    (&["V100", "PCIE"], 250.0),
    (&["V100"], 300.0),
    (&["A30"], 165.0),
];

/// The built-in power limit of a GPU model (or shape), in watts; `None` for models not in the
/// table, which then have no power rule unless an admin sets one.
pub fn default_power_limit(model: &str) -> Option<f64> {
    let upper = model.to_ascii_uppercase();
    let words: Vec<&str> = upper.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    POWER_LIMITS.iter().find(|(needles, _)| needles.iter().all(|n| words.contains(n))).map(|(_, watts)| *watts)
}

/// Where a threshold in force comes from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Set on the node itself (`upsertNodes`).
    Node,
    /// Set by an admin for the node's GPU shape (`setAlertThreshold`).
    Shape,
    /// The built-in default.
    BuiltIn,
}

/// The thresholds in force for a GPU.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Limits {
    pub temperature_celsius: f64,
    pub temperature_source: Source,
    /// `None`: no power rule.
    pub power_watts: Option<f64>,
    pub power_source: Source,
}

impl Limits {
    /// The most specific setting wins: the node's own, then the shape's, then the default.
    pub fn resolve(node: (Option<f64>, Option<f64>), shape: (Option<f64>, Option<f64>), model: &str) -> Self {
        let (temperature_celsius, temperature_source) = match (node.0, shape.0) {
            (Some(t), _) => (t, Source::Node),
            (None, Some(t)) => (t, Source::Shape),
            (None, None) => (DEFAULT_TEMPERATURE_CELSIUS, Source::BuiltIn),
        };
        let (power_watts, power_source) = match (node.1, shape.1) {
            (Some(p), _) => (Some(p), Source::Node),
            (None, Some(p)) => (Some(p), Source::Shape),
            (None, None) => (default_power_limit(model), Source::BuiltIn),
        };
        Self { temperature_celsius, temperature_source, power_watts, power_source }
    }

    /// An over-temperature alert clears under this.
    pub fn temperature_clear_below(&self) -> f64 {
        self.temperature_celsius - TEMPERATURE_CLEAR_MARGIN_CELSIUS
    }

    /// An over-power alert clears under this.
    pub fn power_clear_below(&self) -> Option<f64> {
        self.power_watts.map(|p| p * (1.0 - POWER_CLEAR_MARGIN))
    }
}

/// What the rules know of an open alert.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Open {
    pub severity: AlertSeverity,
    /// The GPR holding the subject when it was raised.
    pub gpr_id: Option<i64>,
    /// When the condition was last seen (raised, or seen again).
    pub last_seen: DateTime<Utc>,
}

/// What to store.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Open an alert; `detail` completes a sentence about its subject ("is at 91 °C, …").
    Raise { kind: AlertKind, severity: AlertSeverity, value: Option<f64>, threshold: Option<f64>, detail: String },
    /// Close the open alert of `kind`, saying why.
    Clear { kind: AlertKind, resolution: String },
    /// The open alert's condition happened again: its quiet period starts over.
    Recur { kind: AlertKind },
}

/// The open GPU alerts of one GPU, and the uncorrected ECC count last seen.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GpuState {
    pub over_temperature: Option<Open>,
    pub over_power: Option<Open>,
    pub xid: Option<Open>,
    pub ecc: Option<Open>,
    pub ecc_uncorrected: Option<i64>,
}

/// Kinds whose subject is a GPU.
pub const GPU_KINDS: [AlertKind; 4] = [AlertKind::OverTemperature, AlertKind::OverPower, AlertKind::XidError, AlertKind::EccError];

impl GpuState {
    pub fn slot(&mut self, kind: AlertKind) -> Option<&mut Option<Open>> {
        match kind {
            AlertKind::OverTemperature => Some(&mut self.over_temperature),
            AlertKind::OverPower => Some(&mut self.over_power),
            AlertKind::XidError => Some(&mut self.xid),
            AlertKind::EccError => Some(&mut self.ecc),
            AlertKind::NodeStale | AlertKind::GprIdle | AlertKind::GprUnderused => None,
        }
    }
}

/// One sample of a GPU, as the rules read it.
#[derive(Copy, Clone, Debug)]
pub struct Reading<'a> {
    pub at: DateTime<Utc>,
    pub temperature: f64,
    pub power: f64,
    pub xid_errors: &'a [i32],
    pub ecc_uncorrected: Option<i64>,
}

fn rank(severity: AlertSeverity) -> u8 {
    match severity {
        AlertSeverity::Info => 0,
        AlertSeverity::Warning => 1,
        AlertSeverity::Critical => 2,
    }
}

/// What an XID code means, for the codes operators meet most.
pub fn xid_meaning(code: i32) -> Option<&'static str> {
    Some(match code {
        13 => "graphics engine exception",
        31 => "GPU memory page fault",
        43 => "GPU stopped processing",
        45 => "preemptive cleanup after a fault",
        48 => "double-bit ECC error",
        61 | 62 => "internal micro-controller error",
        63 => "ECC page retirement or row remapping event",
        64 => "ECC page retirement or row remapping failure",
        74 => "NVLink error",
        79 => "GPU has fallen off the bus",
        92 => "high single-bit ECC error rate",
        94 => "contained ECC error",
        95 => "uncontained ECC error",
        119 | 120 => "GSP firmware error",
        _ => return None,
    })
}

fn raise(state: &mut Option<Open>, kind: AlertKind, severity: AlertSeverity, holder: Option<i64>, at: DateTime<Utc>) -> AlertKind {
    *state = Some(Open { severity, gpr_id: holder, last_seen: at });
    kind
}

/// Applies one sample of a GPU to its open alerts. `holder` is the GPR holding the GPU's node
/// now. Feed a GPU's new samples oldest first; `state` carries what they change.
pub fn evaluate_gpu(state: &mut GpuState, limits: &Limits, holder: Option<i64>, reading: &Reading<'_>) -> Vec<Decision> {
    let mut out = Vec::new();
    let at = reading.at;
    // A node changing hands closes what its previous holder saw.
    for kind in GPU_KINDS {
        if let Some(slot) = state.slot(kind)
            && slot.is_some_and(|open| open.gpr_id != holder)
        {
            *slot = None;
            out.push(Decision::Clear { kind, resolution: "the node changed hands".into() });
        }
    }

    let t = reading.temperature;
    let limit = limits.temperature_celsius;
    match state.over_temperature {
        None if t > limit => {
            let kind = raise(&mut state.over_temperature, AlertKind::OverTemperature, AlertSeverity::Warning, holder, at);
            out.push(Decision::Raise {
                kind,
                severity: AlertSeverity::Warning,
                value: Some(t),
                threshold: Some(limit),
                detail: format!("is at {t:.0} °C, over its {limit:.0} °C threshold"),
            });
        }
        Some(_) if t < limits.temperature_clear_below() => {
            state.over_temperature = None;
            out.push(Decision::Clear {
                kind: AlertKind::OverTemperature,
                resolution: format!("cooled to {t:.0} °C, under {:.0} °C", limits.temperature_clear_below()),
            });
        }
        _ => {}
    }

    let p = reading.power;
    match (state.over_power, limits.power_watts, limits.power_clear_below()) {
        (None, Some(limit), _) if p > limit => {
            let kind = raise(&mut state.over_power, AlertKind::OverPower, AlertSeverity::Warning, holder, at);
            out.push(Decision::Raise {
                kind,
                severity: AlertSeverity::Warning,
                value: Some(p),
                threshold: Some(limit),
                detail: format!("draws {p:.0} W, over its {limit:.0} W limit"),
            });
        }
        (Some(_), Some(_), Some(below)) if p < below => {
            state.over_power = None;
            out.push(Decision::Clear { kind: AlertKind::OverPower, resolution: format!("draws {p:.0} W, under {below:.0} W") });
        }
        (Some(_), None, _) => {
            state.over_power = None;
            out.push(Decision::Clear { kind: AlertKind::OverPower, resolution: "no power limit applies any more".into() });
        }
        _ => {}
    }

    if reading.xid_errors.is_empty() {
        out.extend(quiet(&mut state.xid, AlertKind::XidError, at));
    } else {
        let critical: Vec<i32> = reading.xid_errors.iter().copied().filter(|x| CRITICAL_XIDS.contains(x)).collect();
        let severity = if critical.is_empty() { AlertSeverity::Warning } else { AlertSeverity::Critical };
        let worst = critical.first().or(reading.xid_errors.first()).copied().unwrap_or_default();
        let codes: Vec<String> = reading
            .xid_errors
            .iter()
            .map(|x| match xid_meaning(*x) {
                Some(meaning) => format!("XID {x} ({meaning})"),
                None => format!("XID {x}"),
            })
            .collect();
        let detail = format!("reported {}", codes.join(", "));
        match state.xid.as_mut() {
            Some(open) if rank(severity) <= rank(open.severity) => {
                open.last_seen = at;
                out.push(Decision::Recur { kind: AlertKind::XidError });
            }
            escalated => {
                if escalated.is_some() {
                    out.push(Decision::Clear { kind: AlertKind::XidError, resolution: format!("superseded by a more serious error: {detail}") });
                }
                let kind = raise(&mut state.xid, AlertKind::XidError, severity, holder, at);
                out.push(Decision::Raise { kind, severity, value: Some(f64::from(worst)), threshold: None, detail });
            }
        }
    }

    let mut ecc_increased = false;
    if let Some(count) = reading.ecc_uncorrected {
        let before = state.ecc_uncorrected.unwrap_or(0);
        state.ecc_uncorrected = Some(count);
        if count > before {
            ecc_increased = true;
            match state.ecc.as_mut() {
                Some(open) => {
                    open.last_seen = at;
                    out.push(Decision::Recur { kind: AlertKind::EccError });
                }
                None => {
                    let kind = raise(&mut state.ecc, AlertKind::EccError, AlertSeverity::Critical, holder, at);
                    out.push(Decision::Raise {
                        kind,
                        severity: AlertSeverity::Critical,
                        value: Some(count as f64),
                        threshold: Some(before as f64),
                        detail: format!("counts {count} uncorrectable ECC error(s), up from {before}"),
                    });
                }
            }
        }
    }
    if !ecc_increased {
        out.extend(quiet(&mut state.ecc, AlertKind::EccError, at));
    }
    out
}

/// Clears an open XID or ECC alert whose condition has not recurred for its quiet period.
pub fn quiet(open: &mut Option<Open>, kind: AlertKind, now: DateTime<Utc>) -> Option<Decision> {
    let period = match kind {
        AlertKind::XidError => XID_QUIET_SECS,
        AlertKind::EccError => ECC_QUIET_SECS,
        _ => return None,
    };
    let last_seen = open.as_ref()?.last_seen;
    if (now - last_seen).num_seconds() < period {
        return None;
    }
    *open = None;
    let what = if kind == AlertKind::XidError { "XID error" } else { "new uncorrectable ECC error" };
    Some(Decision::Clear { kind, resolution: format!("no {what} for {}", format_human(period)) })
}

/// `NODE_STALE` for a node: `last_heartbeat` is when its agent last reported (`None`: it never
/// did, so there is no agent to miss), `holder` the GPR holding it now. A held node going
/// silent is critical: a slice's work runs on it.
pub fn node_staleness(
    now: DateTime<Utc>,
    last_heartbeat: Option<DateTime<Utc>>,
    stale_after_secs: i64,
    open: Option<&Open>,
    holder: Option<i64>,
) -> Vec<Decision> {
    let silent = last_heartbeat.map(|at| (now - at).num_seconds());
    let stale = silent.is_some_and(|s| s >= stale_after_secs);
    let mut out = Vec::new();
    let mut open = open.copied();
    if open.is_some_and(|o| o.gpr_id != holder) {
        open = None;
        out.push(Decision::Clear { kind: AlertKind::NodeStale, resolution: "the node changed hands".into() });
    }
    match (open, stale) {
        (None, true) => {
            let silent = silent.unwrap_or_default();
            let severity = if holder.is_some() { AlertSeverity::Critical } else { AlertSeverity::Warning };
            out.push(Decision::Raise {
                kind: AlertKind::NodeStale,
                severity,
                value: Some(silent as f64),
                threshold: Some(stale_after_secs as f64),
                detail: format!("has had no word from its agent for {} (stale after {})", format_human(silent), format_human(stale_after_secs)),
            });
        }
        (Some(_), false) => out.push(Decision::Clear { kind: AlertKind::NodeStale, resolution: "its agent reported again".into() }),
        _ => {}
    }
    out
}

/// `GPR_IDLE` for a provisioned GPR with an idle timeout. `idle_since` is when its GPUs last
/// did work (or its window began), `None` when they have not all reported since it began (no
/// verdict, as for the idle release itself).
pub fn gpr_idleness(now: DateTime<Utc>, idle_timeout_secs: i64, idle_since: Option<DateTime<Utc>>, open: bool) -> Option<Decision> {
    let since = idle_since?;
    let idle_for = (now - since).num_seconds().max(0);
    let warn_after = (idle_timeout_secs as f64 * IDLE_WARNING_SHARE).ceil() as i64;
    match (open, idle_for >= warn_after) {
        (false, true) => {
            let release_at = since + chrono::Duration::seconds(idle_timeout_secs);
            Some(Decision::Raise {
                kind: AlertKind::GprIdle,
                severity: AlertSeverity::Warning,
                value: Some(idle_for as f64),
                threshold: Some(idle_timeout_secs as f64),
                detail: format!(
                    "has had every GPU idle for {} of its {} idle timeout; it is released at {} unless they get busy",
                    format_human(idle_for),
                    format_human(idle_timeout_secs),
                    release_at.format("%Y-%m-%d %H:%M UTC")
                ),
            })
        }
        (true, false) => Some(Decision::Clear { kind: AlertKind::GprIdle, resolution: "its GPUs are busy again".into() }),
        _ => None,
    }
}

/// Utilisation a GPR's GPUs averaged, sampled by the sweeper: `(when, mean %)`, oldest first.
pub type UtilisationWindow = std::collections::VecDeque<(DateTime<Utc>, f64)>;

/// Points above the floor by this much clear a `GPR_UNDERUSED` warning (so it does not flap).
pub const UNDERUSE_HYSTERESIS_PERCENT: f64 = 5.0;

/// `GPR_UNDERUSED`: the time-weighted mean of `window` over the last `period_secs` (once it covers
/// that long) under `below` percent raises a warning; at `below` + 5 or more it clears.
pub fn gpr_underuse(now: DateTime<Utc>, window: &UtilisationWindow, below: f64, period_secs: i64, open: bool) -> Option<Decision> {
    let from = now - chrono::Duration::seconds(period_secs);
    let (first, _) = *window.front()?;
    if first > from {
        return None;
    }
    // Each sample holds until the next (the last until now); only the part inside the period counts.
    let mut weighted = 0.0;
    let mut covered = 0.0;
    for (i, (at, mean)) in window.iter().enumerate() {
        let until = window.get(i + 1).map_or(now, |next| next.0);
        let start = (*at).max(from);
        if until <= start {
            continue;
        }
        let secs = (until - start).num_milliseconds() as f64 / 1000.0;
        weighted += mean * secs;
        covered += secs;
    }
    if covered <= 0.0 {
        return None;
    }
    let mean = weighted / covered;
    match open {
        false if mean < below => Some(Decision::Raise {
            kind: AlertKind::GprUnderused,
            severity: AlertSeverity::Warning,
            value: Some((mean * 10.0).round() / 10.0),
            threshold: Some(below),
            detail: format!(
                "holds GPUs that averaged {:.1} % busy over the last {}, under its slice's {below:.0} %: release what it does not use, or make it work",
                mean,
                format_human(period_secs)
            ),
        }),
        true if mean >= below + UNDERUSE_HYSTERESIS_PERCENT => Some(Decision::Clear {
            kind: AlertKind::GprUnderused,
            resolution: format!("its GPUs averaged {mean:.1} % over the last {}", format_human(period_secs)),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
