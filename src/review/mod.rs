//! The review path: protocols, and the SQL that screening and extraction
//! run (`sql/*.sql`, rendered with a protocol's parameters).

pub mod cite;
pub mod claims;
pub mod coherence;
pub mod protocol;
pub mod study_claims;
pub mod synthesis;

use serde_json::{json, Value};

pub use protocol::{FieldSpec, Protocol};

/// The extraction steps, as shipped in `sql/extract.sql`.
pub const EXTRACT_SQL: &str = include_str!("../../sql/extract.sql");

/// The screening steps, as shipped in `sql/screen.sql`.
pub const SCREEN_SQL: &str = include_str!("../../sql/screen.sql");

/// Which documents extraction reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// Every document of the source.
    #[default]
    All,
    /// Only those the protocol's screening includes (the screening runs
    /// first, as a stage, and carries forward).
    Included,
}

/// Which table of the extraction template to return.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtractOutput {
    /// One row per document.
    Extraction,
    /// One row per supported cell.
    Evidence,
}

/// " The review question: ..." for a protocol that states one (else
/// nothing), as the study prompts put it after their first sentence.
pub(crate) fn question_sentence(p: &Protocol) -> String {
    p.question
        .as_deref()
        .map(|q| format!(" The review question: {q}"))
        .unwrap_or_default()
}

/// A string as a SQL literal's contents (quotes doubled).
pub fn sql_text(s: &str) -> String {
    s.replace('\'', "''")
}

