-- Asking the bundled corpus one question: how two recipes read it, side by
-- side from one ingestion, then one recipe over every document.
SELECT regexp_replace(source, '^.*/', '') AS file, recipe, segmentation, chunks, reader, calls, cardinality(chunks_used) AS used, partial
FROM compare('examples/corpus/', 'How many participants were randomised?', 'needle,opening', 'recipes=examples/ask/recipes.toml, model=smollm2-135m-instruct, max_output=100, max_tokens=400, top_k=2')
ORDER BY file, recipe;
SELECT regexp_replace(source, '^.*/', '') AS file, substr(regexp_replace(answer, '\s+', ' ', 'g'), 1, 50) AS answer, array_to_string(chunks_used, ',') AS chunks_used, array_to_string(notes, '; ') AS notes
FROM ask('examples/corpus/', 'How many participants were randomised?', 'needle', 'model=smollm2-135m-instruct, max_output=100, max_tokens=400, top_k=2')
ORDER BY file;
