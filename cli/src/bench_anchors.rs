//! `perft bench --anchors`: today's table of ratios, ours beside each
//! public engine found, pinned to one core, pairs alternating.

use std::path::Path;

use perft_core::{Game, GameKind, GameVisitor};
use perft_local::bench::anchors::{SideBySide, anchor_cases, pin_to_core, side_by_side};

use crate::args::{BenchArgs, Format};
use crate::error::CliError;

/// The kernel a game counts on here (`PERFT_KERNEL` reaches the runs too).
struct KernelOf;

impl GameVisitor for KernelOf {
    type Output = &'static str;
    fn visit<G: Game>(self) -> &'static str {
        G::best_kernel().name()
    }
}

pub fn bench_anchors(args: &BenchArgs, folder: &Path) -> Result<(), CliError> {
    let folder = (!folder.as_os_str().is_empty()).then_some(folder);
    if let Some(folder) = folder.filter(|f| !f.is_dir()) {
        return Err(CliError::usage(format!(
            "--anchors: {} is not a folder (leave the value out to look on PATH)",
            perft_core::echoed(&folder.display().to_string())
        )));
    }
    let ours = std::env::current_exe()?;
    pin_to_core(args.pin)?;
    let mut measured = Vec::new();
    let mut skipped = Vec::new();
    for case in anchor_cases() {
        if args.game.is_some_and(|g| g != case.game) {
            continue;
        }
        let Some(anchor) = case.anchor.find(folder) else {
            let name = case.anchor.program();
            if !skipped.contains(&name) {
                skipped.push(name);
            }
            continue;
        };
        let result = side_by_side(&case, &ours, &anchor, args.runs)?;
        if args.format == Format::Text {
            eprintln!(
                "{} {} vs {}: {:.3} s CPU against {:.3} s",
                case.game,
                case.label,
                case.anchor.name(),
                result.ours_cpu(),
                result.anchor_cpu()
            );
        }
        measured.push(result);
    }
    match args.format {
        Format::Json => {
            let rows: Vec<_> = measured.iter().map(json_row).collect();
            let json = serde_json::json!({ "pinned_core": args.pin, "pairs": args.runs, "cases": rows, "skipped": skipped });
            crate::output::json_pretty(&json)?;
        }
        Format::Text | Format::Csv => {
            let mut table = crate::output::table([
                "game",
                "case",
                "kernel",
                "ours CPU s",
                "anchor",
                "anchor CPU s",
                "ours faster",
                "wall s, ours / anchor",
            ]);
            for r in &measured {
                table.add_row([
                    r.case.game.name().to_owned(),
                    r.case.label.clone(),
                    kernel(r.case.game).to_owned(),
                    format!("{:.3}", r.ours_cpu()),
                    r.case.anchor.name().to_owned(),
                    format!("{:.3}", r.anchor_cpu()),
                    format!("{:.2}x", r.speedup()),
                    format!("{:.3} / {:.3}", r.ours_wall(), r.anchor_wall()),
                ]);
            }
            let mut text = format!(
                "{table}\n(medians of {} alternating pairs after a warm-up pair, pinned to core {}; \"ours faster\" is the anchor's CPU time over ours)\n",
                args.runs, args.pin
            );
            for name in &skipped {
                text +=
                    &format!("skipped: `{name}` is not in the folder given or on PATH (bench/ builds it)\n");
            }
            std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes())
                .map_err(crate::output::stdout_failed)?;
        }
    }
    Ok(())
}

fn kernel(game: GameKind) -> &'static str {
    game.dispatch(KernelOf)
}

fn json_row(r: &SideBySide) -> serde_json::Value {
    serde_json::json!({
        "game": r.case.game.name(),
        "case": r.case.label,
        "kernel": kernel(r.case.game),
        "leaves": r.case.leaves.to_string(),
        "anchor": r.case.anchor.name(),
        "ours_cpu_seconds": r.ours.iter().map(|t| t.cpu).collect::<Vec<_>>(),
        "anchor_cpu_seconds": r.anchor.iter().map(|t| t.cpu).collect::<Vec<_>>(),
        "ours_wall_seconds": r.ours.iter().map(|t| t.wall).collect::<Vec<_>>(),
        "anchor_wall_seconds": r.anchor.iter().map(|t| t.wall).collect::<Vec<_>>(),
        "ours_median_cpu_seconds": r.ours_cpu(),
        "anchor_median_cpu_seconds": r.anchor_cpu(),
        "speedup": r.speedup(),
    })
}