/// A SQL template with its `{{name}}` marks filled from `slots`, in one
/// pass: a value goes in as it is and is never searched for marks, so no
/// text from outside (a source path, an option, a protocol's words) can
/// fill, open or change another slot. A mark no slot names is left as it
/// is.
pub fn fill(template: &str, slots: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + template.len() / 2);
    let mut rest = template;
    while let Some(i) = rest.find("{{") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let value = after.find("}}").and_then(|j| {
            let name = &after[..j];
            slots
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v, j + 2))
        });
        match value {
            Some((v, skip)) => {
                out.push_str(v);
                rest = &after[skip..];
            }
            None => {
                out.push_str("{{");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The JSON type(s) a field's value may come back as. Models write numbers
/// as text now and then; `parse_value` reads them, and says so when it cannot.
fn json_types(kind: &str) -> Value {
    match kind.split('(').next().unwrap_or(kind) {
        "integer" | "number" => json!(["number", "string", "null"]),
        "boolean" => json!(["boolean", "string", "null"]),
        "list" => json!(["array", "string", "null"]),
        _ => json!(["string", "null"]),
    }
}

/// The JSON schema of one extraction reply: every field and its quote.
pub fn extraction_schema(p: &Protocol) -> Value {
    let mut props = serde_json::Map::new();
    let mut required = Vec::new();
    for f in &p.fields {
        let mut s = json!({"type": json_types(&f.kind), "description": f.description});
        if let Some(vals) = f
            .kind
            .strip_prefix("enum(")
            .and_then(|v| v.strip_suffix(')'))
        {
            let mut e: Vec<Value> = vals.split(',').map(|v| json!(v.trim())).collect();
            e.push(Value::Null);
            s["enum"] = Value::Array(e);
        }
        props.insert(f.name.clone(), s);
        props.insert(
            format!("{}__quote", f.name),
            json!({"type": ["string", "null"], "description": format!("the exact sentence stating {}", f.name)}),
        );
        required.push(json!(f.name));
        required.push(json!(format!("{}__quote", f.name)));
    }
    json!({"type": "object", "properties": props, "required": required, "additionalProperties": false})
}

/// The instructions sent before each chunk.
pub fn extraction_prompt(p: &Protocol) -> String {
    let mut s = String::from("You are extracting data from a document for a research synthesis.\n");
    s.push_str(&format!("Protocol: {} ({}).\n", p.name, p.short_hash()));
    if let Some(g) = &p.goal {
        s.push_str(&format!("Goal: {g}\n"));
    }
    if let Some(q) = &p.question {
        s.push_str(&format!("Review question: {q}\n"));
    }
    s.push_str("Fill in these fields from the excerpt below:\n");
    for f in &p.fields {
        s.push_str(&format!("- {} ({}): {}\n", f.name, f.kind, f.description));
    }
    s.push_str(
        "For each field give the value this excerpt states, or null when it does not state it; never guess \
         and never use knowledge from outside the excerpt. For each field also give <field>__quote: the sentence \
         of the excerpt that states the value, copied word for word (null when the value is null).\n",
    );
    let keys: Vec<String> = p
        .fields
        .iter()
        .flat_map(|f| [f.name.clone(), format!("{}__quote", f.name)])
        .collect();
    s.push_str(&format!(
        "Reply with one JSON object with exactly these keys: {}.\n\nExcerpt:\n\"\"\"\n",
        keys.join(", ")
    ));
    s
}

/// The `, model=..., max_output=..., temperature=...` options a protocol fixes.
fn llm_options(p: &Protocol) -> String {
    model_options(p.model.as_deref(), p.max_output, p.temperature)
}

/// The `, model=..., max_output=..., temperature=...` options of `llm(...)`
/// for the settings a protocol or claims spec fixes.
pub(crate) fn model_options(
    model: Option<&str>,
    max_output: Option<u64>,
    temperature: Option<f64>,
) -> String {
    let mut llm = String::new();
    if let Some(m) = model {
        llm.push_str(&format!(", model={m}"));
    }
    if let Some(m) = max_output {
        llm.push_str(&format!(", max_output={m}"));
    }
    if let Some(t) = temperature {
        llm.push_str(&format!(", temperature={t}"));
    }
    llm
}

/// The JSON schema of one screening reply.
pub fn screening_schema() -> Value {
    json!({"type": "object", "properties": {
        "decision": {"type": "string", "enum": ["include", "exclude", "unclear"]},
        "reason": {"type": "string"},
        "criterion": {"type": ["string", "null"]},
        "quote": {"type": ["string", "null"]}
    }, "required": ["decision", "reason", "criterion", "quote"], "additionalProperties": false})
}

/// The instructions sent before each document's text.
pub fn screening_prompt(p: &Protocol) -> String {
    let mut s = String::from("You are screening documents for a systematic review.\n");
    s.push_str(&format!("Protocol: {} ({}).\n", p.name, p.short_hash()));
    if let Some(q) = &p.question {
        s.push_str(&format!("Review question: {q}\n"));
    }
    if let Some(g) = &p.goal {
        s.push_str(&format!("Goal: {g}\n"));
    }
    let list = |s: &mut String, title: &str, items: &[String], tag: &str| {
        if !items.is_empty() {
            s.push_str(&format!("{title}:\n"));
            for (i, c) in items.iter().enumerate() {
                s.push_str(&format!("{tag}{}. {c}\n", i + 1));
            }
        }
    };
    list(
        &mut s,
        "Inclusion criteria (all must hold)",
        &p.inclusion,
        "I",
    );
    list(
        &mut s,
        "Exclusion criteria (any one excludes)",
        &p.exclusion,
        "E",
    );
    s.push_str(
        "Decide: \"include\" when the document meets every inclusion criterion and no exclusion criterion; \
         \"exclude\" when it clearly fails one (name it in criterion, e.g. \"E2\"); \"unclear\" when the text \
         does not say enough to decide. Do not guess: unclear is an answer. Give a one-sentence reason, and in quote \
         the sentence of the document your decision turns on, copied word for word (null if none).\n\
         Reply with one JSON object with the keys decision, reason, criterion, quote.\n\nDocument:\n\"\"\"\n",
    );
    s
}

/// `sql/screen.sql` rendered for `src` and `p`.
pub fn render_screen(src: &str, p: &Protocol) -> String {
    let prompt = format!("'{}'", sql_text(&screening_prompt(p)));
    let text = fill(
        SCREEN_SQL,
        &[
            ("src", &sql_text(src)),
            ("ingest", &sql_text(&p.ingest)),
            ("prompt", &prompt),
            ("schema", &sql_text(&screening_schema().to_string())),
            ("llm_options", &sql_text(&llm_options(p))),
            ("max_chars", &(p.screen_tokens * 4).to_string()),
            ("protocol_hash", &p.short_hash()),
        ],
    );
    if p.screen_repair {
        screen_with_repair(
            &text,
            &screening_schema().to_string(),
            &llm_options(p),
            &screening_prompt(p),
            p.screen_tokens * 4,
        )
    } else {
        text
    }
}

/// `on_error = "stop"`: a stage whose first row, if any, stops the run with
/// its message (a document that could not be read, a request that failed).
const ON_ERROR_STOP: &str = "-- @stage check
-- on_error = stop: the first failure stops the run.
SELECT source || ': ' || coalesce(error, status) AS message
FROM documents('{{src}}', '{{ingest}}') WHERE status IN ('failed', 'no_extractor', 'no_text')
UNION ALL
SELECT 'document ' || document_id || ', chunk ' || CAST(chunk_id AS VARCHAR) || ': ' || call_error
FROM cells WHERE NOT ok
LIMIT 1;

";

/// Reconciliation `first`: the first chunk's value stands.
const RESOLVE_FIRST: &str = "firsts AS (
  SELECT document_id, field, raw, false AS none_chosen, CAST(NULL AS VARCHAR) AS warning
  FROM valued WHERE k = 1
),";

/// Reconciliation `model`: the value the verdict chose stands (with its best
/// quote); if it chose none, the first stands unverified; if the request
/// failed, the first stands and a warning names the field.
const RESOLVE_MODEL: &str = "picked AS (
  SELECT v.document_id, v.field, min(v.k) AS k
  FROM valued v JOIN verdicts j ON v.document_id = j.document_id AND v.field = j.field
  WHERE j.ok AND j.chosen IS NOT NULL AND same_value(v.raw, j.chosen)
  GROUP BY v.document_id, v.field
),
firsts AS (
  SELECT v.document_id, v.field, v.raw,
         coalesce(j.ok AND p.k IS NULL, false) AS none_chosen,
         CASE WHEN j.document_id IS NOT NULL AND NOT j.ok
                THEN 'resolve: the request to choose a value of ' || v.field || ' failed; the first value stands (' || coalesce(j.err, '') || ')'
              WHEN j.ok AND p.k IS NULL
                THEN 'resolve: the model chose none of the values of ' || v.field || '; the first stands, unverified'
         END AS warning
  FROM valued v
  LEFT JOIN verdicts j ON v.document_id = j.document_id AND v.field = j.field
  LEFT JOIN picked p ON v.document_id = p.document_id AND v.field = p.field
  WHERE v.k = coalesce(p.k, 1)
),";

