//! What readers get from the samples: history windows, summaries over GPUs and hot-spot ranking.

use super::ingest::{BUSY_UTIL_PERCENT, MAX_AGE_SECS, MAX_FUTURE_SECS};
use crate::error::{Result, UserError};
use chrono::{DateTime, Utc};
use egs_entities::gpu;
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, Condition, Order, QueryOrder, Select};
use std::collections::{BTreeMap, HashMap};

/// 1-second history spans this long.
pub const SECOND_HISTORY_SECS: i64 = super::store::SECOND_SLOTS as i64;
/// Slack for the history windows: a client's `now - 10m` is a little older by the time it arrives.
const WINDOW_GRACE_SECS: i64 = 60;

/// A point in time of history, and the validated window of a history query.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Window {
    pub from: i64,
    pub to: i64,
    pub step: i64,
}

/// Checks a `metrics(from, to, step)` request. Defaults: from 10 minutes ago to whatever
/// came in (agents' clocks may run a little ahead), at 1 s steps when `from` is within the
/// 1 s history and 1 min steps before that.
pub fn window(now: DateTime<Utc>, from: Option<DateTime<Utc>>, to: Option<DateTime<Utc>>, step: Option<i64>) -> Result<Window> {
    let now = now.timestamp();
    let to = to.map_or(now + MAX_FUTURE_SECS, |t| t.timestamp());
    let from = from.map_or(to.min(now) - SECOND_HISTORY_SECS, |t| t.timestamp());
    let step = step.unwrap_or(if from >= now - SECOND_HISTORY_SECS - WINDOW_GRACE_SECS { 1 } else { 60 });
    let mut errors = Vec::new();
    if from >= to {
        errors.push(UserError::invalid("from", "must be before `to`"));
    } else if to - from > MAX_AGE_SECS {
        errors.push(UserError::invalid("from", "at most 24 hours of history at a time"));
    }
    if step < 1 {
        errors.push(UserError::invalid("step", "must be at least 1s"));
    } else if step > MAX_AGE_SECS {
        errors.push(UserError::invalid("step", "must be at most 24h"));
    } else if step >= 60 && step % 60 != 0 {
        errors.push(UserError::invalid("step", "a step of a minute or more must be whole minutes, e.g. `5m`"));
    }
    if step < 60 && from < now - SECOND_HISTORY_SECS - WINDOW_GRACE_SECS {
        errors.push(UserError::invalid("from", "1-second history covers the last 10 minutes; ask for older data with a step of 1m or more"));
    } else if from < now - MAX_AGE_SECS - WINDOW_GRACE_SECS {
        errors.push(UserError::invalid("from", "history covers the last 24 hours"));
    }
    crate::validate::finish(errors)?;
    Ok(Window { from, to, step })
}

/// Aggregates over the latest samples of a set of GPUs.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub gpus: usize,
    /// GPUs with a latest sample.
    pub reporting: usize,
    /// Reporting GPUs under [`BUSY_UTIL_PERCENT`].
    pub idle: usize,
    pub avg_util: Option<f64>,
    pub avg_mem_util: Option<f64>,
    pub avg_temperature: Option<f64>,
    pub mem_used_mib: Option<f64>,
    pub power: Option<f64>,
    pub hottest: Option<gpu::Model>,
    pub highest_power: Option<gpu::Model>,
    pub newest_sample_at: Option<DateTime<Utc>>,
    pub oldest_sample_at: Option<DateTime<Utc>>,
}

/// The latest values of a GPU, if it reported.
pub struct Latest {
    pub util: f64,
    pub mem_util: f64,
    pub mem_used_mib: f64,
    pub temperature: f64,
    pub power: f64,
}

pub fn latest(g: &gpu::Model) -> Option<Latest> {
    latest_of(g.last_sample_at, [g.latest_util, g.latest_mem_util, g.latest_mem_used_mib, g.latest_temperature_c, g.latest_power_w])
}

/// The latest sample from its stored time and values (utilisation, memory utilisation, memory
/// used, temperature, power): none unless all are there.
pub fn latest_of(at: Option<chrono::DateTime<chrono::Utc>>, values: [Option<f64>; 5]) -> Option<Latest> {
    at?;
    let [util, mem_util, mem_used_mib, temperature, power] = values;
    Some(Latest { util: util?, mem_util: mem_util?, mem_used_mib: mem_used_mib?, temperature: temperature?, power: power? })
}

pub fn summarize(gpus: Vec<gpu::Model>) -> Summary {
    let mut summary = Summary { gpus: gpus.len(), ..Summary::default() };
    let (mut util, mut mem_util, mut temperature, mut mem_used, mut power) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let mut hottest: Option<(f64, usize)> = None;
    let mut highest: Option<(f64, usize)> = None;
    for (i, g) in gpus.iter().enumerate() {
        let Some(l) = latest(g) else { continue };
        summary.reporting += 1;
        if l.util < BUSY_UTIL_PERCENT {
            summary.idle += 1;
        }
        util += l.util;
        mem_util += l.mem_util;
        temperature += l.temperature;
        mem_used += l.mem_used_mib;
        power += l.power;
        if hottest.is_none_or(|(t, _)| l.temperature > t) {
            hottest = Some((l.temperature, i));
        }
        if highest.is_none_or(|(p, _)| l.power > p) {
            highest = Some((l.power, i));
        }
        summary.newest_sample_at = summary.newest_sample_at.max(g.last_sample_at);
        summary.oldest_sample_at = match summary.oldest_sample_at {
            Some(t) => Some(g.last_sample_at.map_or(t, |at| at.min(t))),
            None => g.last_sample_at,
        };
    }
    if summary.reporting > 0 {
        let n = summary.reporting as f64;
        summary.avg_util = Some(util / n);
        summary.avg_mem_util = Some(mem_util / n);
        summary.avg_temperature = Some(temperature / n);
        summary.mem_used_mib = Some(mem_used);
        summary.power = Some(power);
    }
    summary.hottest = hottest.and_then(|(_, i)| gpus.get(i).cloned());
    summary.highest_power = highest.and_then(|(_, i)| gpus.get(i).cloned());
    summary
}

