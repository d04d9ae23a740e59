//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::prelude::SessionContext;

/// The project root (tests run from it).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The bundled example corpus.
pub fn corpus() -> PathBuf {
    root().join("examples/corpus")
}

/// A session with a store in `store` (or none).
pub fn ctx(store: Option<&Path>) -> SessionContext {
    quarry::session(&quarry::Settings {
        store: store.map(|p| p.display().to_string()),
        ..Default::default()
    })
    .expect("session")
}

/// Runs one query and collects its batches.
pub async fn sql(ctx: &SessionContext, q: &str) -> datafusion::error::Result<Vec<RecordBatch>> {
    ctx.sql(q).await?.collect().await
}

/// Runs one query and renders it as a table.
pub async fn table(ctx: &SessionContext, q: &str) -> String {
    let b = sql(ctx, q).await.unwrap_or_else(|e| panic!("{q}: {e}"));
    pretty_format_batches(&b).expect("pretty").to_string()
}

/// The quarry binary.
pub fn quarry() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_quarry"));
    c.current_dir(root());
    c
}

/// Writes a minimal DOCX with the given body XML.
pub fn write_docx(path: &Path, body: &str) {
    use std::io::Write;
    let f = std::fs::File::create(path).expect("create docx");
    let mut z = zip::ZipWriter::new(f);
    let o = zip::write::SimpleFileOptions::default();
    let w = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main""#;
    z.start_file("word/document.xml", o).expect("zip");
    z.write_all(
        format!(r#"<?xml version="1.0"?><w:document {w}><w:body>{body}</w:body></w:document>"#)
            .as_bytes(),
    )
    .expect("zip");
    z.finish().expect("zip");
}
