//! `device: auto | cpu | cuda | metal`. `auto` takes the best backend that
//! is both compiled in (cargo features `cuda`, `metal`) and present.

use candle_core::Device;

/// Why `device:` names no usable backend. The texts are what a person
/// reads at the top of a failed run.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// A backend this binary was compiled without (`--features cuda` / `metal`).
    #[error("device `{name}`: this c4sim was built without {label}; rebuild with `--features {name}`")]
    NotBuilt { name: &'static str, label: &'static str },
    /// Compiled in, but no GPU could be opened; `why` is the first line of
    /// candle's error (or of the panic the CUDA loader raised).
    #[error("device `cuda`: no CUDA GPU could be opened ({why}); `device: auto` uses the CPU when there is none")]
    NoCuda { why: String },
    #[error("device `metal`: {0}")]
    Metal(#[source] candle_core::Error),
    #[error("unknown device `{0}`; allowed: auto, cpu, cuda, metal")]
    Unknown(String),
}

/// The first line of an error: candle's errors can carry a whole
/// backtrace, which is not what a person asked for.
fn first_line(e: &dyn std::fmt::Display) -> String {
    e.to_string().lines().next().unwrap_or("").trim().to_string()
}

/// GPU 0 of CUDA, as one clear line when there is none. The CUDA libraries
/// are loaded at run time, and a machine without the driver may panic
/// there rather than return an error: caught, and said in the same words.
fn open_cuda() -> Result<Device, DeviceError> {
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let opened = std::panic::catch_unwind(|| Device::new_cuda(0));
    std::panic::set_hook(quiet);
    let why = match opened {
        Ok(Ok(d)) => return Ok(d),
        Ok(Err(e)) => first_line(&e),
        Err(p) => p
            .downcast_ref::<String>()
            .map(|s| first_line(s))
            .or_else(|| p.downcast_ref::<&str>().map(|s| first_line(s)))
            .unwrap_or_else(|| "the CUDA libraries could not be loaded".into()),
    };
    Err(DeviceError::NoCuda { why })
}

/// The backend `device:` names; `auto` falls back to the CPU.
pub fn resolve_device(name: &str) -> Result<Device, DeviceError> {
    match name {
        "cpu" => Ok(Device::Cpu),
        "cuda" => {
            if !cfg!(feature = "cuda") {
                return Err(DeviceError::NotBuilt {
                    name: "cuda",
                    label: "CUDA",
                });
            }
            open_cuda()
        }
        "metal" => {
            if !cfg!(feature = "metal") {
                return Err(DeviceError::NotBuilt {
                    name: "metal",
                    label: "Metal",
                });
            }
            Device::new_metal(0).map_err(DeviceError::Metal)
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
        other => Err(DeviceError::Unknown(other.to_string())),
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
            assert!(resolve_device("cuda")
                .unwrap_err()
                .to_string()
                .contains("--features cuda"));
            assert!(resolve_device("metal")
                .unwrap_err()
                .to_string()
                .contains("--features metal"));
        }
        assert!(resolve_device("tpu").is_err());
    }
}
