//! `egs-node-agent`: the per-node GPU agent (NVML or simulated GPUs, metrics, registration).
//! Not built yet; this binary only says so, so a deployment that runs it fails loudly.

fn main() -> std::process::ExitCode {
    eprintln!("egs-node-agent is not built yet: GPU telemetry arrives with the node-agent issue");
    std::process::ExitCode::from(2)
}
