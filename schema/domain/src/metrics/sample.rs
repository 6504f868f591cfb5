//! One accepted GPU sample, as history, the database, live subscribers and other replicas see it.

use chrono::{DateTime, Utc};
use egs_entities::gpu;
use std::sync::Arc;

/// The five values history keeps, in the units of the API (%, %, MiB, °C, W).
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Values {
    pub util: f32,
    pub mem_util: f32,
    pub mem_used_mib: f32,
    pub temperature: f32,
    pub power: f32,
}

impl Values {
    /// util, mem_util, mem_used_mib, temperature, power: as history and the wire keep them.
    pub fn fields(self) -> [f32; 5] {
        [self.util, self.mem_util, self.mem_used_mib, self.temperature, self.power]
    }

    pub fn from_fields([util, mem_util, mem_used_mib, temperature, power]: [f32; 5]) -> Self {
        Self { util, mem_util, mem_used_mib, temperature, power }
    }

    pub(super) fn zip(self, other: Self, f: impl Fn(f32, f32) -> f32) -> Self {
        let (a, b) = (self.fields(), other.fields());
        Self::from_fields(std::array::from_fn(|i| f(a[i], b[i])))
    }
}

/// One accepted sample, as history, the database and live subscribers see it.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub gpu_id: i64,
    pub uuid: Arc<str>,
    pub node_id: i64,
    /// Unix seconds.
    pub at: i64,
    pub values: Values,
    pub sm_clock_mhz: f32,
    pub xid_errors: Vec<i32>,
    pub ecc_corrected: Option<i64>,
    pub ecc_uncorrected: Option<i64>,
}

/// What one report added, as the live feed carries it: the newest new sample of each GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleBatch {
    pub node_id: i64,
    pub samples: Vec<Sample>,
}

/// One point of a history query: the samples of `[at, at + step)`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Point {
    /// Start of the step, Unix seconds (a multiple of the step).
    pub at: i64,
    pub samples: u32,
    pub avg: Values,
    pub max: Values,
}

impl Point {
    /// Takes `other`'s samples of the same step in: counts add up, averages are weighted by
    /// them, maxima are the larger.
    pub fn absorb(&mut self, other: &Point) {
        if other.samples == 0 {
            return;
        }
        let total = (self.samples + other.samples) as f32;
        let (w_self, w_other) = (self.samples as f32 / total, other.samples as f32 / total);
        self.avg = self.avg.zip(other.avg, |a, b| a * w_self + b * w_other);
        self.max = self.max.zip(other.max, f32::max);
        self.samples += other.samples;
    }
}

/// A GPU's latest sample as stored, without the rest of its row: what a page of GPUs that the
/// catalog describes reads for `latestSample` (11 of a row's 21 columns, one of its four
/// times), batched for the page.
#[derive(Clone, Debug, sea_orm::FromQueryResult)]
pub struct StoredSample {
    pub id: i64,
    pub last_sample_at: Option<DateTime<Utc>>,
    pub latest_util: Option<f64>,
    pub latest_mem_util: Option<f64>,
    pub latest_mem_used_mib: Option<f64>,
    pub latest_temperature_c: Option<f64>,
    pub latest_power_w: Option<f64>,
    pub latest_sm_clock_mhz: Option<f64>,
    pub latest_xid_errors: Option<egs_entities::gpu::XidErrors>,
    pub latest_ecc_corrected: Option<i64>,
    pub latest_ecc_uncorrected: Option<i64>,
}

impl StoredSample {
    /// The columns it reads, in a `select_only` query on `gpus`.
    pub const COLUMNS: [gpu::Column; 11] = [
        gpu::Column::Id,
        gpu::Column::LastSampleAt,
        gpu::Column::LatestUtil,
        gpu::Column::LatestMemUtil,
        gpu::Column::LatestMemUsedMib,
        gpu::Column::LatestTemperatureC,
        gpu::Column::LatestPowerW,
        gpu::Column::LatestSmClockMhz,
        gpu::Column::LatestXidErrors,
        gpu::Column::LatestEccCorrected,
        gpu::Column::LatestEccUncorrected,
    ];
}

impl From<&gpu::Model> for StoredSample {
    fn from(g: &gpu::Model) -> Self {
        Self {
            id: g.id,
            last_sample_at: g.last_sample_at,
            latest_util: g.latest_util,
            latest_mem_util: g.latest_mem_util,
            latest_mem_used_mib: g.latest_mem_used_mib,
            latest_temperature_c: g.latest_temperature_c,
            latest_power_w: g.latest_power_w,
            latest_sm_clock_mhz: g.latest_sm_clock_mhz,
            latest_xid_errors: g.latest_xid_errors.clone(),
            latest_ecc_corrected: g.latest_ecc_corrected,
            latest_ecc_uncorrected: g.latest_ecc_uncorrected,
        }
    }
}