/// The JSON schema of an adjudication reply.
pub fn adjudication_schema() -> Value {
    json!({"type": "object", "properties": {
        "value": {"type": ["string", "null"]},
        "reason": {"type": "string"}
    }, "required": ["value", "reason"], "additionalProperties": false})
}

/// The instructions of an adjudication request.
pub fn adjudication_prompt(p: &Protocol) -> String {
    format!(
        "You are checking data extracted from one document for a research synthesis.\n\
         Protocol: {} ({}).\n\
         Different parts of the document gave different values for one field. Choose the value the document \
         supports, copied exactly as listed, or null if none is supported; give a one-sentence reason. Reply \
         with one JSON object with the keys value and reason.\nField: ",
        p.name,
        p.short_hash()
    )
}

/// `sql/extract.sql` rendered for `src` and `p`.
pub fn render_extract(src: &str, p: &Protocol, output: ExtractOutput, scope: Scope) -> String {
    let chunks = format!(
        "chunks('{}', '{}', {}, {}, '{}')",
        sql_text(src),
        p.segment.method,
        p.segment.max_tokens,
        p.segment.overlap_tokens,
        sql_text(&p.ingest)
    );
    let included =
        "WHERE document_id IN (SELECT document_id FROM screened WHERE decision = 'include')";
    // The screening's own stages (its repair round) go before it; its
    // output becomes the stage `screened`.
    let screen_stages = {
        let t = render_screen(src, p);
        match (t.find("-- @stage "), t.find("-- @output\n")) {
            (Some(a), Some(b)) => (
                t[a..b].to_string(),
                t[b + "-- @output\n".len()..].to_string(),
            ),
            _ => (String::new(), t),
        }
    };
    // The chunks to read are a stage of their own when screening filters
    // them: a filter after a model call does not stop the call.
    let (screened_stage, only_included, chunk_source) = match scope {
        Scope::All => (String::new(), String::new(), chunks),
        Scope::Included => (
            format!(
                "{}-- @stage screened\n-- The screening, first: only what it includes is extracted.\n{};\n\n\
                 -- @stage todo\n-- The chunks of the included documents.\nSELECT * FROM {chunks}\n{included};\n\n",
                screen_stages.0,
                screen_stages.1.trim().trim_end_matches(';')
            ),
            included.to_string(),
            "todo".to_string(),
        ),
    };
    let schema = extraction_schema(p).to_string();
    let fields = p
        .fields
        .iter()
        .enumerate()
        .map(|(i, f)| format!("('{}', {}, '{}')", f.name, i + 1, sql_text(&f.description)))
        .collect::<Vec<_>>()
        .join(", ");
    let firsts = if p.resolve == "model" {
        RESOLVE_MODEL
    } else {
        RESOLVE_FIRST
    };
    let base = |k: &str| k.split('(').next().unwrap_or(k).to_string();
    let cases = |f: &dyn Fn(&FieldSpec) -> String| {
        p.fields
            .iter()
            .map(|fd| format!("         WHEN '{}' THEN {}", fd.name, f(fd)))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let reason_cases = cases(&|f| format!("parse_value(raw, '{}')['reason']", sql_text(&f.kind)));
    let verify_cases =
        cases(&|f| format!("verify_quote(quote, chunk_text, raw, '{}')", base(&f.kind)));
    let columns = p
        .fields
        .iter()
        .map(|f| {
            format!(
                "         parse_value(max(CASE WHEN k.field = '{n}' THEN k.value END), '{k}')['value'] AS \"{n}\"",
                n = f.name,
                k = sql_text(&f.kind)
            )
        })
        .collect::<Vec<_>>()
        .join(",\n");
    let llm = llm_options(p);
    let (output, order) = match output {
        ExtractOutput::Extraction => ("extraction", "source"),
        ExtractOutput::Evidence => ("evidence", "document_id, field"),
    };
    // `repair = true`: the replies with errors go back once (see
    // [`Repair`]); the cells read the merged replies.
    let (repair_stage, repaired, replies) = if p.repair {
        let repair = Repair {
            name: "repairs",
            replies: "replies",
            keys: &["document_id", "chunk_id"],
            carry: &["text", "char_start", "page_start", "section"],
            request: format!(
                "'{}' || text || '\n\"\"\"'",
                sql_text(&extraction_prompt(p))
            ),
            label: " || ', label=chunk ' || CAST(chunk_id AS VARCHAR)",
            schema: sql_text(&schema),
            llm: sql_text(&llm),
        };
        (repair.stage(), repair.merged("parsed"), "parsed")
    } else {
        (String::new(), String::new(), "replies")
    };
    let (src, ingest) = (sql_text(src), sql_text(&p.ingest));
    let check_stage = if p.on_error == "stop" {
        fill(ON_ERROR_STOP, &[("src", &src), ("ingest", &ingest)])
    } else {
        String::new()
    };
    let prompt = format!("'{}'", sql_text(&extraction_prompt(p)));
    let resolve_prompt = format!("'{}'", sql_text(&adjudication_prompt(p)));
    let block_source = format!("blocks('{src}', '{ingest}')");
    let text = fill(
        EXTRACT_SQL,
        &[
            ("check_stage", &check_stage),
            ("src", &src),
            ("ingest", &ingest),
            ("prompt", &prompt),
            ("schema", &sql_text(&schema)),
            ("llm_options", &sql_text(&llm)),
            ("method", &p.segment.method),
            ("max_tokens", &p.segment.max_tokens.to_string()),
            ("overlap_tokens", &p.segment.overlap_tokens.to_string()),
            ("fields", &fields),
            ("screened_stage", &screened_stage),
            ("only_included", &only_included),
            ("chunk_source", &chunk_source),
            ("block_source", &block_source),
            ("reason_cases", &reason_cases),
            ("verify_cases", &verify_cases),
            ("firsts", firsts),
            ("resolve_prompt", &resolve_prompt),
            (
                "resolve_schema",
                &sql_text(&adjudication_schema().to_string()),
            ),
            ("columns", &columns),
            (
                "require_quote",
                if p.require_quote { "true" } else { "false" },
            ),
            ("protocol_hash", &p.short_hash()),
            ("output", output),
            ("order", order),
            ("repair_stage", &repair_stage),
            ("repaired", &repaired),
            ("replies", replies),
        ],
    );
    if p.resolve == "model" {
        text
    } else {
        drop_stage(&text, "verdicts")
    }
}

/// What a repair request adds after the original request.
const REPAIR_NOTE: &str =
    "\n\nYour reply to this request could not be read as asked. Your reply was:\n\"\"\"\n";

/// The repair round as SQL, for a stage `replies` of the replies read once
/// (keyed by `keys`, with `reply` and its reading `p`): a stage `repairs`
/// that sends each reply with errors (one the runtime refused as malformed,
/// or one `parse_reply` finds an error in) back once with the original
/// request (`request`, an SQL expression over the replies' columns), the
/// reply and its problems (stage `repair` of the trace); and the CTEs that
/// merge them, ending in `name`: the second reply stands only when it reads
/// with no error, otherwise the first does, with its problems and failure.
struct Repair<'a> {
    name: &'a str,
    replies: &'a str,
    keys: &'a [&'a str],
    carry: &'a [&'a str],
    request: String,
    label: &'a str,
    schema: String,
    llm: String,
}

