#!/usr/bin/env bash
# Fills fuzz/corpus/<target>/ with seed inputs: the real files of the
# repository (and of ../shared/data when it is there), the regression
# fixtures of earlier findings, and a few hand-written inputs for the
# kernels. The corpus is generated (not committed); run it before fuzzing.
set -euo pipefail
cd "$(dirname "$0")"
ROOT=..
SHARED="${QUARRY_SHARED_DATA:-$ROOT/../shared/data}"
C=corpus
mkdir -p $C/{pdf,docx,html,jats,protocol,parse_reply,numbers,exports}

put() { # target, files...
  local t=$1; shift
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$C/$t/$(basename "$f")"; done
  return 0
}
text() { # target, name, text
  printf '%b' "$3" > "$C/$1/$2"
}

put pdf $ROOT/examples/corpus/*.pdf $ROOT/tests/data/rct_baseline/pdf/PMC3546023.pdf
put docx $ROOT/examples/corpus/*.docx
put html $ROOT/examples/corpus/*.html
put jats $ROOT/tests/data/rct_baseline/jats/PMC3751573.nxml $ROOT/tests/data/rct_baseline/jats/PMC3546023.nxml
put protocol $ROOT/examples/*.toml $ROOT/examples/*/*.toml
if [ -d "$SHARED" ]; then
  # Small real PDFs with tables (ICDAR 2013, via tabula-java, MIT) and one
  # page of a paper (docling's regression data, MIT).
  put pdf $(find "$SHARED/icdar2013" -name '*.pdf' -size -80k | sort | head -12)
  put pdf $(find "$SHARED/docling_regression" -name '*.pdf' | sort | head -2)
  put jats $(find "$SHARED" -name '*.nxml' -size -120k | sort | head -8)
fi
for f in $ROOT/tests/data/rispy/ris/*.ris $ROOT/examples/review/exports/*.ris; do # the first byte picks the extension: 0 = .ris
  { printf '\x00'; cat "$f"; } > "$C/exports/$(basename "$f")"
done
text exports bibtex '\x03@article{smith2019,\n  title = {Exercise and {HbA1c}: a trial},\n  author = {Smith, Jane and van der Berg, Piet},\n  year = 2019, doi = {10.1000/xyz123},\n  journal = "Diabetes Care", pages = {1--10}\n}\n@comment{x}\n@string{dc = "Diab"}\n'
text exports medline '\x02PMID- 12345678\nTI  - A randomised trial of exercise in\n      type 2 diabetes.\nAU  - Smith J\nDP  - 2019 Mar\nAID - 10.1000/xyz [doi]\nAB  - Background: ...\n\nPMID- 2\nTI  - Second\n'
text exports csv '\x04Title,Authors,Year,DOI\n"A trial, of things",Smith J; Doe A,2019,10.1/x\nOther,,20x,\n'
text exports wos '\x01FN Clarivate Analytics Web of Science\nVR 1.0\nPT J\nAU Smith, J\nTI A trial\nPY 2019\nDI 10.1/abc\nER\n\nEF\n'
text exports tsv '\x05PT\tAU\tTI\tPY\tDI\nJ\tSmith, J\tA trial\t2019\t10.1/abc\n'

text html table '<!DOCTYPE html><html><head><meta charset="utf-8"><title>T</title></head><body><h1>Results</h1><table><caption>Table 1. Baseline</caption><thead><tr><th rowspan="2">Characteristic</th><th colspan="2">Arm</th></tr><tr><th>A (n=10)</th><th>B (n=12)</th></tr></thead><tbody><tr><td>Age, mean (SD)</td><td>54.3 (8.1)</td><td>55 (7)</td></tr><tr><td colspan="3">Sex</td></tr><tr><td>&nbsp;&nbsp;Female</td><td>5 (50%)</td><td>6 (50%)</td></tr></tbody><tfoot><tr><td colspan="3"><sup>a</sup> p &lt; 0.05</td></tr></tfoot></table></body></html>'
text html boiler '<html><head><style>p{color:red}</style><script>var a="<p>not text</p>";</script></head><body><nav><a href="/">Home</a> | <a href="/x">About</a></nav><main><article><h2>Methods</h2><p>We randomised <b>120</b> adults&mdash;aged 18&#8211;65&#x2014;to exercise.</p><ul><li>one<li>two<ol><li>nested</ol></ul><pre>  x = 1\n  y = 2</pre></article></main><noscript>enable js</noscript><footer>(c) 2019</footer><!-- a comment --></body></html>'
text html latin1 '<html><head><meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"></head><body><p>Caf\xe9 na\xefve \xb5g/ml</p><p>unclosed <i>italic <b>bold</p><div><p>para in div<br>line two</div></body>'
text html frag '<p>bare fragment &amp; &unknown; &#0; &#xD800; <img alt="figure 1" src="x.png"> <svg><text>svg text</text></svg> <math><mi>x</mi></math><table><tr><td>lone cell'

text parse_reply obj '{"include": true, "reason": "adults with type 2 diabetes"}'
text parse_reply fenced 'Here it is:\n```json\n{"n": 120, "quote": "120 participants", "arms": ["a", "b"]}\n```\n'
text parse_reply yaml '```yaml\nn: 12\nquote: "twelve patients"\n```'
text parse_reply trunc '{"n": 12, "quote": "twelve pat'
text parse_reply two '{"n": 1}\n{"n": 2}'
text parse_reply think '<think>hmm</think>{"include": false, "reason": "a review"}'

text numbers mean 'mean age 54.3 (SD 8.1) years\x00Participants had a mean age of 54.3 (SD 8.1) years.\x0054.3\x00number'
text numbers words 'twelve patients\x00Twelve patients were randomised; one hundred and five declined.\x0012\x00integer'
text numbers comma '45,2 %\x00Le taux était de 45,2 % chez les femmes.\x0045.2\x00number'
text numbers ellipsis 'randomised ... to exercise\x00We randomised 120 adults to exercise or control.\x00yes\x00boolean'
text numbers date '1 March 2019\x00Enrolment began on 1 March 2019.\x002019-03-01\x00date'
text numbers enum 'double-blind\x00A double-blind, placebo-controlled trial.\x00double-blind\x00enum(open, single-blind, double-blind)'

if [ -d regressions ]; then
  for d in regressions/*/; do t=$(basename "$d"); mkdir -p "$C/$t"; cp "$d"* "$C/$t/" 2>/dev/null || true; done
fi
for t in $C/*/; do echo "$(basename "$t"): $(ls "$t" | wc -l) seeds"; done
