//! A volunteer joining someone else's cluster: given its URL, a secret and
//! the CA file, one command starts a worker that says it joined, and when
//! one of the three is wrong the worker stops with one line naming it.

use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::common::cluster::Cluster;
use crate::common::{PERFT, refused, wait_for};

/// `perft worker` as the README's volunteer section writes it.
fn volunteer(url: &str, secret: &Path, ca: &Path) -> Command {
    let mut command = Command::new(PERFT);
    command
        .args(["worker", "--coordinator", url, "--token-file"])
        .arg(secret)
        .arg("--tls-ca")
        .arg(ca)
        .args(["--name", "host-1", "--threads", "1", "--hash", "16M"])
        .env_remove("PERFT_COORDINATOR")
        .env_remove("PERFT_TOKEN")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

/// Runs a worker that must stop by itself within 20 s, with only its
/// errors logged.
fn stops(mut command: Command) -> Output {
    let mut child = command.env("RUST_LOG", "error").spawn().unwrap();
    let stopped = wait_for(Duration::from_secs(20), || child.try_wait().unwrap().is_some());
    if !stopped {
        child.kill().unwrap();
    }
    let output = child.wait_with_output().unwrap();
    assert!(
        stopped,
        "the worker went on: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

#[test]
fn a_volunteer_joins_with_a_url_a_secret_and_a_ca_and_a_wrong_one_is_named() {
    let c = Cluster::builder()
        .tls()
        .participant("volunteer", "worker")
        .start();
    let (secret, ca) = (c.secret("volunteer"), c.tls().cert.clone());

    // All three right: the worker says whom it joined, at `info` by default.
    let mut child = volunteer(&c.url, &secret, &ca).spawn().unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let reader = {
        let log = std::sync::Arc::clone(&log);
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let mut log = log.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        })
    };
    let registered = wait_for(Duration::from_secs(20), || {
        log.lock().unwrap().contains(" registered")
    });
    child.kill().unwrap();
    child.wait().unwrap();
    reader.join().unwrap();
    let log = log.lock().unwrap().clone();
    assert!(registered, "{log}");
    let joined = log
        .lines()
        .find(|line| line.contains(" registered"))
        .unwrap_or_else(|| panic!("no registration line in:\n{log}"));
    assert!(
        joined.contains(&format!("url={}", c.url)) && joined.contains("name=host-1"),
        "{joined}"
    );

    // A CA that did not sign the coordinator's certificate.
    let other = c.files().join("other-ca.pem");
    let stranger = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    std::fs::write(&other, stranger.cert.pem()).unwrap();
    let line = refused(&stops(volunteer(&c.url, &secret, &other)));
    let (named, fix) = line
        .split_once(" (")
        .and_then(|(named, rest)| Some((named, rest.split_once("): ")?.1)))
        .unwrap_or_else(|| panic!("{line}"));
    assert_eq!(
        named,
        format!(
            "error: the coordinator at {} showed a certificate the --tls-ca file does not vouch for",
            c.url
        )
    );
    assert_eq!(
        fix,
        "check that --tls-ca is that coordinator's CA certificate and that the URL's host is the name its certificate was issued for\n"
    );

    // A client verb with the same wrong CA says the same, in one line.
    let listed = Command::new(PERFT)
        .args(["list", "--coordinator", &c.url, "--token-file"])
        .arg(&secret)
        .arg("--tls-ca")
        .arg(&other)
        .env_remove("PERFT_COORDINATOR")
        .env_remove("PERFT_TOKEN")
        .output()
        .unwrap();
    let line = refused(&listed);
    assert!(
        line.starts_with("error: the coordinator showed a certificate the --tls-ca file does not vouch for (")
            && line.ends_with("): check that --tls-ca is that coordinator's CA certificate and that the host in --coordinator (or PERFT_COORDINATOR) is the name its certificate was issued for\n"),
        "{line}"
    );

    // A CA file that holds no certificate at all.
    let not_pem = c.files().join("ca.txt");
    std::fs::write(&not_pem, "ask the admin for the CA\n").unwrap();
    let line = refused(&stops(volunteer(&c.url, &secret, &not_pem)));
    assert_eq!(
        line,
        format!(
            "error: --tls-ca '{}' holds no PEM certificate (-----BEGIN CERTIFICATE-----): give the coordinator's CA certificate, from its admin\n",
            not_pem.display()
        )
    );

    // A secret the coordinator never issued.
    let wrong = c.files().join("wrong.secret");
    std::fs::write(&wrong, "not-a-secret-of-this-coordinator\n").unwrap();
    let output = stops(volunteer(&c.url, &wrong, &ca));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "error: the coordinator at {} refused the credential in '{}' (--token-file): unknown, revoked or malformed credential: give your participant secret or the coordinator's token\n",
            c.url,
            wrong.display()
        )
    );
}
