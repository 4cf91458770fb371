//! The unstable sort of GNU libstdc++ (`std::sort`: introsort, then a final
//! insertion sort), written out so that we order equal elements exactly as
//! LogGOPSim does when it sorts newly executable operations by type.
//!
//! `std::sort` is not stable: for more than 16 elements the relative order of
//! equal keys depends on the algorithm's pivots and swaps. LogGOPSim's results
//! depend on that order (it decides which of several sends becoming ready at
//! the same time goes first), so matching its finish times to the nanosecond
//! requires the same permutation. The algorithm below follows the structure of
//! GCC's implementation (median-of-three pivot, unguarded partition, depth
//! limit 2*floor(log2 n) with a heap-sort fallback, threshold 16).

const THRESHOLD: usize = 16;

/// Sort `v` by `key` ascending, permuting equal keys as libstdc++'s `std::sort` does.
pub fn sort_by_key<T: Copy, K: Ord + Copy>(v: &mut [T], key: impl Fn(&T) -> K) {
    let less = |a: &T, b: &T| key(a) < key(b);
    let n = v.len();
    if n < 2 {
        return;
    }
    let depth = 2 * (usize::BITS - 1 - n.leading_zeros()) as usize;
    introsort_loop(v, 0, n, depth, &less);
    final_insertion_sort(v, &less);
}

fn introsort_loop<T: Copy>(
    v: &mut [T],
    first: usize,
    mut last: usize,
    mut depth: usize,
    less: &impl Fn(&T, &T) -> bool,
) {
    while last - first > THRESHOLD {
        if depth == 0 {
            heap_sort(&mut v[first..last], less);
            return;
        }
        depth -= 1;
        let cut = partition_pivot(v, first, last, less);
        introsort_loop(v, cut, last, depth, less);
        last = cut;
    }
}

fn partition_pivot<T: Copy>(
    v: &mut [T],
    first: usize,
    last: usize,
    less: &impl Fn(&T, &T) -> bool,
) -> usize {
    let mid = first + (last - first) / 2;
    move_median_to_first(v, first, first + 1, mid, last - 1, less);
    unguarded_partition(v, first + 1, last, first, less)
}

fn move_median_to_first<T: Copy>(
    v: &mut [T],
    result: usize,
    a: usize,
    b: usize,
    c: usize,
    less: &impl Fn(&T, &T) -> bool,
) {
    let pick = if less(&v[a], &v[b]) {
        if less(&v[b], &v[c]) {
            b
        } else if less(&v[a], &v[c]) {
            c
        } else {
            a
        }
    } else if less(&v[a], &v[c]) {
        a
    } else if less(&v[b], &v[c]) {
        c
    } else {
        b
    };
    v.swap(result, pick);
}

