//! The edges a user or operator meets when something around the process
//! breaks: a full stdout, a lost stderr, a bad TLS certificate, a
//! coordinator that restarts under `perft watch`.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::cluster::Cluster;
use crate::common::jobs::submit_to;
use crate::common::jobs::words;
use crate::common::{PERFT, ok, perft, refused, serve_command, try_serve, try_serve_with, worker_with};

#[test]
fn a_full_stdout_ends_a_verb_with_exit_1_and_submit_names_its_job() {
    let c = Cluster::start(&[]);
    let url = c.url.clone();
    let full = || std::fs::File::create("/dev/full").unwrap();
    let submitted = Command::new(PERFT)
        .args(submit_to(&url, "--game checkers --depth 6"))
        .stdout(full())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&submitted.stderr);
    assert_eq!(submitted.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let id = stderr
        .strip_prefix("error: job ")
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("the job id is named: {stderr}"));
    assert!(
        stderr.contains("was created, but its id could not be written"),
        "{stderr}"
    );
    assert!(ok(perft(&url, &["status", id])).contains(&format!("job: {id}")));
    for verb in [&["list"][..], &["status", id], &["health"]] {
        let mut args = verb.to_vec();
        args.extend(["--coordinator", &url]);
        let out = Command::new(PERFT).args(&args).stdout(full()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{verb:?}: {stderr}");
        assert!(stderr.starts_with("error: cannot write to stdout"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn servers_outlive_the_reader_of_their_stderr() {
    let data = tempfile::tempdir().unwrap();
    let (mut server, address) = try_serve_with("127.0.0.1:0", data.path(), &[], |serve| {
        serve.env("RUST_LOG", "debug").stderr(Stdio::piped());
    })
    .expect("the coordinator starts");
    let url = format!("http://{address}");
    // The reader of its logs goes away; every log line now fails to write.
    drop(server.0.stderr.take());
    let mut worker = worker_with(&url, "mute", &[], |worker| {
        worker.env("RUST_LOG", "debug").stderr(Stdio::piped());
    });
    drop(worker.0.stderr.take());
    let job = ok(perft(
        &url,
        &words("submit --game checkers --depth 9 --split-depth 3"),
    ));
    ok(perft(&url, &["watch", job.trim()]));
    assert!(
        server.0.try_wait().unwrap().is_none(),
        "the coordinator still runs"
    );
    assert!(worker.0.try_wait().unwrap().is_none(), "the worker still runs");
}

#[test]
fn bad_tls_certificates_name_their_cause() {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let mut ca_params = CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_key = KeyPair::generate().unwrap();
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let (ca_pem, ca_key_pem) = (
        write("ca.pem", &ca.pem()),
        write("ca.key", &ca_key.serialize_pem()),
    );
    let serve_with = |cert: &str, key: &str| {
        let data = tempfile::tempdir().unwrap();
        serve_command("127.0.0.1:0", data.path())
            .args(["--tls-cert", cert, "--tls-key", key])
            .output()
            .unwrap()
    };
    // A CA certificate as the server's: refused before listening.
    let out = serve_with(&ca_pem, &ca_key_pem);
    assert!(out.stdout.is_empty(), "never listening");
    assert!(refused(&out).contains("is a CA certificate"));
    // A key that is not the certificate's.
    let leaf = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let (leaf_pem, leaf_key) = (
        write("leaf.pem", &leaf.cert.pem()),
        write("leaf.key", &leaf.signing_key.serialize_pem()),
    );
    assert!(refused(&serve_with(&leaf_pem, &ca_key_pem)).contains("private key does not match"));
    // A client trusting another CA is told why the handshake failed.
    let data = tempfile::tempdir().unwrap();
    let (_server, address) = try_serve(
        "127.0.0.1:0",
        data.path(),
        &["--tls-cert", &leaf_pem, "--tls-key", &leaf_key],
        "error",
    )
    .expect("serves with a good pair");
    let out = Command::new(PERFT)
        .args([
            "list",
            "--coordinator",
            &format!("https://{address}"),
            "--tls-ca",
            &ca_pem,
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The CA file is the user's to fix: exit 2, naming --tls-ca.
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("certificate") && stderr.contains("--tls-ca"),
        "the cause is named: {stderr}"
    );
}

#[test]
fn watch_follows_a_job_across_a_coordinator_restart() {
    let mut c = Cluster::start(&["--lease-seconds", "2"]);
    let url = c.url.clone();
    let job = ok(perft(
        &url,
        &words("submit --game checkers --depth 10 --split-depth 3"),
    ));
    let job = job.trim().to_owned();
    let watch = Command::new(PERFT)
        .args(["watch", &job, "--coordinator", &url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    c.kill();
    std::thread::sleep(Duration::from_secs(1));
    c.restart();
    c.worker("after-restart", &[]);
    let out = watch.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(&format!("job {job} done")), "{stdout}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("reconnecting"));
}
