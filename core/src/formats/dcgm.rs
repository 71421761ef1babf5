//! NVIDIA DCGM exporter's `/metrics`: GPU telemetry in the Prometheus text exposition, one
//! sample per GPU per field, each labelled with the GPU's identity.
//!
//! Read from the exporter's documented default counters (`etc/default-counters.csv`): field
//! names `DCGM_FI_DEV_GPU_UTIL` (%), `DCGM_FI_DEV_FB_USED` / `DCGM_FI_DEV_FB_FREE` (MiB),
//! `DCGM_FI_DEV_POWER_USAGE` (W), `DCGM_FI_DEV_SM_CLOCK` / `DCGM_FI_DEV_MEM_CLOCK` (MHz); labels
//! `gpu` (index), `UUID`, `device`, `pci_bus_id`, `modelName` (the GPU's product name, what
//! establishes a receipt's `gpu_sku`) and `Hostname` (`hostname` in newer exporters). A body
//! with no `DCGM_FI_` family is not a DCGM exporter's.

use serde::{Deserialize, Serialize};

use super::prometheus::Exposition;

/// GPU utilisation, percent.
pub const GPU_UTIL: &str = "DCGM_FI_DEV_GPU_UTIL";
/// Framebuffer memory used, MiB.
pub const FB_USED: &str = "DCGM_FI_DEV_FB_USED";
/// Framebuffer memory free, MiB.
pub const FB_FREE: &str = "DCGM_FI_DEV_FB_FREE";
/// Power draw, W.
pub const POWER_USAGE: &str = "DCGM_FI_DEV_POWER_USAGE";
/// SM clock, MHz.
pub const SM_CLOCK: &str = "DCGM_FI_DEV_SM_CLOCK";
/// Memory clock, MHz.
pub const MEM_CLOCK: &str = "DCGM_FI_DEV_MEM_CLOCK";

/// The label naming the GPU's product.
pub const MODEL_NAME: &str = "modelName";

/// One GPU as one scrape reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gpu {
    /// `UUID` when the exporter gives one, else `gpu` (the index).
    pub id: String,
    /// `modelName`.
    pub model_name: Option<String>,
    /// [`GPU_UTIL`], percent.
    pub util_pct: Option<f64>,
    /// [`FB_USED`], MiB.
    pub fb_used_mib: Option<f64>,
    /// [`FB_FREE`], MiB.
    pub fb_free_mib: Option<f64>,
    /// [`POWER_USAGE`], W.
    pub power_w: Option<f64>,
    /// [`SM_CLOCK`], MHz.
    pub sm_clock_mhz: Option<f64>,
    /// [`MEM_CLOCK`], MHz.
    pub mem_clock_mhz: Option<f64>,
}

/// Why a body is not a DCGM exporter's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DcgmError {
    /// No `DCGM_FI_` family at all.
    #[error("no DCGM_FI_ field in the body: not an NVIDIA DCGM exporter's /metrics")]
    NotDcgm,
    /// A DCGM sample without `UUID` or `gpu`: it cannot be attributed to a GPU.
    #[error("line {line}: {name} names no GPU (neither a UUID nor a gpu label)")]
    Unattributed {
        /// The sample's line.
        line: usize,
        /// The sample's name.
        name: String,
    },
}

/// Every GPU the exposition reports, in the order first seen.
pub fn read(m: &Exposition) -> Result<Vec<Gpu>, DcgmError> {
    if !m.families().iter().any(|f| f.name.starts_with("DCGM_FI_")) {
        return Err(DcgmError::NotDcgm);
    }
    let mut gpus: Vec<Gpu> = Vec::new();
    // GPU id → its place in `gpus`: a body of thousands of GPUs is read in linear time.
    let mut places: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for family in m
        .families()
        .iter()
        .filter(|f| f.name.starts_with("DCGM_FI_"))
    {
        for s in &family.samples {
            let Some(id) = s.label("UUID").or_else(|| s.label("gpu")) else {
                return Err(DcgmError::Unattributed {
                    line: s.line,
                    name: s.name.clone(),
                });
            };
            let index = match places.get(id) {
                Some(&i) => i,
                None => {
                    places.insert(id.to_owned(), gpus.len());
                    gpus.push(Gpu {
                        id: id.to_owned(),
                        model_name: None,
                        util_pct: None,
                        fb_used_mib: None,
                        fb_free_mib: None,
                        power_w: None,
                        sm_clock_mhz: None,
                        mem_clock_mhz: None,
                    });
                    gpus.len() - 1
                }
            };
            let Some(gpu) = gpus.get_mut(index) else {
                continue;
            };
            if gpu.model_name.is_none() {
                gpu.model_name = s
                    .label(MODEL_NAME)
                    .filter(|v| !v.trim().is_empty())
                    .map(str::to_owned);
            }
            let value = s.value.finite().map(|d| d.to_f64());
            let slot = match s.name.as_str() {
                GPU_UTIL => &mut gpu.util_pct,
                FB_USED => &mut gpu.fb_used_mib,
                FB_FREE => &mut gpu.fb_free_mib,
                POWER_USAGE => &mut gpu.power_w,
                SM_CLOCK => &mut gpu.sm_clock_mhz,
                MEM_CLOCK => &mut gpu.mem_clock_mhz,
                _ => continue,
            };
            *slot = value;
        }
    }
    Ok(gpus)
}

