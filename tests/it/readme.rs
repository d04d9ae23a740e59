//! Every `$ quarry ...` example in the README is run and its printed output
//! compared, so the README cannot drift from what quarry does.

/// Splits a command line the way a POSIX shell would for simple quoting.
fn shell_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                    cur.push(d);
                }
            }
            '"' => {
                in_word = true;
                while let Some(d) = chars.next() {
                    match d {
                        '"' => break,
                        '\\' if matches!(chars.peek(), Some('"' | '\\' | '$')) => {
                            cur.push(chars.next().unwrap_or('\\'))
                        }
                        _ => cur.push(d),
                    }
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

/// (command, expected output) pairs from the README's console blocks.
fn examples(readme: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut in_block = false;
    let mut cmd: Option<String> = None;
    let mut expected = String::new();
    let mut continuing = false;
    for line in readme.lines() {
        if line.starts_with("```console") {
            in_block = true;
            continue;
        }
        if !in_block {
            continue;
        }
        let end = line.starts_with("```");
        let starts = line.starts_with("$ ");
        if continuing {
            if let Some(c) = cmd.as_mut() {
                c.push(' ');
                c.push_str(line.trim().trim_end_matches('\\'));
            }
            continuing = line.ends_with('\\');
            continue;
        }
        if end || starts {
            if let Some(c) = cmd.take() {
                out.push((c, std::mem::take(&mut expected)));
            }
            expected.clear();
        }
        if end {
            in_block = false;
            continue;
        }
        if let Some(rest) = line.strip_prefix("$ ") {
            continuing = rest.ends_with('\\');
            cmd = Some(rest.trim_end_matches('\\').trim().to_string());
        } else if cmd.is_some() {
            expected.push_str(line);
            expected.push('\n');
        }
    }
    out
}

/// The port the README's local-model examples use; the test starts the real
/// model server (SmolLM2 on llama.cpp) and points them at its own port.
const README_MODEL_PORT: &str = "127.0.0.1:8081";

/// The scheduler the README's cluster examples name; the test starts a
/// scheduler and two executors (`quarry scheduler`, `quarry executor`, as
/// the README starts them) on ports of its own and points them there.
const README_CLUSTER: &str = "127.0.0.1:50050";

/// The port of the test's cluster, started once; a watchdog stops its
/// processes when this test binary exits.
fn cluster_port() -> u16 {
    static CLUSTER: std::sync::OnceLock<(u16, std::process::Child)> = std::sync::OnceLock::new();
    CLUSTER
        .get_or_init(|| {
        let free = crate::common::free_port;
        let (s, e1, g1, e2, g2) = (free(), free(), free(), free(), free());
        let q = env!("CARGO_BIN_EXE_quarry");
        let script = format!(
            "{q} scheduler --bind 127.0.0.1:{s} --no-store & a=$!; sleep 1; \
             {q} executor --scheduler 127.0.0.1:{s} --port {e1} --grpc-port {g1} --no-store & b=$!; \
             {q} executor --scheduler 127.0.0.1:{s} --port {e2} --grpc-port {g2} --no-store & c=$!; \
             while kill -0 {} 2>/dev/null; do sleep 1; done; kill $a $b $c",
            std::process::id()
        );
        let child = std::process::Command::new("sh")
            .args(["-c", &script])
            .current_dir(crate::common::root())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("sh starts the cluster");
        let start = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", s)).is_err() {
            assert!(
                start.elapsed() < std::time::Duration::from_secs(30),
                "quarry scheduler did not start on port {s}"
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        (s, child)
    })
    .0
}

/// Runs one README command and returns what it printed (stdout, then stderr).
/// Leading `NAME=value` words are environment variables, as in a shell.
fn run_example(cmd: &str, store: &std::path::Path) -> String {
    let mut words = shell_words(cmd);
    if words.iter().any(|w| w.contains(README_MODEL_PORT)) {
        let here = format!("127.0.0.1:{}", crate::llama::port());
        for w in &mut words {
            *w = w.replace(README_MODEL_PORT, &here);
        }
    }
    if words.iter().any(|w| w.contains(README_CLUSTER)) {
        let here = format!("127.0.0.1:{}", cluster_port());
        for w in &mut words {
            *w = w.replace(README_CLUSTER, &here);
        }
    }
    let n_env = words
        .iter()
        .take_while(|w| !w.starts_with("quarry") && w.contains('='))
        .count();
    let mut c = crate::common::quarry();
    for v in [
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "QUARRY_MODEL",
        "QUARRY_CONFIG",
    ] {
        c.env_remove(v);
    }
    for w in &words[..n_env] {
        let (k, v) = w.split_once('=').expect("NAME=value");
        c.env(k, v);
    }
    let out = c
        .args(&words[n_env + 1..])
        .env("QUARRY_STORE", store)
        .output()
        .expect("run quarry");
    let got = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    format!("{got}{err}").trim_end().to_string()
}

/// Rewrites the outputs in the README from what quarry prints now. Run with
/// `QUARRY_BLESS=1 cargo test readme` after a deliberate change, then read the diff.
fn bless(readme: &str, store: &std::path::Path) -> String {
    let mut out = Vec::new();
    let mut skipping = false;
    for line in readme.lines() {
        if skipping {
            if line.starts_with("$ ") || line.starts_with("```") {
                skipping = false;
            } else {
                continue;
            }
        }
        out.push(line.to_string());
        if let Some(cmd) = line
            .strip_prefix("$ ")
            .filter(|c| is_quarry(c) && !c.ends_with('\\'))
        {
            out.push(run_example(cmd, store));
            skipping = true;
        }
    }
    out.join("\n") + "\n"
}

/// A `quarry ...` command, possibly after `NAME=value` assignments.
fn is_quarry(cmd: &str) -> bool {
    cmd.split_whitespace()
        .find(|w| !w.contains('='))
        .is_some_and(|w| w == "quarry")
}

#[test]
fn readme_examples_print_what_the_readme_says() {
    let path = crate::common::root().join("README.md");
    let readme = std::fs::read_to_string(&path).expect("README.md");
    let store = tempfile::tempdir().unwrap();
    if std::env::var_os("QUARRY_BLESS").is_some() {
        std::fs::write(&path, bless(&readme, store.path())).expect("write README.md");
        return;
    }
    let ex = examples(&readme);
    let quarry_examples: Vec<_> = ex.iter().filter(|(c, _)| is_quarry(c)).collect();
    assert!(
        quarry_examples.len() >= 3,
        "the README shows quarry examples"
    );
    for (cmd, want) in quarry_examples {
        let got = run_example(cmd, store.path());
        assert_eq!(
            got,
            want.trim_end(),
            "README example: $ {cmd} (QUARRY_BLESS=1 cargo test readme rewrites it)"
        );
    }
}

#[test]
fn shell_words_handles_quotes() {
    assert_eq!(
        shell_words(r#"quarry sql -c "SELECT 'a b' FROM t" --format csv"#),
        [
            "quarry",
            "sql",
            "-c",
            "SELECT 'a b' FROM t",
            "--format",
            "csv"
        ]
    );
}
