//! The AlphaZero engine: pure computation on positions and networks, no
//! actors and no scenario. The `alphazero` player kind (`players::alphazero`)
//! and training (`train`) are built on it.
//!
//! | module | job |
//! |---|---|
//! | [`encode`] | input planes, training samples, the mirror |
//! | [`network`] | the residual network and AdamW in candle (any device) |
//! | [`cpu_trainer`] | training steps on the CPU with a hand-written backward pass (checked against candle) |
//! | [`im2col`] | 3×3 convolutions as products: unfold (im2col) and its adjoint, shared by inference and both training paths |
//! | [`inference`] | the folded fast CPU path, the candle (GPU) path, the position cache |
//! | [`mcts`] | PUCT search in steps, so leaves of many games can share a batch |
//! | [`gumbel`] | Gumbel root search for self-play: sequential halving, improved policy targets |
//! | [`meta`] | `meta.json`: a model's board, network shape, iteration and per-iteration figures (pure data) |
//! | [`device`] | `device: auto | cpu | cuda | metal` |

pub mod cpu_trainer;
pub mod device;
pub mod encode;
pub mod gumbel;
pub mod im2col;
pub mod inference;
pub mod mcts;
pub mod meta;
pub mod network;
pub mod optimizer;

/// Keeps freed tensor buffers in the heap instead of returning them to the
/// system. glibc serves allocations above 128 KiB (most activations) with
/// fresh `mmap`s and unmaps them on free, so every training step paid page
/// faults and cross-core TLB shootdowns for each tensor: `perf` showed the
/// kernel's `smp_call_function_many_cond` among the top entries. Raising
/// the thresholds lets the heap reuse the same memory step after step.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; any value is valid.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 512 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
    }
}