fn unguarded_partition<T: Copy>(
    v: &mut [T],
    mut first: usize,
    mut last: usize,
    pivot: usize,
    less: &impl Fn(&T, &T) -> bool,
) -> usize {
    loop {
        while less(&v[first], &v[pivot]) {
            first += 1;
        }
        last -= 1;
        while less(&v[pivot], &v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

fn final_insertion_sort<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    if v.len() > THRESHOLD {
        insertion_sort(&mut v[..THRESHOLD], less);
        for i in THRESHOLD..v.len() {
            unguarded_linear_insert(v, i, less);
        }
    } else {
        insertion_sort(v, less);
    }
}

fn insertion_sort<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    for i in 1..v.len() {
        if less(&v[i], &v[0]) {
            let val = v[i];
            v.copy_within(0..i, 1);
            v[0] = val;
        } else {
            unguarded_linear_insert(v, i, less);
        }
    }
}

fn unguarded_linear_insert<T: Copy>(v: &mut [T], mut last: usize, less: &impl Fn(&T, &T) -> bool) {
    let val = v[last];
    while less(&val, &v[last - 1]) {
        v[last] = v[last - 1];
        last -= 1;
    }
    v[last] = val;
}

fn heap_sort<T: Copy>(v: &mut [T], less: &impl Fn(&T, &T) -> bool) {
    let len = v.len();
    if len >= 2 {
        let mut parent = (len - 2) / 2;
        loop {
            let val = v[parent];
            adjust_heap(v, parent, len, val, less);
            if parent == 0 {
                break;
            }
            parent -= 1;
        }
    }
    let mut last = len;
    while last > 1 {
        last -= 1;
        let val = v[last];
        v[last] = v[0];
        adjust_heap(&mut v[..last], 0, last, val, less);
    }
}

fn adjust_heap<T: Copy>(
    v: &mut [T],
    mut hole: usize,
    len: usize,
    val: T,
    less: &impl Fn(&T, &T) -> bool,
) {
    let top = hole;
    let mut child = hole;
    while child < (len - 1) / 2 {
        child = 2 * (child + 1);
        if less(&v[child], &v[child - 1]) {
            child -= 1;
        }
        v[hole] = v[child];
        hole = child;
    }
    if len & 1 == 0 && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        v[hole] = v[child - 1];
        hole = child - 1;
    }
    // push_heap
    let mut parent = hole.wrapping_sub(1) / 2;
    while hole > top && less(&v[parent], &val) {
        v[hole] = v[parent];
        hole = parent;
        parent = hole.wrapping_sub(1) / 2;
    }
    v[hole] = val;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_and_is_a_permutation() {
        let mut v: Vec<(u8, u32)> = (0..200u32).map(|i| (((i * 7919) % 3) as u8, i)).collect();
        sort_by_key(&mut v, |x| x.0);
        assert!(v.windows(2).all(|w| w[0].0 <= w[1].0));
        let mut ids: Vec<u32> = v.iter().map(|x| x.1).collect();
        ids.sort();
        assert_eq!(ids, (0..200).collect::<Vec<_>>());
    }

    #[test]
    fn small_inputs_are_stable_like_insertion_sort() {
        let mut v = vec![(2u8, 0), (1, 1), (2, 2), (1, 3), (3, 4)];
        sort_by_key(&mut v, |x| x.0);
        assert_eq!(v, vec![(1, 1), (1, 3), (2, 0), (2, 2), (3, 4)]);
    }

    #[test]
    fn heap_sort_sorts() {
        let mut v: Vec<u32> = (0..100).map(|i| (i * 37) % 101).collect();
        heap_sort(&mut v, &|a: &u32, b: &u32| a < b);
        assert!(v.windows(2).all(|w| w[0] <= w[1]));
    }

    /// Reference permutation computed by g++ 12 (libstdc++) for this input:
    /// 40 elements with keys (i*5) % 3, sorted by key with std::sort.
    #[test]
    fn matches_libstdcxx_permutation() {
        let mut v: Vec<(u8, u32)> = (0..40u32).map(|i| (((i * 5) % 3) as u8, i)).collect();
        sort_by_key(&mut v, |x| x.0);
        let got: Vec<u32> = v.iter().map(|x| x.1).collect();
        let expected = include!("../tests/data/stdsort_40.txt");
        assert_eq!(got, expected.to_vec());
    }

    /// More reference permutations from g++ 12: random keys in 1..=2 and 1..=3,
    /// lengths 17 to 4096 (each line: keys;permutation).
    #[test]
    fn matches_libstdcxx_on_random_keys() {
        let data = include_str!("../tests/data/stdsort_cases.txt");
        for line in data.lines() {
            let (keys, perm) = line.split_once(';').unwrap();
            let keys: Vec<u8> = keys.split(',').map(|k| k.parse().unwrap()).collect();
            let perm: Vec<u32> = perm.split(',').map(|k| k.parse().unwrap()).collect();
            let mut v: Vec<(u8, u32)> = keys
                .iter()
                .enumerate()
                .map(|(i, &k)| (k, i as u32))
                .collect();
            sort_by_key(&mut v, |x| x.0);
            let got: Vec<u32> = v.iter().map(|x| x.1).collect();
            assert_eq!(got, perm, "n = {}", keys.len());
        }
    }
}
