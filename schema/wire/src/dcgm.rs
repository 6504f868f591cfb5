//! dcgm-exporter's GPU metric families, as both EGS exporters write them: the node agent's
//! `/metrics` (a drop-in replacement for dcgm-exporter on port 9400) and the gateway's (every
//! GPU's latest sample, fleet-wide). One table, so a dashboard built on either works on both.
//!
//! | family | value |
//! | --- | --- |
//! | `DCGM_FI_DEV_SM_CLOCK` | SM clock, MHz |
//! | `DCGM_FI_DEV_MEM_CLOCK` | memory clock, MHz |
//! | `DCGM_FI_DEV_GPU_TEMP` | GPU temperature, °C |
//! | `DCGM_FI_DEV_POWER_USAGE` | power draw, W |
//! | `DCGM_FI_DEV_POWER_MGMT_LIMIT` | enforced power limit, W |
//! | `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` | energy since the driver loaded, mJ |
//! | `DCGM_FI_DEV_GPU_UTIL` | GPU utilisation, % |
//! | `DCGM_FI_DEV_MEM_COPY_UTIL` | memory-controller utilisation, % |
//! | `DCGM_FI_DEV_XID_ERRORS` | the last XID code the GPU reported, 0 when none (dcgm-exporter's meaning) |
//! | `DCGM_FI_DEV_FB_FREE` | framebuffer free, MiB |
//! | `DCGM_FI_DEV_FB_USED` | framebuffer used, MiB |
//! | `DCGM_FI_DEV_ECC_SBE_VOL_TOTAL` | corrected (single-bit) volatile ECC errors |
//! | `DCGM_FI_DEV_ECC_DBE_VOL_TOTAL` | uncorrected (double-bit) volatile ECC errors |
//! | `DCGM_FI_DEV_CLOCK_THROTTLE_REASONS` | clock throttle reasons (NVML's bitmask) |
//!
//! A family no GPU has a value for is left out (the gateway does not store memory clocks,
//! power limits, energy or throttle reasons). All are gauges: an OpenMetrics counter's
//! samples must end in `_total`.
//!
//! Labels, in dcgm-exporter's order ([`gpu_labels`]): `gpu`, `UUID`, `device`
//! (`nvidia<index>`), `modelName`, `Hostname`, `DCGM_FI_DRIVER_VERSION`; each exporter then
//! adds its own (`cluster`, the pod, the holding slice and GPR).

use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::MetricType;

/// A GPU's labels: (name, value) pairs, in order.
pub type Labels = Vec<(&'static str, String)>;

/// The labels dcgm-exporter puts on every GPU series, in its order.
pub fn gpu_labels(index: i64, uuid: String, model: String, hostname: String, driver_version: Option<String>) -> Labels {
    let mut labels =
        vec![("gpu", index.to_string()), ("UUID", uuid), ("device", format!("nvidia{index}")), ("modelName", model), ("Hostname", hostname)];
    if let Some(version) = driver_version {
        labels.push(("DCGM_FI_DRIVER_VERSION", version));
    }
    labels
}

/// One GPU's latest values; `None`: the exporter has no value for this GPU.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GpuValues {
    pub sm_clock_mhz: Option<f64>,
    pub mem_clock_mhz: Option<f64>,
    pub temperature_c: Option<f64>,
    pub power_w: Option<f64>,
    pub power_limit_w: Option<f64>,
    pub energy_mj: Option<i64>,
    pub util: Option<f64>,
    pub mem_util: Option<f64>,
    /// The last XID code the GPU reported; 0 when none.
    pub last_xid: Option<i64>,
    pub fb_used_mib: Option<f64>,
    /// The framebuffer's size, MiB, when known: `FB_FREE` is this less what is used.
    pub fb_total_mib: Option<f64>,
    pub ecc_corrected: Option<i64>,
    pub ecc_uncorrected: Option<i64>,
    pub throttle_reasons: Option<i64>,
}

/// A value as dcgm-exporter writes it: measurements as floats, codes and counts as integers.
#[derive(Copy, Clone, Debug, PartialEq)]
enum Value {
    Float(f64),
    Count(i64),
}

/// One family: its name, its help, and how to read it off a GPU's values.
struct Family {
    name: &'static str,
    help: &'static str,
    read: fn(&GpuValues) -> Option<Value>,
}

