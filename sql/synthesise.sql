-- synthesise(src, protocol), synthesis(src, protocol) and
-- synthesis_citations(src, protocol): the write-up of an extraction, step
-- by step (seed 001). quarry renders this file with a protocol's
-- parameters and runs it in stages; each function gives one of the
-- `-- @output NAME` queries. `synthesise_sql('SRC', 'protocol.toml')`
-- prints the rendered text (with the sections output).

{{studies_stage}}

{{outline_stages}}

-- @stage written
-- One request per section: the question, the style, the section's brief,
-- then its studies, largest first (by {{size_field}} where the protocol
-- has a sample size; else in order of number), as many as fit the
-- model's context window ({{line_budget}} characters of lines and brief;
-- the rest are left out of the request, counted, and make the section
-- partial). The reply is prose citing studies as [study n].
SELECT s.section, s.heading, s.brief, l.left_out,
       llm_detail({{prompt}} || '## ' || s.heading || chr(10) || 'Brief: ' || s.brief || chr(10) || chr(10)
                  || 'Studies:' || chr(10) || l.lines,
                  'stage=synthesise, label=section ' || CAST(s.section AS VARCHAR) || '{{llm_options}}') AS r
FROM sections s
JOIN (SELECT section, string_agg(line, chr(10) ORDER BY k) FILTER (WHERE fits) AS lines,
             count(*) FILTER (WHERE NOT fits) AS left_out
      FROM (SELECT s.section, st.line,
                   row_number() OVER (PARTITION BY s.section ORDER BY {{size_order}} st.study) AS k,
                   sum(length(st.line) + 1) OVER (PARTITION BY s.section ORDER BY {{size_order}} st.study ROWS UNBOUNDED PRECEDING)
                     + length(s.brief) <= {{line_budget}} AS fits
            FROM sections s JOIN studies st ON s.shown IS NULL OR array_has(s.shown, st.study))
      GROUP BY section) l ON l.section = s.section;

-- @stage checked
-- Each section's markers checked against the studies: a number that is
-- not a study marks the section partial; so does a claim handed to the
-- section whose supporting studies it cites none of (the citation check
-- in reverse), a section that cites no study at all (nothing in it is
-- tied to a row), and a failed request, which leaves it unwritten.
-- A section with no study to show was not asked (and is partial).
SELECT s.section, s.heading, s.brief, s.claim_ids, s.note AS outline_note, w.r['text'] AS text_marked,
       coalesce(w.r['ok'], false) AS ok,
       CASE WHEN w.section IS NULL THEN 'no study to write it from: the extraction has no document read for it'
            ELSE w.r['error'] END AS error,
       coalesce(cite_unknown(w.r['text'], k.known), make_array(CAST(-1 AS BIGINT))[1:0]) AS unknown_markers,
       coalesce(u.unwritten, make_array('')[1:0]) AS unwritten,
       coalesce(w.left_out, 0) AS left_out,
       coalesce(w.r['ok'] AND coalesce(cardinality(cite_numbers(w.r['text'])), 0) = 0, false) AS uncited
FROM sections s
LEFT JOIN written w ON w.section = s.section
LEFT JOIN (SELECT c.section, array_agg(c.claim_id ORDER BY c.claim_id) AS unwritten
           FROM section_claims c JOIN written w ON w.section = c.section
           WHERE w.r['ok'] AND NOT array_has_any(coalesce(cite_numbers(w.r['text']), make_array(CAST(-1 AS BIGINT))), c.support)
           GROUP BY c.section) u ON u.section = s.section
CROSS JOIN (SELECT array_agg(study) AS known FROM studies) k;

-- @stage review
-- The sections assembled into the draft, with their markers.
SELECT string_agg('## ' || heading || chr(10) || coalesce(text_marked, '') || chr(10), '' ORDER BY section) AS text_marked,
       bool_or(NOT ok OR cardinality(unknown_markers) > 0 OR cardinality(unwritten) > 0 OR left_out > 0 OR uncited) AS partial,
       count(text_marked) AS written
FROM checked;

-- The coherence passes asked for (the third argument), one after another
-- over the assembled draft with its markers: each revision is discarded,
-- and the text before it stands, when it adds or loses a citation,
-- introduces a universal quantifier into a cited sentence, uses a booster
-- more often, or carries fewer hedges than the draft's rate implies
-- (coherence_refusal, review::coherence).
{{coherence_stages}}

