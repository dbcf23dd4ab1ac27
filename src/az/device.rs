//! `device: auto | cpu | cuda | metal`. `auto` takes the best backend that
//! is both compiled in (cargo features `cuda`, `metal`) and present.

use candle_core::Device;

/// The first line of an error: candle's errors can carry a whole
/// backtrace, which is not what a person asked for.
fn first_line(e: &dyn std::fmt::Display) -> String {
    e.to_string().lines().next().unwrap_or("").trim().to_string()
}

/// GPU 0 of CUDA, as one clear line when there is none. The CUDA libraries
/// are loaded at run time, and a machine without the driver may panic
/// there rather than return an error: caught, and said in the same words.
fn open_cuda() -> Result<Device, String> {
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let opened = std::panic::catch_unwind(|| Device::new_cuda(0));
    std::panic::set_hook(quiet);
    match opened {
        Ok(Ok(d)) => Ok(d),
        Ok(Err(e)) => Err(first_line(&e)),
        Err(p) => Err(p
            .downcast_ref::<String>()
            .map(|s| first_line(s))
            .or_else(|| p.downcast_ref::<&str>().map(|s| first_line(s)))
            .unwrap_or_else(|| "the CUDA libraries could not be loaded".into())),
    }
}

pub fn resolve_device(name: &str) -> Result<Device, String> {
    match name {
        "cpu" => Ok(Device::Cpu),
        "cuda" => {
            if !cfg!(feature = "cuda") {
                return Err("device `cuda`: this c4sim was built without CUDA; rebuild with `--features cuda`".into());
            }
            open_cuda().map_err(|why| {
                format!("device `cuda`: no CUDA GPU could be opened ({why}); `device: auto` uses the CPU when there is none")
            })
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
                if let Ok(d) = open_cuda() {
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
