//! Slice policy applied to one GPR (docs/design.md §4.9): some breaches are refused outright with a
//! precise error, others hold the GPR in `PENDING_APPROVAL` until an admin decides.

use crate::error::UserError;
use egs_entities::SlicePolicy;

/// What a GPR asks for, as far as policy cares.
#[derive(Clone, Debug)]
pub struct Ask<'a> {
    pub node_count: i32,
    /// Total GPUs the GPR would hold (nodes × GPUs per node).
    pub gpus: i64,
    pub gpu_shape: Option<&'a str>,
    pub priority: i32,
    pub duration_secs: i64,
    pub idle_timeout_secs: Option<i64>,
}

/// Usage of the slice that policy limits depend on.
#[derive(Clone, Debug, Default)]
pub struct Usage {
    /// GPRs of the slice still pending, not counting this one.
    pub pending_gprs: u64,
    /// GPU-hours committed in the current quota period: used, held by running GPRs (their
    /// whole windows) and asked by queued and approved ones.
    pub gpu_hours_used: f64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Verdict {
    /// Refusals: the GPR cannot be stored as asked.
    pub rejections: Vec<UserError>,
    /// Reasons an admin must approve it first; empty when within policy.
    pub approvals: Vec<String>,
}

pub fn evaluate(policy: &SlicePolicy, ask: &Ask<'_>, usage: &Usage) -> Verdict {
    let mut verdict = Verdict::default();
    if let Some(shape) = ask.gpu_shape
        && !policy.allowed_shapes.is_empty()
        && !policy.allowed_shapes.iter().any(|s| s == shape)
    {
        verdict.rejections.push(UserError::invalid(
            "gpuShape",
            format!("shape `{shape}` is not allowed in this slice; allowed: {}", policy.allowed_shapes.join(", ")),
        ));
    }
    if let Some(max) = policy.max_duration_secs
        && ask.duration_secs > max
    {
        verdict.rejections.push(UserError::invalid(
            "duration",
            format!(
                "{} is longer than the slice's maximum of {}",
                egs_wire::duration::format_iso(ask.duration_secs),
                egs_wire::duration::format_iso(max)
            ),
        ));
    }
    if let Some(max) = policy.max_idle_timeout_secs {
        match ask.idle_timeout_secs {
            Some(t) if t > max => verdict.rejections.push(UserError::invalid(
                "idleTimeout",
                format!("the slice allows an idle timeout of at most {}", egs_wire::duration::format_iso(max)),
            )),
            _ => {}
        }
    }
    if let Some(max) = policy.max_nodes_per_gpr
        && ask.node_count > max
    {
        verdict.approvals.push(format!("asks for {} nodes; the slice allows {max} without approval", ask.node_count));
    }
    if let Some(max) = policy.max_gpus_per_gpr
        && ask.gpus > i64::from(max)
    {
        verdict.approvals.push(format!("asks for {} GPUs; the slice allows {max} without approval", ask.gpus));
    }
    if ask.priority > policy.priority_max || ask.priority < policy.priority_min {
        verdict.approvals.push(format!("priority {} is outside the slice's range {}–{}", ask.priority, policy.priority_min, policy.priority_max));
    }
    if let Some(max) = policy.max_queued_gprs
        && usage.pending_gprs >= max as u64
    {
        verdict.approvals.push(format!("the slice already has {} pending GPRs; its limit is {max}", usage.pending_gprs));
    }
    if let Some(quota) = policy.gpu_hour_quota {
        let asked = ask.gpus as f64 * ask.duration_secs as f64 / 3600.0;
        if usage.gpu_hours_used + asked > quota as f64 {
            verdict.approvals.push(format!(
                "would use {asked:.1} GPU-hours with {:.1} of the {quota} GPU-hour quota already used or committed this period",
                usage.gpu_hours_used
            ));
        }
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask() -> Ask<'static> {
        Ask { node_count: 2, gpus: 16, gpu_shape: Some("H100"), priority: 101, duration_secs: 3600, idle_timeout_secs: None }
    }

    #[test]
    fn within_policy_needs_nothing() {
        assert_eq!(evaluate(&SlicePolicy::default(), &ask(), &Usage::default()), Verdict::default());
    }

    #[test]
    fn disallowed_shape_and_long_duration_are_refused_precisely() {
        let policy = SlicePolicy { allowed_shapes: vec!["A100".into()], max_duration_secs: Some(1800), ..Default::default() };
        let verdict = evaluate(&policy, &ask(), &Usage::default());
        let fields: Vec<_> = verdict.rejections.iter().map(|e| e.field.join(".")).collect();
        assert_eq!(fields, ["input.gpuShape", "input.duration"]);
        assert!(verdict.rejections[0].message.contains("allowed: A100"));
        assert!(verdict.rejections[1].message.contains("PT1H is longer than the slice's maximum of PT30M"));
    }

    #[test]
    fn size_priority_queue_and_quota_breaches_need_approval() {
        let policy = SlicePolicy {
            max_nodes_per_gpr: Some(1),
            max_gpus_per_gpr: Some(8),
            priority_max: 100,
            max_queued_gprs: Some(3),
            gpu_hour_quota: Some(20),
            ..Default::default()
        };
        let verdict = evaluate(&policy, &ask(), &Usage { pending_gprs: 3, gpu_hours_used: 10.0 });
        assert!(verdict.rejections.is_empty());
        assert_eq!(verdict.approvals.len(), 5, "{:?}", verdict.approvals);
    }
}