impl Repair<'_> {
    /// The join condition of tables `a` and `b` on the keys.
    fn on(&self, a: &str, b: &str) -> String {
        self.keys
            .iter()
            .map(|k| format!("{a}.{k} = {b}.{k}"))
            .collect::<Vec<_>>()
            .join(" AND ")
    }

    fn stage(&self) -> String {
        let keys = self.keys.join(", ");
        let fkeys = self
            .keys
            .iter()
            .map(|k| format!("f.{k}"))
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            "-- @stage {name}
-- A reply with errors goes back once: the request, the reply, its problems.
WITH
problems AS (
  SELECT {keys}, unnest(p['problems']) AS pr FROM {replies} WHERE reply IS NOT NULL
),
to_repair AS (
  SELECT {fkeys}, max(f.request_text) AS request_text, max(f.reply) AS reply,
         string_agg('- ' || q.pr['where'] || ': ' || q.pr['problem'], chr(10)) AS listing
  FROM problems q JOIN (SELECT *, {request} AS request_text FROM {replies}) f ON {on_fq}
  WHERE q.pr['severity'] = 'error'
  GROUP BY {fkeys}
),
repaired AS (
  SELECT {keys},
         llm_json_detail(request_text || '{note}' || reply || '
\"\"\"
Its problems:
' || listing || '
Reply again with the one JSON object asked for, reading the text as before.', '{schema}',
                         'stage=repair, resume=true, document=' || document_id{label} || '{llm}') AS r
  FROM to_repair
)
SELECT {keys}, r['ok'] AS ok, parse_reply(r['text'], '{schema}') AS p
FROM repaired;

",
            name = self.name,
            replies = self.replies,
            request = self.request,
            on_fq = self.on("f", "q"),
            note = sql_text(REPAIR_NOTE),
            schema = self.schema,
            label = self.label,
            llm = self.llm,
        )
    }

    fn merged(&self, name: &str) -> String {
        let keys = self.keys.join(", ");
        let cols = self
            .keys
            .iter()
            .chain(self.carry)
            .map(|k| format!("f.{k}"))
            .collect::<Vec<_>>()
            .join(", ");
        format!(
            "{repairs}_wrong AS (
  SELECT DISTINCT {keys}
  FROM (SELECT {keys}, unnest(p['problems']) AS pr FROM {repairs} WHERE ok) x
  WHERE pr['severity'] = 'error'
),
{name} AS (
  SELECT {cols},
         CASE WHEN x.ok AND w.{k0} IS NULL THEN true ELSE f.ok END AS ok,
         CASE WHEN x.ok AND w.{k0} IS NULL THEN NULL ELSE f.call_error END AS call_error,
         CASE WHEN x.ok AND w.{k0} IS NULL THEN x.p ELSE f.p END AS p
  FROM {replies} f
  LEFT JOIN {repairs} x ON {on_x}
  LEFT JOIN {repairs}_wrong w ON {on_w}
),
",
            replies = self.replies,
            repairs = self.name,
            k0 = self.keys[0],
            on_x = self.on("x", "f"),
            on_w = self.on("w", "f"),
        )
    }
}

