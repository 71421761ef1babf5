//! `GET /dcgm/metrics` of `loadproof sim`: a *simulated* NVIDIA DCGM exporter, so the quick
//! start can show GPU telemetry as evidence without a GPU.
//!
//! The field names, types and labels are the exporter's documented default counters
//! (`DCGM_FI_DEV_GPU_UTIL`, `_FB_USED`, `_FB_FREE`, `_POWER_USAGE`, `_SM_CLOCK`, `_MEM_CLOCK`;
//! `gpu`, `UUID`, `device`, `modelName`, `Hostname`); everything else says it is simulated:
//! every HELP text starts "SIMULATED by loadproof sim", the UUID and host name name the
//! simulator, and `modelName` is the simulator's own `--gpu-sku` ("none (simulator)" unless
//! told otherwise), so the audit hears the same GPU from it as from `loadproof_sim_info`. The
//! values follow the simulated engine: busy while sequences run, idle otherwise.

use std::fmt::Write as _;

use super::metrics::{EngineMetrics, ExpositionInfo};

/// The exposition for the engine's state now.
pub fn render(m: &EngineMetrics, info: &ExpositionInfo) -> String {
    let busy = m.running > 0;
    let util = if busy { 35 + m.running.min(65) } else { 0 };
    let used_fraction = if info.kv_capacity_tokens == 0 {
        0.0
    } else {
        m.kv_used_tokens as f64 / info.kv_capacity_tokens as f64
    };
    let fb_used = 1024 + (used_fraction * 70_000.0).round() as u64;
    let fields: [(&str, &str, String); 6] = [
        (
            "DCGM_FI_DEV_SM_CLOCK",
            "SM clock frequency (in MHz).",
            if busy { "1980" } else { "345" }.to_owned(),
        ),
        (
            "DCGM_FI_DEV_MEM_CLOCK",
            "Memory clock frequency (in MHz).",
            "2619".to_owned(),
        ),
        (
            "DCGM_FI_DEV_POWER_USAGE",
            "Power draw (in W).",
            format!("{:.6}", 70.0 + 5.5 * util as f64),
        ),
        (
            "DCGM_FI_DEV_GPU_UTIL",
            "GPU utilization (in %).",
            util.to_string(),
        ),
        (
            "DCGM_FI_DEV_FB_FREE",
            "Framebuffer memory free (in MiB).",
            (81_559u64.saturating_sub(fb_used)).to_string(),
        ),
        (
            "DCGM_FI_DEV_FB_USED",
            "Framebuffer memory used (in MiB).",
            fb_used.to_string(),
        ),
    ];
    let labels = format!(
        "gpu=\"0\",UUID=\"GPU-simulated-by-loadproof-sim-0\",pci_bus_id=\"00000000:00:00.0\",device=\"nvidia0\",modelName=\"{}\",Hostname=\"loadproof-sim\"",
        escape(&info.gpu_sku)
    );
    let mut out = String::from(
        "# loadproof sim: a SIMULATED NVIDIA DCGM exporter (no GPU is measured; the values follow the simulated engine)\n",
    );
    for (name, help, value) in fields {
        let _ = writeln!(out, "# HELP {name} SIMULATED by loadproof sim: {help}");
        let _ = writeln!(out, "# TYPE {name} gauge");
        let _ = writeln!(out, "{name}{{{labels}}} {value}");
    }
    out
}

/// A label value as the exposition writes it.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_simulated_exporter_reads_as_dcgm_and_names_the_sims_gpu() {
        let info = ExpositionInfo {
            model_name: "sim".into(),
            kv_capacity_tokens: 1000,
            start_unix_secs: 1.0,
            version: "0.1.0",
            revision: "r".into(),
            gpu_sku: "none (simulator)".into(),
            settings: vec![],
        };
        let mut m = EngineMetrics::new();
        m.running = 3;
        m.kv_used_tokens = 500;
        let text = render(&m, &info);
        let parsed = loadproof_core::formats::prometheus::parse(text.as_bytes()).unwrap();
        let gpus = loadproof_core::formats::dcgm::read(&parsed).unwrap();
        assert_eq!(gpus.len(), 1);
        assert_eq!(gpus[0].model_name.as_deref(), Some("none (simulator)"));
        assert_eq!(gpus[0].util_pct, Some(38.0));
        assert_eq!(gpus[0].fb_used_mib, Some(36024.0));
        assert!(
            text.lines()
                .filter(|l| l.starts_with("# HELP"))
                .all(|l| l.contains("SIMULATED"))
        );
    }
}
