//! `perft completions` and `perft man`: generated from the real clap
//! definitions, accepted by the shells and man tools that read them, and a
//! bad shell name is refused in one line with exit 2.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::common::{PERFT, ok, refused};

/// The subcommands a user types most; each must be offered and documented.
const SUBCOMMANDS: [&str; 8] = [
    "run",
    "serve",
    "worker",
    "submit",
    "watch",
    "divide",
    "verify",
    "completions",
];

fn perft(args: &[&str]) -> std::process::Output {
    Command::new(PERFT).args(args).output().expect("perft runs")
}

#[test]
fn bash_completion_offers_the_subcommands_and_parses() {
    let script = ok(perft(&["completions", "bash"]));
    assert!(script.contains("_perft()"), "a bash completion function");
    assert!(script.contains("complete -F _perft"), "registered for perft");
    for name in SUBCOMMANDS {
        assert!(script.contains(&format!("perft,{name})")), "{name} offered");
    }
    // `bash -n` reads the script without running it: a syntax check.
    let mut bash = Command::new("bash")
        .args(["-n", "/dev/stdin"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash runs");
    bash.stdin.take().unwrap().write_all(script.as_bytes()).unwrap();
    let checked = bash.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
}

#[test]
fn bash_completion_completes_a_subcommand_in_a_real_shell() {
    // Load the script into bash and ask it, as a shell would on TAB.
    let script = ok(perft(&["completions", "bash"]));
    let probe = format!(
        "{script}\nCOMP_WORDS=(perft sub); COMP_CWORD=1; COMP_LINE='perft sub'; COMP_POINT=9\n\
         _perft perft sub perft\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n"
    );
    let completed = Command::new("bash")
        .args(["--norc", "-c", &probe])
        .output()
        .expect("bash runs");
    assert_eq!(String::from_utf8_lossy(&completed.stdout), "submit\n");
}

#[test]
fn other_shells_get_their_scripts() {
    assert!(ok(perft(&["completions", "zsh"])).starts_with("#compdef perft"));
    assert!(ok(perft(&["completions", "fish"])).contains("complete -c perft"));
    assert!(ok(perft(&["completions", "powershell"])).contains("Register-ArgumentCompleter"));
    assert!(ok(perft(&["completions", "elvish"])).contains("edit:completion:arg-completer[perft]"));
}

#[test]
fn the_man_page_is_roff_and_names_the_subcommands() {
    let page = ok(perft(&["man"]));
    // clap_mangen defines the quote string `\*(Aq` before the title: two
    // `.ie`/`.el` lines, then `.TH`.
    let mut lines = page
        .lines()
        .skip_while(|line| line.starts_with(".ie ") || line.starts_with(".el "));
    let th = lines.next().unwrap_or_default();
    assert!(th.starts_with(".TH perft 1 "), "{th}");
    assert!(page.contains("\n.SH SYNOPSIS\n"), "a synopsis");
    assert!(page.contains("\n.SH SUBCOMMANDS\n"), "a subcommand section");
    for name in SUBCOMMANDS {
        assert!(
            page.contains(&format!("\n.TP\nperft\\-{name}(1)\n")),
            "{name} named"
        );
    }
}

#[test]
fn each_subcommand_has_its_page() {
    for name in SUBCOMMANDS {
        let page = ok(perft(&["man", name]));
        let version = env!("CARGO_PKG_VERSION");
        let title = format!(".TH perft-{name} 1  \"perft-{name} {version}\"");
        assert!(
            page.lines().any(|line| line.trim_end() == title),
            "{name}: {page:.300}"
        );
        let synopsis = format!(".SH SYNOPSIS\n\\fBperft {name}\\fR");
        assert!(page.contains(&synopsis), "{name}: {page:.600}");
    }
    let serve = ok(perft(&["man", "serve"]));
    assert!(
        serve.contains("\\-\\-metrics\\-listen"),
        "serve's options are listed"
    );
}

#[test]
fn an_unknown_page_is_refused_in_one_line() {
    let stderr = refused(&perft(&["man", "bench-case"]));
    assert!(
        stderr.starts_with("error: no subcommand 'bench-case': one of run, perftree, bench, serve,"),
        "{stderr}"
    );
    let stderr = refused(&perft(&["man", "x\u{1b}[2J"]));
    assert!(
        stderr.contains("'x\\u{1b}[2J'"),
        "control characters escaped: {stderr}"
    );
}

#[test]
fn groff_formats_the_man_page_without_warnings() {
    let page = ok(perft(&["man"]));
    let Ok(mut groff) = Command::new("groff")
        .args(["-man", "-Tascii", "-ww", "-z"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        eprintln!("SKIPPED: groff is not installed, the man page was not formatted");
        return;
    };
    groff.stdin.take().unwrap().write_all(page.as_bytes()).unwrap();
    let formatted = groff.wait_with_output().unwrap();
    assert!(formatted.status.success());
    assert_eq!(String::from_utf8_lossy(&formatted.stderr), "", "groff warnings");
}

#[test]
fn a_bad_shell_is_refused_in_one_line() {
    let stderr = refused(&perft(&["completions", "tcsh\u{1b}[31m"]));
    assert!(stderr.starts_with("error: invalid value"), "{stderr}");
    assert!(stderr.contains("bash"), "the accepted shells are named: {stderr}");
    assert!(!stderr.contains('\u{1b}'), "control characters escaped: {stderr}");
    let missing = refused(&perft(&["completions"]));
    assert!(missing.contains("SHELL"), "{missing}");
}
