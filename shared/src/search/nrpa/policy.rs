//! The NRPA policy: a move code's weight, 0 until Adapt changes it, in a dense table when the
//! game declares a small code space and in an open-addressing hash map otherwise.

pub(super) const EMPTY: u64 = u64::MAX;

/// A policy table: dense when the game's codes are small, otherwise open addressing with linear
/// probing (key [`EMPTY`] marks a free slot; the code `u64::MAX` itself lives in the extra last
/// slot). Each slot holds the weight `w` and, in a separate array, `exp(w)`: rollouts read only
/// the `exp` array (8 bytes per code, so the codes a rollout meets stay in cache) and call no
/// `exp` at all; Adapt pays one `exp` per distinct code it changes.
#[derive(Clone, Debug)]
pub struct Policy {
    pub(super) dense: bool,
    pub(super) keys: Vec<u64>,
    /// Weight per slot.
    pub(super) w: Vec<f64>,
    /// `exp` of the weight per slot.
    pub(super) ex: Vec<f64>,
    pub(super) len: usize,
}

impl Policy {
    /// An all-zero policy for codes below `code_space` (dense) or arbitrary codes (`None`).
    pub fn new(code_space: Option<usize>) -> Self {
        match code_space {
            Some(n) => Policy {
                dense: true,
                keys: Vec::new(),
                w: vec![0.0; n],
                ex: vec![1.0; n],
                len: 0,
            },
            None => Policy {
                dense: false,
                keys: vec![EMPTY; 1024],
                w: vec![0.0; 1025],
                ex: vec![1.0; 1025],
                len: 0,
            },
        }
    }

