//! Fills the chess slider attack tables at build time, so that the move
//! generator reads plain statics: one table in magic order, one in PEXT
//! order, written in the target's byte order for `attacks.rs` to include.

use std::path::PathBuf;

use perft_slider_layout::{
    BISHOP_SQUARES, BISHOP_STEPS, ROOK_SQUARES, ROOK_STEPS, SLIDER_ENTRIES, ray_attacks, soft_pext,
};

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let mut magic = vec![0u64; SLIDER_ENTRIES];
    let mut pext = vec![0u64; SLIDER_ENTRIES];
    for (steps, squares) in [(&ROOK_STEPS, &ROOK_SQUARES), (&BISHOP_STEPS, &BISHOP_SQUARES)] {
        for (square, entry) in squares.iter().enumerate() {
            // Every subset of the mask (carry-rippler) with its true attacks.
            let mut subset = 0u64;
            loop {
                let attacks = ray_attacks(square, subset, steps);
                let slot = &mut magic[entry.magic_index(subset)];
                assert!(
                    *slot == 0 || *slot == attacks,
                    "magic collision on square {square}"
                );
                *slot = attacks;
                pext[entry.offset as usize + soft_pext(subset, entry.mask) as usize] = attacks;
                subset = subset.wrapping_sub(entry.mask) & entry.mask;
                if subset == 0 {
                    break;
                }
            }
        }
    }
    let big_endian = std::env::var("CARGO_CFG_TARGET_ENDIAN").is_ok_and(|e| e == "big");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for (name, table) in [("magic_attacks.bin", &magic), ("pext_attacks.bin", &pext)] {
        let bytes: Vec<u8> = table
            .iter()
            .flat_map(|&w| {
                if big_endian {
                    w.to_be_bytes()
                } else {
                    w.to_le_bytes()
                }
            })
            .collect();
        std::fs::write(out.join(name), bytes).expect("OUT_DIR is writable");
    }
}