/// `[screen] repair = true`: the documents' replies become a stage of their
/// own and the repair round runs over them (see [`Repair`]).
fn screen_with_repair(text: &str, schema: &str, llm: &str, prompt: &str, max_chars: u64) -> String {
    let (Some(o), Some(b), Some(d)) = (
        text.find("-- @output\n"),
        text.find("-- 2. The reply read"),
        text.find("-- 3. The decision"),
    ) else {
        return text.to_string();
    };
    let schema = sql_text(schema);
    let repair = Repair {
        name: "screen_repairs",
        replies: "screen_replies",
        keys: &["document_id"],
        carry: &["doc_text"],
        request: format!(
            "'{}' || substr(doc_text, 1, {max_chars}) || '\n\"\"\"'",
            sql_text(prompt)
        ),
        label: "",
        schema: schema.clone(),
        llm: sql_text(llm),
    };
    let replies = format!(
        "-- @stage screen_replies
-- repair = true: every document's reply, read once.
SELECT document_id, doc_text, r['ok'] AS ok, r['error'] AS call_error, r['text'] AS reply,
       parse_reply(r['text'], '{schema}') AS p
FROM screen_asked;

"
    );
    let mut out = String::new();
    out.push_str(&text[..o]);
    out.push_str(&replies);
    out.push_str(&repair.stage());
    out.push_str(&text[o..b]);
    out.push_str(&repair.merged("replies"));
    out.push_str(&text[d..]);
    out
}

