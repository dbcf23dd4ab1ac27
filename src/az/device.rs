//! `device: auto | cpu | cuda | metal`. `auto` takes the best backend that
//! is both compiled in (cargo features `cuda`, `metal`) and present.

use candle_core::Device;

pub fn resolve_device(name: &str) -> Result<Device, String> {
    match name {
        "cpu" => Ok(Device::Cpu),
        "cuda" => {
            if !cfg!(feature = "cuda") {
                return Err("device `cuda`: this c4sim was built without CUDA; rebuild with `--features cuda`".into());
            }
            Device::new_cuda(0).map_err(|e| format!("device `cuda`: {e}"))
        }
        "metal" => {
            if !cfg!(feature = "metal") {
                return Err(
                    "device `metal`: this c4sim was built without Metal; rebuild with `--features metal`".into(),
                );
            }
            Device::new_metal(0).map_err(|e| format!("device `metal`: {e}"))
        }
        "auto" => {
            if candle_core::utils::cuda_is_available() {
                if let Ok(d) = Device::new_cuda(0) {
                    return Ok(d);
                }
            }
            if candle_core::utils::metal_is_available() {
                if let Ok(d) = Device::new_metal(0) {
                    return Ok(d);
                }
            }
            Ok(Device::Cpu)
        }
        other => Err(format!("unknown device `{other}`; allowed: auto, cpu, cuda, metal")),
    }
}

/// A short name for logs and metadata.
pub fn device_name(d: &Device) -> &'static str {
    match d {
        Device::Cpu => "cpu",
        Device::Cuda(_) => "cuda",
        Device::Metal(_) => "metal",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_always_and_auto_falls_back() {
        assert!(resolve_device("cpu").unwrap().is_cpu());
        let auto = resolve_device("auto").unwrap();
        if !cfg!(any(feature = "cuda", feature = "metal")) {
            assert!(auto.is_cpu());
            assert!(resolve_device("cuda").unwrap_err().contains("--features cuda"));
            assert!(resolve_device("metal").unwrap_err().contains("--features metal"));
        }
        assert!(resolve_device("tpu").is_err());
    }
}
