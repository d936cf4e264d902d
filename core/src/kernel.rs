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
//! mobility and flips, chess's PEXT slider lookups and its slider fills
//! in AVX-512 lanes, or AVX2 lanes on x86-64-v3) is handed an [`Isa`]
//! value by the kernel: a zero-sized proof of what the CPU runs, so a
//! portable kernel can never reach an AVX2 or BMI2 path.

use std::fmt;

/// An instruction set the counting recursion is compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// Baseline x86-64 (or whatever the build targets): runs everywhere.
    Portable,
    /// x86-64-v3's integer part: AVX2, BMI1/2, LZCNT, POPCNT.
    X86_64V3,
    /// x86-64-v4: v3 and AVX-512 (F, BW, CD, DQ, VL). Reversi counts its
    /// last three plies with a child in each of a register's eight lanes,
    /// and its flips elsewhere find the far end of a ray with `vplzcntq`;
    /// chess fills every slider's rays at once in one register (on
    /// x86-64-v3, in two by shifts).
    X86_64V4,
}

impl Kernel {
    /// Every kernel, from the most portable up.
    pub const ALL: [Kernel; 3] = [Kernel::Portable, Kernel::X86_64V3, Kernel::X86_64V4];

    /// The name `perft run` reports.
    pub const fn name(self) -> &'static str {
        match self {
            Kernel::Portable => "portable",
            Kernel::X86_64V3 => "x86-64-v3",
            Kernel::X86_64V4 => "x86-64-v4",
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
            #[cfg(target_arch = "x86_64")]
            Kernel::X86_64V4 => {
                Kernel::X86_64V3.is_available()
                    && std::is_x86_feature_detected!("avx512f")
                    && std::is_x86_feature_detected!("avx512bw")
                    && std::is_x86_feature_detected!("avx512cd")
                    && std::is_x86_feature_detected!("avx512dq")
                    && std::is_x86_feature_detected!("avx512vl")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// Whether this CPU runs AVX-512's 512-bit operations in two 256-bit
    /// halves (AMD Zen 4): there, code whose gain is the register's width
    /// can lose to its AVX2 copy (chess counted 3-6% slower on v4 than on
    /// v3 on Zen 4, and 6% faster on an Intel Xeon; BENCHMARKS.md).
    pub fn avx512_is_split() -> bool {
        static SPLIT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *SPLIT.get_or_init(|| {
            #[cfg(target_arch = "x86_64")]
            {
                let cpu = raw_cpuid::CpuId::new();
                let vendor = cpu.get_vendor_info();
                let family = cpu.get_feature_info().map(|f| f.family_id());
                splits_avx512(vendor.as_ref().map(|v| v.as_str()), family)
            }
            #[cfg(not(target_arch = "x86_64"))]
            false
        })
    }

    /// The kernels this CPU can run.
    pub fn available() -> impl Iterator<Item = Kernel> {
        Kernel::ALL.into_iter().filter(|k| k.is_available())
    }

    /// The kernel named by `PERFT_KERNEL` when this CPU runs it (to compare
    /// kernels side by side), else the first of `preference` it runs
    /// (portable when none).
    pub fn best_of(preference: &[Kernel]) -> Kernel {
        static REQUESTED: std::sync::OnceLock<Option<Kernel>> = std::sync::OnceLock::new();
        let requested = *REQUESTED.get_or_init(|| {
            let wanted = std::env::var("PERFT_KERNEL").ok()?;
            Kernel::ALL
                .into_iter()
                .find(|k| k.name() == wanted && k.is_available())
        });
        requested
            .or_else(|| preference.iter().copied().find(|k| k.is_available()))
            .unwrap_or(Kernel::Portable)
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether a CPU of `vendor` and (display) `family` splits 512-bit
/// operations: AMD's family 19h, whose only AVX-512 parts are Zen 4's.
/// Zen 5 (family 1Ah) is taken to run them whole, as its desktop and
/// server parts do; its mobile parts, said to split them too, keep v4
/// here until one is measured.
fn splits_avx512(vendor: Option<&str>, family: Option<u8>) -> bool {
    vendor == Some("AuthenticAMD") && family == Some(0x19)
}

/// The instruction set a copy of the counting recursion runs with, as a
/// type, handed to the game's generator ([`Game::count_moves_on`] and the
/// like), so that it can pick instructions the copy has (chess looks its
/// sliders up with BMI2's PEXT, Reversi finds moves and flips with AVX2)
/// while the portable copy keeps to the baseline. A value of a type that
/// claims an instruction exists only on a CPU that has it.
///
/// [`Game::count_moves_on`]: crate::Game::count_moves_on
pub trait Isa: Copy + fmt::Debug + Send + Sync + 'static {
    /// Whether AVX2 may be executed.
    const AVX2: bool;
    /// Whether BMI2 (`pext`) may be executed.
    const BMI2: bool;
    /// Whether `popcnt` is compiled in (so `count_ones` is one instruction).
    const POPCNT: bool;
    /// Whether AVX-512 F, BW, CD, DQ and VL may be executed.
    const AVX512: bool;
}

/// The baseline: any CPU the build's target runs on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Portable;

impl Isa for Portable {
    const AVX2: bool = false;
    const BMI2: bool = false;
    const POPCNT: bool = false;
    const AVX512: bool = false;
}

/// Defines a proof type for `$kernel`: a value exists only where
/// [`Kernel::is_available`] said so, or inside that kernel's copy of the
/// recursion, which only runs after that check.
macro_rules! isa_proof {
    ($(#[$doc:meta])* $name:ident, $kernel:expr, avx512: $avx512:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name(());

        impl $name {
            /// The proof, when this CPU runs the kernel.
            pub fn detect() -> Option<$name> {
                $kernel.is_available().then_some($name(()))
            }

            /// The proof without checking.
            ///
            /// # Safety
            ///
            /// The CPU must run the kernel: `is_available()` must hold for it.
            #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
            #[inline(always)]
            pub const unsafe fn new_unchecked() -> $name {
                $name(())
            }
        }

        impl Isa for $name {
            const AVX2: bool = cfg!(target_arch = "x86_64");
            const BMI2: bool = cfg!(target_arch = "x86_64");
            const POPCNT: bool = cfg!(target_arch = "x86_64");
            const AVX512: bool = $avx512 && cfg!(target_arch = "x86_64");
        }
    };
}

isa_proof!(
    /// Proof that the CPU runs x86-64-v3 (AVX2, BMI1/2, LZCNT, POPCNT:
    /// [`Kernel::X86_64V3`]).
    V3,
    Kernel::X86_64V3,
    avx512: false
);
isa_proof!(
    /// Proof that the CPU runs x86-64-v4 (v3 and AVX-512 F, BW, CD, DQ, VL:
    /// [`Kernel::X86_64V4`]).
    V4,
    Kernel::X86_64V4,
    avx512: true
);

/// Invokes `$callback!(module, Proof, "features")` once per x86-64 kernel
/// above portable: the module name its copies use, its proof type, and
/// its `#[target_feature]` list. The one place those lists are written,
/// but for the chess leaf counter, which compiles its v4 copy with v3's
/// list (see `chess::two_plies`).
macro_rules! x86_kernels {
    ($callback:ident) => {
        $callback!(v3, V3, "avx2,bmi1,bmi2,lzcnt,popcnt");
        $callback!(
            v4,
            V4,
            "avx2,bmi1,bmi2,lzcnt,popcnt,avx512f,avx512bw,avx512cd,avx512dq,avx512vl"
        );
    };
}
pub(crate) use x86_kernels;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_zen_4_splits_avx512() {
        assert!(splits_avx512(Some("AuthenticAMD"), Some(0x19)));
        assert!(!splits_avx512(Some("AuthenticAMD"), Some(0x1A)));
        assert!(!splits_avx512(Some("AuthenticAMD"), Some(0x17)));
        assert!(!splits_avx512(Some("GenuineIntel"), Some(6)));
        assert!(!splits_avx512(None, None));
        // Whatever this CPU is, asking twice gives one answer.
        assert_eq!(Kernel::avx512_is_split(), Kernel::avx512_is_split());
    }
}
