-- synthesise(src, protocol), synthesis(src, protocol) and
-- synthesis_citations(src, protocol): the write-up of an extraction, step
-- by step (seed 001). quarry renders this file with a protocol's
-- parameters and runs it in stages; each function gives one of the
-- `-- @output NAME` queries. `synthesise_sql('SRC', 'protocol.toml')`
-- prints the rendered text (with the sections output).

{{studies_stage}}

-- @stage sections
-- The protocol's outline: a heading and its brief per section.
SELECT * FROM (VALUES {{outline}}) AS o(section, heading, brief);

-- @stage written
-- One request per section: the question, the style, the section's brief,
-- then every study, largest first (by {{size_field}} where the protocol
-- has a sample size; else in order of number). The reply is prose citing
-- studies as [study n].
SELECT s.section, s.heading, s.brief,
       llm_detail({{prompt}} || '## ' || s.heading || chr(10) || 'Brief: ' || s.brief || chr(10) || chr(10)
                  || 'Studies:' || chr(10) || st.lines,
                  'stage=synthesise, label=section ' || CAST(s.section AS VARCHAR) || '{{llm_options}}') AS r
FROM sections s
CROSS JOIN (SELECT string_agg(line, chr(10) ORDER BY {{size_order}} study) AS lines FROM studies) st;

-- @stage checked
-- Each section's markers checked against the studies: a number that is
-- not a study marks the section partial; a failed request leaves it
-- unwritten and partial.
SELECT w.section, w.heading, w.brief, w.r['text'] AS text_marked, w.r['ok'] AS ok, w.r['error'] AS error,
       cite_unknown(w.r['text'], k.known) AS unknown_markers
FROM written w
CROSS JOIN (SELECT array_agg(study) AS known FROM studies) k;

-- @stage review
-- The sections assembled into the draft, with their markers.
SELECT string_agg('## ' || heading || chr(10) || coalesce(text_marked, '') || chr(10), '' ORDER BY section) AS text_marked,
       bool_or(NOT ok OR cardinality(unknown_markers) > 0) AS partial
FROM checked;

-- The coherence passes asked for (the third argument), one after another
-- over the assembled draft with its markers: each revision is discarded,
-- and the text before it stands, when it adds or loses a citation,
-- introduces a universal quantifier into a cited sentence, uses a booster
-- more often, or carries fewer hedges than the draft's rate implies
-- (coherence_refusal, review::coherence).
{{coherence_stages}}

-- @stage final
-- The write-up after the passes kept, its citations rendered.
SELECT cite_render(f.text_marked, b.bib) AS rendered, f.text_marked, r.text_marked AS draft, r.partial
FROM {{final_from}} f
CROSS JOIN review r
CROSS JOIN (SELECT array_agg(named_struct('number', study, 'authors', {{authors}}, 'year', {{year}},
                                          'title', {{title}}, 'venue', {{venue}})) AS bib
            FROM studies) b;

-- @output sections
-- One row per section: its text with markers, whether it is partial and why.
SELECT section, heading, text_marked,
       NOT ok OR cardinality(unknown_markers) > 0 AS partial,
       unknown_markers,
       CASE WHEN NOT ok THEN 'the request failed: ' || error
            WHEN cardinality(unknown_markers) > 0
              THEN 'cites studies that are not in the table: ' || array_to_string(unknown_markers, ', ')
       END AS notes
FROM checked
ORDER BY section;

-- @output review
-- The whole write-up: rendered, with markers, the draft before the
-- coherence passes, and how it was rendered.
SELECT rendered['text'] AS text, text_marked, draft, rendered['author_year'] AS author_year,
       partial, rendered['note'] AS note
FROM final;

-- @output coherence
-- One row per coherence pass: whether its revision was kept, and why not.
{{coherence_output}};

-- @output citations
-- Each study the write-up cites: its marker, document and reference.
WITH cited AS (
  SELECT DISTINCT unnest(cite_numbers(text_marked)) AS study FROM final
)
SELECT '[study ' || CAST(c.study AS VARCHAR) || ']' AS marker, c.study, s.document_id, s.source
FROM cited c JOIN studies s ON s.study = c.study
ORDER BY c.study;
