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

/// The instruction set a copy of the counting recursion runs with, as a
/// type, handed to the game's generator ([`Game::count_moves_on`] and the
/// like), so that it can pick instructions the copy has (chess looks its
/// sliders up with BMI2's PEXT in the x86-64-v3 copy) while the portable
/// copy keeps to the baseline.
///
/// [`Game::count_moves_on`]: crate::Game::count_moves_on
pub trait Isa: Copy + fmt::Debug + Send + Sync + 'static {
    /// Whether BMI2 (`pext`) may be executed: only true for a type whose
    /// values exist only on CPUs that have it.
    const BMI2: bool;
    /// Whether `popcnt` is compiled in (so `count_ones` is one instruction).
    const POPCNT: bool;
}

/// The baseline: any CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AnyCpu;

impl Isa for AnyCpu {
    const BMI2: bool = false;
    const POPCNT: bool = false;
}

/// Proof that the CPU runs x86-64-v3 ([`Kernel::X86_64V3`]): a value exists
/// only where [`Kernel::is_available`] said so (or where an `unsafe` caller
/// vouched for it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct V3Cpu(());

impl V3Cpu {
    /// The proof, when this CPU runs x86-64-v3.
    pub fn detect() -> Option<V3Cpu> {
        Kernel::X86_64V3.is_available().then_some(V3Cpu(()))
    }

    /// The proof without checking.
    ///
    /// # Safety
    ///
    /// The CPU must run x86-64-v3: `Kernel::X86_64V3.is_available()`.
    #[inline(always)]
    pub const unsafe fn new_unchecked() -> V3Cpu {
        V3Cpu(())
    }
}

impl Isa for V3Cpu {
    const BMI2: bool = cfg!(target_arch = "x86_64");
    const POPCNT: bool = cfg!(target_arch = "x86_64");
}

/// Kernels in the order `best` tries them.
const PREFERENCE: [Kernel; 2] = [Kernel::X86_64V3, Kernel::Portable];

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
