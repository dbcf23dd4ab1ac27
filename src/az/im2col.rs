//! 3×3 convolutions as matrix products: unfolding each position's 3×3
//! neighbourhoods into rows (im2col) and its adjoint. One module of its own
//! because inference ([`super::inference`]), candle training
//! ([`super::network`]) and the hand-written backward pass
//! ([`super::cpu_trainer`]) all convolve this way, and none of them should
//! import another for it.

/// Unfolds the 3×3 neighbourhoods of `ns` positions (`x`: `[ns·h·w, cin]`,
/// pixels-major) into `cols` (`[ns·h·w, 9·cin]`, row `(dy·3 + dx)·cin + c`),
/// zero outside the board. Shared by inference and training (where
/// [`fold3`] is its backward pass, or the unfolding of the output gradient
/// against the flipped kernel: [`flip3`]).
///
/// `cols` is written front to back, each slot once (a copy on the board, a
/// zero off it), so a reused buffer is never cleared first: in a profile of
/// self-play, zeroing the whole buffer took as many samples as the copies
/// (about 9% each), though a whole iteration showed no self-play gain
/// beyond noise (models/README.md, Part six).
pub fn unfold3(x: &[f32], ns: usize, h: usize, w: usize, cin: usize, cols: &mut Vec<f32>) {
    cols.clear();
    cols.reserve(ns * h * w * 9 * cin);
    for_each_tap(ns, h, w, cin, |pixel, _tap| match pixel {
        Some(p) => cols.extend_from_slice(&x[p..p + cin]),
        None => cols.resize(cols.len() + cin, 0.0),
    });
}

/// The kernel of a 3×3 convolution's input gradient: `w` is `[9·cin, cout]`
/// (row `tap·cin + c`); the result is `[9·cout, cin]` with row
/// `tap·cout + o` holding `w`'s row `(8 − tap)·cin + ·`, column `o`. Then
/// `dx = unfold3(dy) · flip3(w)`: the same arithmetic as `fold3(dy · wᵀ)`
/// without the `[ns·h·w, 9·cin]` intermediate (written, zeroed and read
/// back), and a product with a long inner dimension, which `gemm` runs
/// faster than one with `cout` (often 32) inside.
pub fn flip3(w: &[f32], cin: usize, cout: usize) -> Vec<f32> {
    let mut out = vec![0f32; 9 * cout * cin];
    for tap in 0..9 {
        for c in 0..cin {
            for o in 0..cout {
                out[(tap * cout + o) * cin + c] = w[((8 - tap) * cin + c) * cout + o];
            }
        }
    }
    out
}

/// The adjoint of [`unfold3`]: adds each unfolded row's entries back onto
/// the pixels they came from (`cols`: `[ns·h·w, 9·cin]` → `[ns·h·w, cin]`).
pub fn fold3(cols: &[f32], ns: usize, h: usize, w: usize, cin: usize) -> Vec<f32> {
    let mut x = vec![0f32; ns * h * w * cin];
    for_each_tap(ns, h, w, cin, |pixel, tap| {
        if let Some(p) = pixel {
            for (a, b) in x[p..p + cin].iter_mut().zip(&cols[tap..tap + cin]) {
                *a += b;
            }
        }
    });
    x
}

/// The one index walk of [`unfold3`] and [`fold3`]: for every output pixel
/// and every cell of its 3×3 neighbourhood, in the order of the unfolded
/// rows, calls `f(pixel, tap)` with the offset of that neighbour's `cin`
/// values in `[ns·h·w, cin]` (`None` off the board) and of its slot in the
/// unfolded `[ns·h·w, 9·cin]`.
#[inline(always)]
fn for_each_tap(ns: usize, h: usize, w: usize, cin: usize, mut f: impl FnMut(Option<usize>, usize)) {
    let k = 9 * cin;
    for s in 0..ns {
        for y in 0..h {
            for xx in 0..w {
                let row = ((s * h + y) * w + xx) * k;
                for dy in 0..3 {
                    let yy = (y + dy).checked_sub(1).filter(|&v| v < h);
                    for dx in 0..3 {
                        let xs = (xx + dx).checked_sub(1).filter(|&v| v < w);
                        let pixel = yy.zip(xs).map(|(yy, xs)| ((s * h + yy) * w + xs) * cin);
                        f(pixel, row + (dy * 3 + dx) * cin);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(n: usize, seed: u32) -> Vec<f32> {
        (0..n)
            .map(|i| (((i as u32).wrapping_mul(2654435761) ^ seed) % 1000) as f32 / 500.0 - 1.0)
            .collect()
    }

    /// The unfolding by definition: slot (pixel, tap, c) holds the
    /// neighbour's value, or 0 off the board; a dirty reused buffer does not
    /// leak into it.
    #[test]
    fn unfold3_matches_its_definition_in_a_reused_buffer() {
        let (ns, h, w, cin) = (2, 3, 4, 5);
        let x = numbers(ns * h * w * cin, 7);
        let mut cols = vec![9.0; 10_000];
        unfold3(&x, ns, h, w, cin, &mut cols);
        assert_eq!(cols.len(), ns * h * w * 9 * cin);
        for s in 0..ns {
            for y in 0..h as isize {
                for xx in 0..w as isize {
                    for tap in 0..9isize {
                        let (yy, xs) = (y + tap / 3 - 1, xx + tap % 3 - 1);
                        for c in 0..cin {
                            let got = cols[(((s * h + y as usize) * w + xx as usize) * 9 + tap as usize) * cin + c];
                            let want = if yy < 0 || xs < 0 || yy >= h as isize || xs >= w as isize {
                                0.0
                            } else {
                                x[((s * h + yy as usize) * w + xs as usize) * cin + c]
                            };
                            assert_eq!(got, want, "sample {s}, pixel ({y}, {xx}), tap {tap}, channel {c}");
                        }
                    }
                }
            }
        }
    }

    /// `unfold3(dy) · flip3(w)` is the input gradient `fold3(dy · wᵀ)`.
    #[test]
    fn the_flipped_kernel_gives_the_input_gradient() {
        let (ns, h, w, cin, cout) = (2, 4, 5, 3, 4);
        let m = ns * h * w;
        let wt = numbers(9 * cin * cout, 3);
        let dy = numbers(m * cout, 11);
        // The old way: dcols = dy · wᵀ, folded back onto the pixels.
        let mut dcols = vec![0f32; m * 9 * cin];
        for p in 0..m {
            for r in 0..9 * cin {
                dcols[p * 9 * cin + r] = (0..cout).map(|o| dy[p * cout + o] * wt[r * cout + o]).sum();
            }
        }
        let want = fold3(&dcols, ns, h, w, cin);
        // The new way.
        let mut u = Vec::new();
        unfold3(&dy, ns, h, w, cout, &mut u);
        let f = flip3(&wt, cin, cout);
        for p in 0..m {
            for c in 0..cin {
                let got: f32 = (0..9 * cout).map(|r| u[p * 9 * cout + r] * f[r * cin + c]).sum();
                let d = (got - want[p * cin + c]).abs();
                assert!(d < 1e-4, "pixel {p}, channel {c}: {got} against {}", want[p * cin + c]);
            }
        }
    }
}
