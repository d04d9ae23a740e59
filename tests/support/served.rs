//! A running `quarry serve` for the serve tests and bench: started from a
//! prepared command, its port read from the line it prints, killed when
//! dropped, its standard error kept.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct Served {
    child: Child,
    pub port: u16,
    log: Arc<Mutex<Vec<String>>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    /// Spawns `cmd` (a `quarry serve --listen 127.0.0.1:0 ...`) and waits up
    /// to a minute for the line naming its port.
    pub fn start(mut cmd: Command) -> Served {
        cmd.stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("quarry serve starts");
        let err = child.stderr.take().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let l = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("listening on 127.0.0.1:").nth(1) {
                    let port: u16 = rest.split(' ').next().unwrap().parse().unwrap();
                    let _ = tx.send(port);
                }
                l.lock().unwrap().push(line);
            }
        });
        let port = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| {
                panic!(
                    "quarry serve did not start: {}",
                    log.lock().unwrap().join("\n")
                )
            });
        Served { child, port, log }
    }

    /// What the server wrote to standard error so far.
    #[allow(dead_code)]
    pub fn log(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }
}

/// `n` text files in `dir` (`doc00000.txt`, ...), each 30 sentences of the
/// bundled trial paper with its number and the sentence's, so every file
/// differs: a corpus that `chunks()` takes seconds over.
pub fn sentence_corpus(dir: &Path, n: usize) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("examples/corpus/PMC4486927.txt")).unwrap();
    let sentences: Vec<&str> = text.split(". ").filter(|s| s.len() > 40).collect();
    std::fs::create_dir_all(dir).unwrap();
    for i in 0..n {
        let body: Vec<String> = (0..30)
            .map(|k| {
                format!(
                    "{} (document {i}, sentence {k}).",
                    sentences[(i * 7 + k) % sentences.len()]
                )
            })
            .collect();
        std::fs::write(dir.join(format!("doc{i:05}.txt")), body.join(" ")).unwrap();
    }
}