/// Orders of the `gpus` list by their latest sample.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Rank {
    HotSpots,
    Power,
    Busiest,
    Idlest,
}

impl Rank {
    /// The sample columns compared, most significant first, and which way each sorts.
    fn keys(self) -> [(gpu::Column, Order); 3] {
        use gpu::Column::{LatestMemUtil, LatestPowerW, LatestTemperatureC, LatestUtil};
        match self {
            Rank::HotSpots => [(LatestTemperatureC, Order::Desc), (LatestPowerW, Order::Desc), (LatestUtil, Order::Desc)],
            Rank::Power => [(LatestPowerW, Order::Desc), (LatestTemperatureC, Order::Desc), (LatestUtil, Order::Desc)],
            Rank::Busiest => [(LatestUtil, Order::Desc), (LatestMemUtil, Order::Desc), (LatestTemperatureC, Order::Desc)],
            Rank::Idlest => [(LatestUtil, Order::Asc), (LatestMemUtil, Order::Asc), (LatestPowerW, Order::Asc)],
        }
    }
}

/// [`rank`]'s order as SQL, so the database sorts and pages (a fleet's 80,000 GPUs are never
/// read to show 100): GPUs with a complete latest sample the caller may read first, by
/// `order`'s keys, then every other GPU by id. `readable`: per node, the oldest sample the
/// caller may read; `None` for everything (admins).
pub fn rank_in_sql(select: Select<gpu::Entity>, order: Rank, readable: Option<&HashMap<i64, DateTime<Utc>>>) -> Select<gpu::Entity> {
    use gpu::Column as C;
    let complete = [C::LastSampleAt, C::LatestUtil, C::LatestMemUtil, C::LatestMemUsedMib, C::LatestTemperatureC, C::LatestPowerW]
        .into_iter()
        .fold(Condition::all(), |all, column| all.add(column.is_not_null()));
    let ranked = match readable {
        None => complete,
        // Nothing readable: every GPU sorts like one that never reported.
        Some(nodes) if nodes.is_empty() => return select.order_by_asc(C::Id),
        Some(nodes) => {
            // Nodes handed over at the same moment (one GPR's) share one condition.
            let mut by_since: BTreeMap<DateTime<Utc>, Vec<i64>> = BTreeMap::new();
            for (node, since) in nodes {
                by_since.entry(*since).or_default().push(*node);
            }
            let any = by_since
                .into_iter()
                .fold(Condition::any(), |any, (since, nodes)| any.add(Condition::all().add(C::NodeId.is_in(nodes)).add(C::LastSampleAt.gte(since))));
            complete.add(any)
        }
    };
    let mut select = select.order_by(Into::<Expr>::into(Expr::case(ranked.clone(), 0).finally(1)), Order::Asc);
    for (column, direction) in order.keys() {
        // Null for the unranked: their samples must not order them.
        select = select.order_by(Into::<Expr>::into(Expr::case(ranked.clone(), Expr::col(column))), direction);
    }
    select.order_by_asc(C::Id)
}

/// Sorts GPUs by their latest sample. GPUs whose metrics the caller may not read (`readable`
/// false) or that never reported come last, by id, so the order reveals nothing about them.
/// The reference for [`rank_in_sql`] (a test holds the two equal).
pub fn rank(gpus: &mut [gpu::Model], order: Rank, readable: impl Fn(&gpu::Model) -> bool) {
    use std::cmp::Ordering;
    let key = |g: &gpu::Model| -> Option<[f64; 3]> {
        let l = latest(g).filter(|_| readable(g))?;
        Some(match order {
            Rank::HotSpots => [-l.temperature, -l.power, -l.util],
            Rank::Power => [-l.power, -l.temperature, -l.util],
            Rank::Busiest => [-l.util, -l.mem_util, -l.temperature],
            Rank::Idlest => [l.util, l.mem_util, l.power],
        })
    };
    let mut keyed: Vec<(Option<[f64; 3]>, i64, usize)> = gpus.iter().enumerate().map(|(i, g)| (key(g), g.id, i)).collect();
    keyed.sort_by(|(a, a_id, _), (b, b_id, _)| {
        let by_key = match (a, b) {
            (Some(a), Some(b)) => a.iter().zip(b).map(|(x, y)| x.total_cmp(y)).find(|o| o.is_ne()).unwrap_or(Ordering::Equal),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        };
        by_key.then(a_id.cmp(b_id))
    });
    let order: Vec<usize> = keyed.into_iter().map(|(_, _, i)| i).collect();
    let mut sorted: Vec<gpu::Model> = order.iter().filter_map(|&i| gpus.get(i).cloned()).collect();
    gpus.swap_with_slice(&mut sorted);
}