    #[inline(always)]
    pub(super) fn slot(&self, code: u64) -> usize {
        // Fibonacci hashing: the high bits of code * 2^64/phi.
        let mask = self.keys.len() - 1;
        (code.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize & mask
    }

    /// The slot of `code`, `None` when a hash table does not hold it (weight 0).
    #[inline(always)]
    pub(super) fn find(&self, code: u64) -> Option<usize> {
        if self.dense {
            return Some(code as usize);
        }
        if code == EMPTY {
            return Some(self.keys.len());
        }
        let mask = self.keys.len() - 1;
        let mut i = self.slot(code);
        loop {
            let k = self.keys[i];
            if k == code {
                return Some(i);
            }
            if k == EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// The weight of `code`.
    #[inline(always)]
    pub fn get(&self, code: u64) -> f64 {
        self.find(code).map_or(0.0, |i| self.w[i])
    }

    /// `exp` of the weight of `code`.
    #[inline(always)]
    pub fn get_exp(&self, code: u64) -> f64 {
        if self.dense {
            return self.ex[code as usize];
        }
        self.find(code).map_or(1.0, |i| self.ex[i])
    }

    /// The slot of `code`, inserted with weight 0 if a hash table lacks it.
    #[inline(always)]
    pub(super) fn slot_mut(&mut self, code: u64) -> usize {
        if self.dense {
            return code as usize;
        }
        if code == EMPTY {
            return self.keys.len();
        }
        if (self.len + 1) * 2 > self.keys.len() {
            self.grow();
        }
        let mask = self.keys.len() - 1;
        let mut i = self.slot(code);
        loop {
            let k = self.keys[i];
            if k == code {
                return i;
            }
            if k == EMPTY {
                self.keys[i] = code;
                self.w[i] = 0.0;
                self.ex[i] = 1.0;
                self.len += 1;
                return i;
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds `delta` to the weight of `code`.
    #[inline(always)]
    pub fn add(&mut self, code: u64, delta: f64) {
        let i = self.slot_mut(code);
        self.w[i] += delta;
        self.ex[i] = self.w[i].exp();
    }

    /// Adds `delta` to the weight only, returning the weight before (scratch tables: no `exp`).
    #[inline(always)]
    pub(super) fn add_weight(&mut self, code: u64, delta: f64) -> f64 {
        let i = self.slot_mut(code);
        let old = self.w[i];
        self.w[i] = old + delta;
        old
    }

    /// Sets the weight of `code` back to 0 (scratch tables).
    #[inline(always)]
    pub(super) fn zero(&mut self, code: u64) {
        let i = self.slot_mut(code);
        self.w[i] = 0.0;
        self.ex[i] = 1.0;
    }

    pub(super) fn grow(&mut self) {
        let n = self.keys.len() * 2;
        let old_keys = std::mem::replace(&mut self.keys, vec![EMPTY; n]);
        let old_w = std::mem::replace(&mut self.w, vec![0.0; n + 1]);
        let old_ex = std::mem::replace(&mut self.ex, vec![1.0; n + 1]);
        // The slot of code u64::MAX moves to the new last slot.
        self.w[n] = old_w[old_keys.len()];
        self.ex[n] = old_ex[old_keys.len()];
        self.len = 0;
        for (i, &k) in old_keys.iter().enumerate() {
            if k != EMPTY {
                let j = self.slot_mut(k);
                self.w[j] = old_w[i];
                self.ex[j] = old_ex[i];
            }
        }
    }

    /// Makes `self` equal to `other`, reusing its memory.
    pub fn copy_from(&mut self, other: &Policy) {
        self.dense = other.dense;
        self.keys.clone_from(&other.keys);
        self.w.clone_from(&other.w);
        self.ex.clone_from(&other.ex);
        self.len = other.len;
    }

    /// Copies the slots `idx` of `other` (dense tables of one size).
    pub(super) fn copy_slots(&mut self, other: &Policy, idx: &[u32]) {
        for &i in idx {
            let i = i as usize;
            self.w[i] = other.w[i];
            self.ex[i] = other.ex[i];
        }
    }

    /// Every non-zero weight, sorted by code.
    pub fn entries(&self) -> Vec<(u64, f64)> {
        let mut out: Vec<(u64, f64)> = if self.dense {
            self.w
                .iter()
                .enumerate()
                .filter(|(_, v)| **v != 0.0)
                .map(|(k, v)| (k as u64, *v))
                .collect()
        } else {
            self.keys
                .iter()
                .zip(&self.w)
                .filter(|(k, v)| **k != EMPTY && **v != 0.0)
                .map(|(k, v)| (*k, *v))
                .collect()
        };
        if !self.dense && self.w[self.keys.len()] != 0.0 {
            out.push((EMPTY, self.w[self.keys.len()]));
        }
        out.sort_by_key(|e| e.0);
        out
    }
}

/// The slots where a dense policy and the copy the level below made of it may differ: a level
/// re-copies only these before each call of the level below (a full copy of a large dense table
/// per call costs more than the call's adaptations). `full` means "assume everything differs".
#[derive(Debug)]
pub(super) struct Dirty {
    pub(super) list: Vec<u32>,
    pub(super) bits: Vec<u64>,
    pub(super) full: bool,
}

impl Dirty {
    pub(super) fn new(n: usize) -> Self {
        Dirty {
            list: Vec::new(),
            bits: vec![0; n.div_ceil(64)],
            full: true,
        }
    }
    #[inline]
    pub(super) fn mark(&mut self, i: usize) {
        if self.full {
            return;
        }
        let (w, b) = (i / 64, i % 64);
        if self.bits[w] >> b & 1 == 0 {
            self.bits[w] |= 1 << b;
            self.list.push(i as u32);
            // Beyond an eighth of the table a full copy is as cheap.
            if self.list.len() * 8 > self.bits.len() * 64 {
                self.set_full();
            }
        }
    }
    pub(super) fn set_full(&mut self) {
        self.clear();
        self.full = true;
    }
    pub(super) fn clear(&mut self) {
        for &i in &self.list {
            self.bits[i as usize / 64] = 0;
        }
        self.list.clear();
        self.full = false;
    }
}

/// `exp(w)` of each code, from the cached values; when they overflow (weights beyond ~700,
/// which NRPA's bounded steps do not produce in practice) they are recomputed shifted by the
/// largest weight, which leaves every probability unchanged.
#[inline]
pub(super) fn softmax_weights(policy: &Policy, codes: &[u64], out: &mut Vec<f64>) -> f64 {
    out.clear();
    let mut z = 0.0;
    for &c in codes {
        let e = policy.get_exp(c);
        z += e;
        out.push(e);
    }
    if z.is_finite() && z > 0.0 {
        return z;
    }
    out.clear();
    let max = codes
        .iter()
        .map(|&c| policy.get(c))
        .fold(f64::NEG_INFINITY, f64::max);
    z = 0.0;
    for &c in codes {
        let e = (policy.get(c) - max).exp();
        z += e;
        out.push(e);
    }
    z
}