/// The text without one `-- @stage NAME` section.
fn drop_stage(text: &str, name: &str) -> String {
    let mark = format!("-- @stage {name}");
    let Some(i) = text.find(&mark) else {
        return text.to_string();
    };
    let j = text[i + mark.len()..]
        .find("-- @")
        .map_or(text.len(), |j| i + mark.len() + j);
    format!("{}{}", &text[..i], &text[j..])
}

/// A rendered template split at its `-- @stage NAME` and `-- @output`
/// markers (the text before the first marker is commentary).
pub fn split_stages(text: &str) -> crate::engine::staged::Stages {
    let mut stages = Vec::new();
    if !text.contains("\n-- @") {
        let output = text.trim().trim_end_matches(';').to_string();
        return crate::engine::staged::Stages {
            stages,
            output,
            keep: vec![],
        };
    }
    let mut output = String::new();
    for part in text.split("\n-- @").skip(1) {
        let (head, body) = part.split_once('\n').unwrap_or((part, ""));
        let body = body.trim().trim_end_matches(';').to_string();
        match head.trim().strip_prefix("stage ") {
            Some(name) => stages.push((name.trim().to_string(), body)),
            None => output = body,
        }
    }
    crate::engine::staged::Stages {
        stages,
        output,
        keep: vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_is_filled_in_one_pass() {
        let t = "a {{x}} b {{y}} c {{unknown}} d {{ e }}";
        assert_eq!(
            fill(t, &[("x", "{{y}}"), ("y", "Y")]),
            "a {{y}} b Y c {{unknown}} d {{ e }}"
        );
        assert_eq!(fill("{{x}}{{x}}}", &[("x", "1")]), "11}");
        assert_eq!(fill("{{x", &[("x", "1")]), "{{x");
        assert_eq!(fill("é{{x}}ü", &[("x", "ß")]), "éßü");
    }

    /// A source path holding the templates' marks and a quote is the
    /// source, wherever it goes: no mark in it is filled, no quote closes
    /// its literal.
    #[test]
    fn a_source_holding_marks_goes_in_as_written() {
        let p = Protocol::parse(
            "name = \"t\"\ninclusion = [\"adults\"]\n[screen]\nrepair = true\n\
             [extract]\non_error = \"stop\"\nrepair = true\n\
             [[fields]]\nname = \"n\"\ndescription = \"Participants\"\ntype = \"integer\"\n",
            false,
        )
        .unwrap();
        let src = "corpus/{{prompt}}{{ingest}}{{src}}'; DROP TABLE x; --/";
        let quoted = "corpus/{{prompt}}{{ingest}}{{src}}''; DROP TABLE x; --/";
        for text in [
            render_screen(src, &p),
            render_extract(src, &p, ExtractOutput::Extraction, Scope::Included),
        ] {
            assert!(text.contains(quoted), "{text}");
            // With the source's places taken out, none of its marks is
            // left anywhere, and its quote is nowhere unescaped.
            let rest = text.replace(quoted, "");
            for mark in ["{{prompt}}", "{{ingest}}", "{{src}}", "'; DROP"] {
                assert!(!rest.contains(mark), "{mark} in {rest}");
            }
        }
    }
}