/// The families, in the order of dcgm-exporter's `default-counters.csv`, then the extras.
const FAMILIES: [Family; 14] = [
    Family { name: "DCGM_FI_DEV_SM_CLOCK", help: "SM clock, MHz.", read: |g| g.sm_clock_mhz.map(Value::Float) },
    Family { name: "DCGM_FI_DEV_MEM_CLOCK", help: "Memory clock, MHz.", read: |g| g.mem_clock_mhz.map(Value::Float) },
    Family { name: "DCGM_FI_DEV_GPU_TEMP", help: "GPU temperature, degrees C.", read: |g| g.temperature_c.map(Value::Float) },
    Family { name: "DCGM_FI_DEV_POWER_USAGE", help: "Power draw, W.", read: |g| g.power_w.map(Value::Float) },
    Family { name: "DCGM_FI_DEV_POWER_MGMT_LIMIT", help: "Enforced power limit, W.", read: |g| g.power_limit_w.map(Value::Float) },
    Family { name: "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", help: "Energy since the driver loaded, mJ.", read: |g| g.energy_mj.map(Value::Count) },
    Family { name: "DCGM_FI_DEV_GPU_UTIL", help: "GPU utilisation, %.", read: |g| g.util.map(Value::Float) },
    Family { name: "DCGM_FI_DEV_MEM_COPY_UTIL", help: "Memory-controller utilisation, %.", read: |g| g.mem_util.map(Value::Float) },
    Family { name: "DCGM_FI_DEV_XID_ERRORS", help: "Last XID error code the GPU reported (0: none).", read: |g| g.last_xid.map(Value::Count) },
    Family {
        name: "DCGM_FI_DEV_FB_FREE",
        help: "Framebuffer free, MiB.",
        read: |g| {
            let (total, used) = (g.fb_total_mib?, g.fb_used_mib?);
            (total > 0.0).then(|| Value::Float((total - used).max(0.0)))
        },
    },
    Family { name: "DCGM_FI_DEV_FB_USED", help: "Framebuffer used, MiB.", read: |g| g.fb_used_mib.map(Value::Float) },
    Family {
        name: "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
        help: "Corrected (single-bit) volatile ECC errors.",
        read: |g| g.ecc_corrected.map(Value::Count),
    },
    Family {
        name: "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        help: "Uncorrected (double-bit) volatile ECC errors.",
        read: |g| g.ecc_uncorrected.map(Value::Count),
    },
    Family {
        name: "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
        help: "Clock throttle reasons (NVML bitmask).",
        read: |g| g.throttle_reasons.map(Value::Count),
    },
];

/// Writes every family some GPU has a value for, each GPU under its labels.
pub fn encode(encoder: &mut DescriptorEncoder, gpus: &[(Labels, GpuValues)]) -> Result<(), std::fmt::Error> {
    for family in &FAMILIES {
        let mut values = gpus.iter().filter_map(|(labels, g)| Some((labels, (family.read)(g)?))).peekable();
        if values.peek().is_none() {
            continue;
        }
        let mut metric = encoder.encode_descriptor(family.name, family.help, None, MetricType::Gauge)?;
        for (labels, value) in values {
            let mut sample = metric.encode_family(labels)?;
            match value {
                Value::Float(v) => sample.encode_gauge(&v)?,
                Value::Count(v) => sample.encode_gauge(&v)?,
            }
        }
    }
    Ok(())
}

/// [`encode`]'s text for a whole fleet, written straight into `out`: each GPU's label set is
/// rendered (and escaped) once, not once per family. The gateway's scrape of 80,000 GPUs
/// writes about 900,000 samples, and per-sample label encoding was most of its time.
pub fn write_text(out: &mut String, gpus: &[(Labels, GpuValues)]) {
    let rendered: Vec<String> = gpus.iter().map(|(labels, _)| render_labels(labels)).collect();
    for family in &FAMILIES {
        let mut described = false;
        for ((_, values), labels) in gpus.iter().zip(&rendered) {
            let Some(value) = (family.read)(values) else { continue };
            if !described {
                for line in [("# HELP ", family.help), ("# TYPE ", "gauge")] {
                    out.push_str(line.0);
                    out.push_str(family.name);
                    out.push(' ');
                    out.push_str(line.1);
                    out.push('\n');
                }
                described = true;
            }
            out.push_str(family.name);
            out.push_str(labels);
            out.push(' ');
            match value {
                Value::Float(v) => out.push_str(dtoa::Buffer::new().format(v)),
                Value::Count(v) => out.push_str(itoa::Buffer::new().format(v)),
            }
            out.push('\n');
        }
    }
}