/// Whether the body says it is a simulation, not a GPU's telemetry: a HELP text that starts
/// "SIMULATED", or a GPU whose UUID or host name names a simulator (`loadproof sim` writes all
/// three).
pub fn simulated(m: &Exposition) -> bool {
    m.families().iter().any(|f| {
        f.name.starts_with("DCGM_FI_")
            && (f
                .help
                .as_deref()
                .is_some_and(|h| h.starts_with("SIMULATED"))
                || f.samples.iter().any(|s| {
                    s.label("UUID").is_some_and(|u| u.contains("simulated"))
                        || s.label("Hostname")
                            .or_else(|| s.label("hostname"))
                            .is_some_and(|h| h == "loadproof-sim")
                }))
    })
}

/// Whether every GPU names its model (a GPU that names none leaves the exporter's word on the
/// GPU incomplete: no other GPU speaks for it).
pub fn every_gpu_named(gpus: &[Gpu]) -> bool {
    !gpus.is_empty() && gpus.iter().all(|g| g.model_name.is_some())
}

/// The one GPU model every GPU names, or the distinct names when they differ (empty: none
/// named).
pub fn model_names(gpus: &[Gpu]) -> Vec<String> {
    let mut names: Vec<String> = gpus.iter().filter_map(|g| g.model_name.clone()).collect();
    names.sort();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::prometheus;

    /// Written from dcgm-exporter's documented default counters and label set (not captured from
    /// a GPU: there is none here).
    const TWO_H100: &str = "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n\
DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\",pci_bus_id=\"00000000:1B:00.0\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"n1\"} 97\n\
DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-b\",pci_bus_id=\"00000000:43:00.0\",device=\"nvidia1\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"n1\"} 3\n\
# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n# TYPE DCGM_FI_DEV_FB_USED gauge\n\
DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\",pci_bus_id=\"00000000:1B:00.0\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"n1\"} 71234\n\
# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n\
DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-a\",pci_bus_id=\"00000000:1B:00.0\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"n1\"} 612.5\n";

    #[test]
    fn each_gpu_is_read_by_its_uuid_with_its_model_name() {
        let m = prometheus::parse(TWO_H100.as_bytes()).unwrap();
        let gpus = read(&m).unwrap();
        assert_eq!(gpus.len(), 2);
        assert_eq!(gpus[0].id, "GPU-a");
        assert_eq!(gpus[0].util_pct, Some(97.0));
        assert_eq!(gpus[0].fb_used_mib, Some(71234.0));
        assert_eq!(gpus[0].power_w, Some(612.5));
        assert_eq!(gpus[1].util_pct, Some(3.0));
        assert_eq!(gpus[1].fb_used_mib, None);
        assert_eq!(model_names(&gpus), ["NVIDIA H100 80GB HBM3"]);
    }

    /// Adversarial pass, finding 4: GPUs were found by a linear search each, so a body of
    /// thousands of GPUs took seconds per scrape (a 37 KB stream of such scrapes, 24 s). Each
    /// sample is now placed by a map.
    #[test]
    fn a_dcgm_reader_is_linear_in_gpus() {
        let mut body = String::from("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n");
        for g in 0..20_000 {
            body.push_str(&format!(
                "DCGM_FI_DEV_GPU_UTIL{{gpu=\"{g}\",UUID=\"GPU-{g}\",modelName=\"X\"}} 1\n"
            ));
        }
        let m = prometheus::parse(body.as_bytes()).unwrap();
        let gpus = read(&m).unwrap();
        assert_eq!(gpus.len(), 20_000);
        assert_eq!(gpus[19_999].id, "GPU-19999");
        assert!(every_gpu_named(&gpus));
    }

    #[test]
    fn a_body_without_dcgm_fields_is_not_a_dcgm_exporters() {
        let m = prometheus::parse(b"vllm:num_requests_running 1\n").unwrap();
        assert_eq!(read(&m), Err(DcgmError::NotDcgm));
        let m = prometheus::parse(b"DCGM_FI_DEV_GPU_UTIL 1\n").unwrap();
        assert!(matches!(read(&m), Err(DcgmError::Unattributed { .. })));
    }
}
