//! Runtime CPU dispatch: the whole counting recursion compiled once per
//! instruction set, the best one the CPU has chosen once at start.
//!
//! Each kernel is a copy of the recursion in `perft.rs` compiled with
//! `#[target_feature]`; move generation and play below it are
//! `#[inline(always)]` and the loop bodies are closures written inside the
//! copy, so they are compiled with that copy's instruction set (perf and the
//! disassembly show no call out of the Reversi copy). Left out of line: the
//! table's probe and store (`#[inline]`, memory-bound) and the checkers
//! capture recursion past the first jump (`follow_captures_rec`).
//!
//! Game code that has faster instructions to offer (Reversi's AVX2
//! mobility and flips) is handed an [`Isa`] value by the kernel: a
//! zero-sized proof of what the CPU runs, so a portable kernel can never
//! reach an AVX2 path.

use std::fmt;

/// An instruction set the counting recursion is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// Baseline x86-64 (or whatever the build targets): runs everywhere.
    Portable,
    /// x86-64-v3's integer part: AVX2, BMI1/2, LZCNT, POPCNT. (A v4 copy
    /// with AVX-512 was measured slower for Reversi and no faster for
    /// checkers, so there is none.)
    X86_64V3,
}

impl Kernel {
    /// Every kernel, from the most portable up.
    pub const ALL: [Kernel; 2] = [Kernel::Portable, Kernel::X86_64V3];

    /// The name `perft run` reports.
    pub const fn name(self) -> &'static str {
        match self {
            Kernel::Portable => "portable",
            Kernel::X86_64V3 => "x86-64-v3",
        }
    }

    /// Whether this CPU can run the kernel.
    pub fn is_available(self) -> bool {
        match self {
            Kernel::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::X86_64V3 => {
                std::is_x86_feature_detected!("avx2")
                    && std::is_x86_feature_detected!("bmi1")
                    && std::is_x86_feature_detected!("bmi2")
                    && std::is_x86_feature_detected!("lzcnt")
                    && std::is_x86_feature_detected!("popcnt")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The kernels this CPU can run.
    pub fn available() -> impl Iterator<Item = Kernel> {
        Kernel::ALL.into_iter().filter(|k| k.is_available())
    }

    /// The kernel counting uses by default, chosen once per process: the one
    /// named by `PERFT_KERNEL` when this CPU runs it (to compare kernels
    /// side by side), else the fastest this CPU runs.
    pub fn best() -> Kernel {
        static BEST: std::sync::OnceLock<Kernel> = std::sync::OnceLock::new();
        *BEST.get_or_init(|| {
            let wanted = std::env::var("PERFT_KERNEL").ok();
            Kernel::ALL
                .into_iter()
                .find(|k| wanted.as_deref() == Some(k.name()) && k.is_available())
                .or_else(|| PREFERENCE.into_iter().find(|k| k.is_available()))
                .unwrap_or(Kernel::Portable)
        })
    }
}

/// Kernels in the order `best` tries them.
const PREFERENCE: [Kernel; 2] = [Kernel::X86_64V3, Kernel::Portable];

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What the kernel running a game's code lets it use, as a zero-sized
/// value: game code asks [`Isa::avx2`] and takes its AVX2 path only with
/// the proof in hand.
pub trait Isa: Copy + Send + Sync + 'static {
    /// The proof that this CPU runs AVX2 (and the rest of x86-64-v3), when
    /// this kernel may use it.
    fn avx2(self) -> Option<Avx2>;
}

/// The portable kernel: no instruction beyond the build's target.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Portable;

impl Isa for Portable {
    #[inline(always)]
    fn avx2(self) -> Option<Avx2> {
        None
    }
}

/// Proof that this CPU runs the x86-64-v3 instructions (AVX2, BMI1/2,
/// LZCNT, POPCNT): only made after checking, or inside the v3 kernel that
/// only runs after checking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Avx2(());

impl Avx2 {
    /// The proof, when this CPU gives it.
    pub fn detect() -> Option<Avx2> {
        Kernel::X86_64V3.is_available().then_some(Avx2(()))
    }

    /// The proof, unchecked.
    ///
    /// # Safety
    ///
    /// The CPU must run x86-64-v3 ([`Kernel::X86_64V3`] is available).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    #[inline(always)]
    pub(crate) const unsafe fn new_unchecked() -> Avx2 {
        Avx2(())
    }
}

impl Isa for Avx2 {
    #[inline(always)]
    fn avx2(self) -> Option<Avx2> {
        Some(self)
    }
}
