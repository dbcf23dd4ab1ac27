//! 3×3 convolutions as matrix products: unfolding each position's 3×3
//! neighbourhoods into rows (im2col) and its adjoint. One module of its own
//! because inference ([`super::inference`]), candle training
//! ([`super::network`]) and the hand-written backward pass
//! ([`super::hosttrain`]) all convolve this way, and none of them should
//! import another for it.

/// Unfolds the 3×3 neighbourhoods of `ns` positions (`x`: `[ns·h·w, cin]`,
/// pixels-major) into `cols` (`[ns·h·w, 9·cin]`, row `(dy·3 + dx)·cin + c`),
/// zero outside the board. Shared by inference and training (where
/// [`fold3`] is its backward pass).
pub fn unfold3(x: &[f32], ns: usize, h: usize, w: usize, cin: usize, cols: &mut Vec<f32>) {
    cols.clear();
    cols.resize(ns * h * w * 9 * cin, 0.0);
    for_each_tap(ns, h, w, cin, |pixel, tap| {
        cols[tap..tap + cin].copy_from_slice(&x[pixel..pixel + cin]);
    });
}

/// The adjoint of [`unfold3`]: adds each unfolded row's entries back onto
/// the pixels they came from (`cols`: `[ns·h·w, 9·cin]` → `[ns·h·w, cin]`).
pub fn fold3(cols: &[f32], ns: usize, h: usize, w: usize, cin: usize) -> Vec<f32> {
    let mut x = vec![0f32; ns * h * w * cin];
    for_each_tap(ns, h, w, cin, |pixel, tap| {
        for (a, b) in x[pixel..pixel + cin].iter_mut().zip(&cols[tap..tap + cin]) {
            *a += b;
        }
    });
    x
}

/// The one index walk of [`unfold3`] and [`fold3`]: for every output pixel
/// and every in-board cell of its 3×3 neighbourhood, calls
/// `f(pixel, tap)` with the offset of that neighbour's `cin` values in
/// `[ns·h·w, cin]` and of its slot in the unfolded `[ns·h·w, 9·cin]`.
#[inline(always)]
fn for_each_tap(ns: usize, h: usize, w: usize, cin: usize, mut f: impl FnMut(usize, usize)) {
    let k = 9 * cin;
    for s in 0..ns {
        for y in 0..h {
            for xx in 0..w {
                let row = ((s * h + y) * w + xx) * k;
                for dy in 0..3 {
                    let yy = y as isize + dy as isize - 1;
                    if yy < 0 || yy >= h as isize {
                        continue;
                    }
                    for dx in 0..3 {
                        let xs = xx as isize + dx as isize - 1;
                        if xs < 0 || xs >= w as isize {
                            continue;
                        }
                        f(
                            ((s * h + yy as usize) * w + xs as usize) * cin,
                            row + (dy * 3 + dx) * cin,
                        );
                    }
                }
            }
        }
    }
}