-- @stage bibliography
-- Each study's bibliographic fields: from its record in the reference
-- exports where there is one ('bibliography=EXPORTS' matched to the
-- files, or the records an extraction of records read), else from the
-- fields extracted.
SELECT st.study, st.source, r.r_record_id AS record_id,
       coalesce(r.r_authors, {{authors}}) AS authors, coalesce(r.r_year, {{year}}) AS year,
       coalesce(r.r_title, {{title}}) AS title, coalesce(r.r_venue, {{venue}}) AS venue
FROM studies st LEFT JOIN ({{records}}) r ON r.r_key = st.source;

-- @stage final
-- The write-up after the passes kept, its citations rendered.
SELECT cite_render(f.text_marked, b.bib) AS rendered, f.text_marked, r.text_marked AS draft, r.partial
FROM {{final_from}} f
CROSS JOIN review r
CROSS JOIN (SELECT array_agg(named_struct('number', study, 'authors', authors, 'year', year,
                                          'title', title, 'venue', venue)) AS bib
            FROM bibliography) b;

-- @output sections
-- One row per section: its text with markers, whether it is partial and why.
SELECT section, heading, claim_ids, text_marked,
       NOT ok OR cardinality(unknown_markers) > 0 OR cardinality(unwritten) > 0 OR left_out > 0 OR uncited AS partial,
       unknown_markers,
       nullif(concat_ws('; ',
         CASE WHEN NOT ok AND error LIKE 'no study to write%' THEN error
              WHEN NOT ok THEN 'the request failed: ' || error
              WHEN cardinality(unknown_markers) > 0
                THEN 'cites studies that are not in the table: ' || array_to_string(unknown_markers, ', ')
              WHEN cardinality(unwritten) > 0
                THEN 'a claim handed to it is not written up (' || array_to_string(unwritten, ', ') || '): none of its supporting studies is cited'
              WHEN uncited
                THEN 'cites no study: nothing in it is tied to a row of the table'
         END,
         CASE WHEN left_out > 0
              THEN CAST(left_out AS VARCHAR) || ' of its studies ({{left_out_which}}) were left out of its request: the model''s context window holds {{line_budget}} characters of study lines'
         END,
         outline_note), '') AS notes
FROM checked
ORDER BY section;

-- @output outline
-- The outline the write-up used, as a table to accept or edit: section,
-- heading, brief (with the claims it argues, as the section's request
-- gave it), the claims, what the outline's making noted, and the section
-- as an entry of a protocol's outline (paste the entries into
-- `outline = [...]` to keep, edit or reorder the sections).
SELECT section, heading, brief, claim_ids, note, entry FROM sections ORDER BY section;

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
-- Each study the write-up cites: its marker, document, record and
-- reference-list entry (NULL when the citations stay as markers).
WITH cited AS (
  SELECT DISTINCT unnest(cite_numbers(text_marked)) AS study FROM final
), entries AS (
  SELECT unnest(rendered['references']) AS e FROM final
)
SELECT '[study ' || CAST(c.study AS VARCHAR) || ']' AS marker, c.study, s.document_id, s.source,
       b.record_id, e.e['entry'] AS reference
FROM cited c JOIN studies s ON s.study = c.study
JOIN bibliography b ON b.study = c.study
LEFT JOIN entries e ON e.e['study'] = c.study
ORDER BY c.study;

-- @output claims
-- The claims the sections argue (none when the outline names no claim):
-- one row per claim and study, the study's role (`support` or
-- `contradict`), its document, and whether the write-up cites it.
WITH roles AS (
  SELECT section, claim_id, claim, moderator, unnest(support) AS study, 'support' AS role FROM section_claims
  UNION ALL
  SELECT section, claim_id, claim, moderator, unnest(contradict) AS study, 'contradict' AS role FROM section_claims
), cited AS (
  SELECT DISTINCT unnest(cite_numbers(text_marked)) AS study FROM final
)
SELECT r.section, r.claim_id, r.claim, r.moderator, r.study, r.role, s.document_id, s.source,
       c.study IS NOT NULL AS cited
FROM roles r LEFT JOIN studies s ON s.study = r.study
LEFT JOIN cited c ON c.study = r.study
ORDER BY r.section, CAST(substr(r.claim_id, 2) AS BIGINT), r.role DESC, r.study;
