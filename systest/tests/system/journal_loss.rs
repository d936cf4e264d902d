//! The journal never loses acknowledged work without saying so: a clean
//! stop (SIGTERM) leaves everything in the database and an empty
//! write-ahead log; a log damaged, cut or deleted after a crash is either
//! caught by the commit mark (exit 1, one line naming the fix) or lost
//! nothing; `--accept-journal-loss` goes on and says what was lost; a
//! missing or garbled mark is refused. Real processes, a real journal.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::cluster::Cluster;
use crate::common::jobs::status;
use crate::common::{Running, ok, perft, serve, serve_command, worker};

fn size(path: &Path) -> Option<u64> {
    std::fs::metadata(path).ok().map(|m| m.len())
}

fn wal(data: &Path) -> std::path::PathBuf {
    data.join("journal.sqlite-wal")
}

fn submit(url: &str, depth: &str, split: &str) -> String {
    ok(perft(
        url,
        &[
            "submit",
            "--game",
            "checkers",
            "--depth",
            depth,
            "--split-depth",
            split,
        ],
    ))
    .trim()
    .to_owned()
}

/// SIGTERM, and the exit status it ends with.
pub(crate) fn terminate(server: &mut Running) {
    server.terminate();
    let status = server.0.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

/// How a restart went.
pub(crate) enum Start {
    Refused { code: Option<i32>, stderr: String },
    Started { server: Running, url: String },
}

/// `perft serve` on `data` with `extra`, its log (info) to `log`.
pub(crate) fn start(data: &Path, extra: &[&str], log: &Path) -> Start {
    let mut server = Running(
        serve_command("127.0.0.1:0", data)
            .args(extra)
            .env_remove("PERFT_TOKEN")
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap(),
    );
    let mut stdout = BufReader::new(server.0.stdout.take().unwrap());
    let mut line = String::new();
    let _ = stdout.read_line(&mut line);
    match line.trim().strip_prefix("listening on ") {
        Some(address) => {
            let url = format!("http://{address}");
            std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
            Start::Started { server, url }
        }
        None => {
            let status = server.0.wait().unwrap();
            let mut stderr = String::new();
            std::fs::File::open(log)
                .unwrap()
                .read_to_string(&mut stderr)
                .unwrap();
            Start::Refused {
                code: status.code(),
                stderr,
            }
        }
    }
}

/// A refusal: exit 1, and one error line naming the fix.
fn assert_refused(code: Option<i32>, stderr: &str, says: &str) {
    assert_eq!(code, Some(1), "{stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains(says), "{stderr}");
    assert!(errors[0].contains("--accept-journal-loss"), "{stderr}");
}

/// Runs a small job to done on a fresh data dir and stops cleanly.
pub(crate) fn done_job(data: &Path) -> String {
    let (mut server, url) = serve(data, &[]);
    let _worker = worker(&url, "w1", &[]);
    let job = submit(&url, "7", "3");
    ok(perft(&url, &["watch", &job]));
    eprintln!(
        "running: database {:?} bytes, log {:?} bytes",
        size(&data.join("journal.sqlite")),
        size(&wal(data))
    );
    terminate(&mut server);
    job
}

#[test]
fn a_clean_stop_leaves_an_empty_log_and_every_job_in_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let job = done_job(&data);
    let (db, log) = (size(&data.join("journal.sqlite")), size(&wal(&data)));
    eprintln!("after SIGTERM: database {db:?} bytes, log {log:?} bytes");
    assert!(
        log.unwrap_or(0) == 0,
        "the log holds {log:?} bytes after a clean stop"
    );
    assert!(size(&data.join("journal.mark")).is_some());
    // The database alone holds the job: the log and its index go, and it
    // starts with the job done.
    let _ = std::fs::remove_file(wal(&data));
    let _ = std::fs::remove_file(data.join("journal.sqlite-shm"));
    let (_server, url) = serve(&data, &[]);
    assert_eq!(status(&url, &job).state, "done");
}

/// A job done and one half counted, then a SIGKILL with the last commits
/// in the log, then `damage` to the log: the restart refuses (exit 1, one
/// line), or starts with every acknowledged job as it was.
fn crash_then(damage: impl FnOnce(&Path)) {
    let mut c = Cluster::start(&[]);
    let (url, data) = (c.url.clone(), c.data().to_owned());
    c.worker("w1", &[]);
    let first = submit(&url, "7", "3");
    ok(perft(&url, &["watch", &first]));
    let second = submit(&url, "13", "6");
    let deadline = Instant::now() + Duration::from_secs(60);
    while status(&url, &second).done < 3 {
        assert!(Instant::now() < deadline, "nothing counted");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Acknowledged: read back after they were durable.
    let third = submit(&url, "9", "4");
    let counted = status(&url, &second).done;
    c.kill();
    eprintln!(
        "after SIGKILL: database {:?} bytes, log {:?} bytes",
        size(&data.join("journal.sqlite")),
        size(&wal(&data))
    );
    damage(&data);
    match start(&data, &[], &c.files().join("restart.log")) {
        Start::Refused { code, stderr } => {
            eprintln!("refused: {stderr}");
            assert_refused(code, &stderr, "lost committed work");
        }
        Start::Started { server: _server, url } => {
            eprintln!("started: nothing acknowledged was in the damaged part");
            assert_eq!(status(&url, &first).state, "done");
            assert!(status(&url, &second).done >= counted);
            status(&url, &third);
        }
    }
}

#[test]
fn flipped_bytes_in_the_log_are_refused_or_lost_nothing() {
    crash_then(|data| {
        let mut bytes = std::fs::read(wal(data)).unwrap_or_default();
        // Past the log's header (32 bytes) and the first frame's (24).
        let at = (bytes.len() / 2).max(56);
        if bytes.len() >= at + 20 {
            for byte in &mut bytes[at..at + 20] {
                *byte ^= 0x5a;
            }
            std::fs::write(wal(data), bytes).unwrap();
        }
    });
}

#[test]
fn a_log_cut_in_half_is_refused_or_lost_nothing() {
    crash_then(|data| {
        if let Some(len) = size(&wal(data)) {
            let file = std::fs::File::options().write(true).open(wal(data)).unwrap();
            file.set_len(len / 2).unwrap();
        }
    });
}

#[test]
fn a_deleted_log_is_refused_or_lost_nothing() {
    crash_then(|data| {
        let _ = std::fs::remove_file(wal(data));
        let _ = std::fs::remove_file(data.join("journal.sqlite-shm"));
    });
}

#[test]
fn a_journal_behind_its_mark_is_refused_and_accepting_the_loss_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let job = done_job(&data);
    // As if the log had held commits up to a million, and was lost.
    std::fs::write(
        data.join("journal.mark"),
        "deep-perft journal mark 1\nsequence 1000000\n",
    )
    .unwrap();
    let log = dir.path().join("serve.log");
    let Start::Refused { code, stderr } = start(&data, &[], &log) else {
        panic!("a journal behind its mark started");
    };
    assert_refused(code, &stderr, "its mark says 1000000");
    let Start::Started { mut server, url } = start(&data, &["--accept-journal-loss"], &log) else {
        panic!("--accept-journal-loss did not start");
    };
    assert_eq!(status(&url, &job).state, "done");
    terminate(&mut server);
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(
        said.lines()
            .any(|l| l.contains("ERROR") && l.contains("1000000") && l.contains("accept-journal-loss")),
        "{said}"
    );
    // The mark was rewritten: a plain start goes on.
    let Start::Started { .. } = start(&data, &[], &log) else {
        panic!("the mark was not rewritten");
    };
}

#[test]
fn a_missing_or_garbled_mark_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    done_job(&data);
    let log = dir.path().join("serve.log");
    std::fs::remove_file(data.join("journal.mark")).unwrap();
    let Start::Refused { code, stderr } = start(&data, &[], &log) else {
        panic!("started without its mark");
    };
    assert_refused(code, &stderr, "is missing");
    for garbage in [
        &b"deep-perft journal mark 1\nsequence 12x\n"[..],
        b"\xff\x00garbage",
        b"",
    ] {
        std::fs::write(data.join("journal.mark"), garbage).unwrap();
        let Start::Refused { code, stderr } = start(&data, &[], &log) else {
            panic!("started with a garbled mark");
        };
        assert_refused(code, &stderr, "not a journal mark");
    }
}