/// `{name="value",…}` with OpenMetrics' escapes (backslash, double quote, newline).
fn render_labels(labels: &Labels) -> String {
    let mut text = String::with_capacity(16 + labels.iter().map(|(k, v)| k.len() + v.len() + 4).sum::<usize>());
    text.push('{');
    for (i, (name, value)) in labels.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(name);
        text.push_str("=\"");
        for c in value.chars() {
            match c {
                '\\' => text.push_str("\\\\"),
                '"' => text.push_str("\\\""),
                '\n' => text.push_str("\\n"),
                c => text.push(c),
            }
        }
        text.push('"');
    }
    text.push('}');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus_client::collector::Collector;
    use prometheus_client::encoding::text::encode_registry;
    use prometheus_client::registry::Registry;

    #[derive(Debug)]
    struct Gpus(Vec<(Labels, GpuValues)>);

    impl Collector for Gpus {
        fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
            encode(&mut encoder, &self.0)
        }
    }

    fn render(gpus: Vec<(Labels, GpuValues)>) -> String {
        let mut registry = Registry::default();
        registry.register_collector(Box::new(Gpus(gpus)));
        let mut text = String::new();
        encode_registry(&mut text, &registry).expect("encodes");
        text
    }

    #[test]
    fn families_with_no_value_are_left_out_and_the_rest_keep_dcgm_order() {
        let labels = gpu_labels(3, "GPU-a".into(), "H100".into(), "node-1".into(), Some("550.54".into()));
        let values = GpuValues {
            sm_clock_mhz: Some(1980.0),
            temperature_c: Some(61.5),
            last_xid: Some(79),
            fb_used_mib: Some(1000.0),
            fb_total_mib: Some(81_559.0),
            ..GpuValues::default()
        };
        let text = render(vec![(labels, values)]);
        let families: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("# TYPE ")).collect();
        assert_eq!(
            families,
            [
                "DCGM_FI_DEV_SM_CLOCK gauge",
                "DCGM_FI_DEV_GPU_TEMP gauge",
                "DCGM_FI_DEV_XID_ERRORS gauge",
                "DCGM_FI_DEV_FB_FREE gauge",
                "DCGM_FI_DEV_FB_USED gauge"
            ]
        );
        let labels = r#"gpu="3",UUID="GPU-a",device="nvidia3",modelName="H100",Hostname="node-1",DCGM_FI_DRIVER_VERSION="550.54""#;
        assert!(text.contains(&format!("DCGM_FI_DEV_XID_ERRORS{{{labels}}} 79\n")), "{text}");
        assert!(text.contains(&format!("DCGM_FI_DEV_FB_FREE{{{labels}}} 80559.0\n")), "{text}");
    }

    #[test]
    fn the_fleet_writer_writes_what_the_encoder_writes() {
        let gpu = |index: i64, host: &str| {
            let labels = gpu_labels(index, format!("GPU-{index}"), "H100 \"SXM\"".into(), host.into(), (index == 0).then(|| "550.54".into()));
            let values = GpuValues {
                sm_clock_mhz: Some(1980.0),
                temperature_c: (index != 1).then_some(61.5),
                util: Some(0.1 + index as f64),
                last_xid: Some(79 * index),
                fb_used_mib: Some(1000.0),
                fb_total_mib: Some(81_559.0),
                ecc_uncorrected: Some(3),
                ..GpuValues::default()
            };
            (labels, values)
        };
        let gpus = vec![gpu(0, "node-1"), gpu(1, "node\\with\nodd"), gpu(2, "node-2")];
        let mut text = String::new();
        write_text(&mut text, &gpus);
        assert_eq!(text, render(gpus));
        assert!(text.contains(r#"Hostname="node\\with\nodd""#), "{text}");
    }

    #[test]
    fn free_memory_needs_a_known_size_and_never_goes_negative() {
        let free = |total, used| {
            let values = GpuValues { fb_total_mib: total, fb_used_mib: used, ..GpuValues::default() };
            FAMILIES.iter().find(|f| f.name == "DCGM_FI_DEV_FB_FREE").and_then(|f| (f.read)(&values))
        };
        assert_eq!(free(Some(100.0), Some(30.0)), Some(Value::Float(70.0)));
        assert_eq!(free(Some(100.0), Some(130.0)), Some(Value::Float(0.0)));
        assert_eq!(free(Some(0.0), Some(30.0)), None);
        assert_eq!(free(None, Some(30.0)), None);
        assert_eq!(free(Some(100.0), None), None);
    }
}
