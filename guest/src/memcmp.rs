//! `memcmp` and `bcmp` a word at a time. wasi-libc's compare one byte per
//! step, and every comparison of strings in the component goes through
//! them: paths sorted and looked up in the index and the walk, map keys,
//! the keys of a page.

/// # Safety
/// As C's `memcmp`: `a` and `b` readable for `n` bytes.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    let mut i = 0;
    while i + 8 <= n {
        let x = a.add(i).cast::<u64>().read_unaligned();
        let y = b.add(i).cast::<u64>().read_unaligned();
        if x != y {
            // The first byte that differs is the lowest (little-endian).
            let shift = (x ^ y).trailing_zeros() & !7;
            return i32::from((x >> shift) as u8) - i32::from((y >> shift) as u8);
        }
        i += 8;
    }
    while i < n {
        let (x, y) = (*a.add(i), *b.add(i));
        if x != y {
            return i32::from(x) - i32::from(y);
        }
        i += 1;
    }
    0
}

/// # Safety
/// As C's `bcmp`: `a` and `b` readable for `n` bytes.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    memcmp(a, b, n)
}

#[cfg(test)]
mod tests {
    fn check(x: &[u8], y: &[u8]) {
        let n = x.len().min(y.len());
        let got = unsafe { super::memcmp(x.as_ptr(), y.as_ptr(), n) }.signum();
        assert_eq!(got, x[..n].cmp(&y[..n]) as i32, "{x:?} {y:?}");
        assert_eq!(unsafe { super::bcmp(x.as_ptr(), y.as_ptr(), n) } == 0, x[..n] == y[..n]);
    }

    #[test]
    fn compares_as_bytes_do() {
        for len in 0..24 {
            let base: Vec<u8> = (0..len as u8).map(|i| i.wrapping_mul(37)).collect();
            check(&base, &base);
            for at in 0..len {
                for (p, q) in [(0u8, 0xff), (0x7f, 0x80), (1, 2), (0xfe, 0xff), (0x10, 0x20), (0x40, 0x80)] {
                    let (mut x, mut y) = (base.clone(), base.clone());
                    (x[at], y[at]) = (p, q);
                    // Later bytes differing the other way must not count.
                    if at + 1 < len {
                        (x[at + 1], y[at + 1]) = (0xff, 0);
                    }
                    check(&x, &y);
                    check(&y, &x);
                }
            }
        }
    }
}
