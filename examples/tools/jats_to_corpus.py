#!/usr/bin/env python3
"""Builds the bundled example corpus from PubMed Central JATS XML (CC BY
articles in ../shared/data/rct_baseline/jats/): one article each as HTML,
Markdown, plain text and DOCX, plus a baseline table as CSV. Standard library
only. Run from the project root: python3 examples/tools/jats_to_corpus.py
"""
import csv
import html
import io
import json
import os
import sys
import xml.etree.ElementTree as ET
import zipfile

SRC = os.path.join("..", "shared", "data", "rct_baseline")
OUT = os.path.join("examples", "corpus")


def text(el):
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


def article(pmcid):
    root = ET.parse(os.path.join(SRC, "jats", pmcid + ".nxml")).getroot()
    meta = {
        "title": text(root.find(".//article-title")),
        "journal": text(root.find(".//journal-title")),
        "year": text(root.find(".//pub-date/year")),
        "authors": ", ".join(
            f"{text(c.find('name/given-names'))} {text(c.find('name/surname'))}".strip()
            for c in root.findall(".//contrib[@contrib-type='author']")
        ),
        "license": (root.find(".//license").get("{http://www.w3.org/1999/xlink}href") if root.find(".//license") is not None else ""),
    }
    items = [("h1", meta["title"])]
    abstract = root.find(".//abstract")
    if abstract is not None:
        items.append(("h2", "Abstract"))
        for p in abstract.iter("p"):
            items.append(("p", text(p)))
    body = root.find(".//body")

    def walk(sec, level):
        for child in sec:
            if child.tag == "title":
                items.append((f"h{min(level, 6)}", text(child)))
            elif child.tag == "p":
                # Tables inside a paragraph come after its text.
                tw = list(child.iter("table-wrap"))
                for t in tw:
                    child.remove(t) if t in list(child) else None
                items.append(("p", text(child)))
                for t in tw:
                    items.append(("table", t))
            elif child.tag == "sec":
                walk(child, level + 1)
            elif child.tag == "table-wrap":
                items.append(("table", child))
            elif child.tag in ("list",):
                for li in child.iter("list-item"):
                    items.append(("li", text(li)))

    if body is not None:
        walk(body, 2)
    floats = [t for t in root.iter("table-wrap") if t not in body.iter("table-wrap")] if body is not None else []
    if floats:
        items.append(("h2", "Tables"))
        items.extend(("table", t) for t in floats)
    return meta, items


def table_grid(tw):
    rows = []
    for tr in tw.iter("tr"):
        rows.append([(text(c), int(c.get("colspan", 1)), int(c.get("rowspan", 1)), c.tag == "th") for c in tr if c.tag in ("td", "th")])
    return text(tw.find("label")), text(tw.find("caption")), rows


def to_html(meta, items):
    out = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'><title>%s</title>" % html.escape(meta["title"]),
           "<style>body{font-family:serif}</style><script>window.analytics=1;</script></head><body>",
           "<nav><a href='/'>Home</a> | <a href='/journals'>Journals</a></nav><main><article>"]
    for kind, v in items:
        if kind.startswith("h"):
            out.append(f"<{kind}>{html.escape(v)}</{kind}>")
        elif kind == "p":
            out.append(f"<p>{html.escape(v)}</p>")
        elif kind == "li":
            out.append(f"<ul><li>{html.escape(v)}</li></ul>")
        else:
            label, caption, rows = table_grid(v)
            out.append(f"<table><caption>{html.escape(label + ' ' + caption)}</caption>")
            for r in rows:
                out.append("<tr>" + "".join(
                    f"<{'th' if th else 'td'}{' colspan=%d' % cs if cs > 1 else ''}{' rowspan=%d' % rs if rs > 1 else ''}>{html.escape(t)}</{'th' if th else 'td'}>"
                    for t, cs, rs, th in r) + "</tr>")
            out.append("</table>")
    out.append("</article></main><footer>Copyright notice and site links</footer></body></html>")
    return "\n".join(out)


def to_md(meta, items):
    out = []
    for kind, v in items:
        if kind.startswith("h"):
            out.append("#" * int(kind[1]) + " " + v)
        elif kind == "p":
            out.append(v)
        elif kind == "li":
            out.append("- " + v)
        else:
            label, caption, rows = table_grid(v)
            out.append(f"**{label}** {caption}")
            width = max(sum(cs for _, cs, _, _ in r) for r in rows) if rows else 0
            lines = []
            for r in rows:
                cells = []
                for t, cs, _, _ in r:
                    cells += [t.replace("|", "/")] + [""] * (cs - 1)
                cells += [""] * (width - len(cells))
                lines.append("| " + " | ".join(cells) + " |")
            if lines:
                lines.insert(1, "|" + "---|" * width)
            out.append("\n".join(lines))
        out.append("")
    return "\n".join(out)


def to_txt(meta, items):
    out = []
    for kind, v in items:
        if kind.startswith("h") or kind == "p" or kind == "li":
            out.append(v)
        else:
            label, caption, rows = table_grid(v)
            out.append(f"{label} {caption}")
            out.append("\n".join("\t".join(t for t, _, _, _ in r) for r in rows))
        out.append("")
    return "\n".join(out)


def to_docx(meta, items, path):
    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    esc = lambda s: html.escape(s, quote=False)
    body = []
    for kind, v in items:
        if kind.startswith("h"):
            lvl = int(kind[1]) - 1
            body.append(f'<w:p><w:pPr><w:pStyle w:val="Heading{lvl + 1}"/></w:pPr><w:r><w:t xml:space="preserve">{esc(v)}</w:t></w:r></w:p>')
        elif kind in ("p", "li"):
            body.append(f'<w:p><w:r><w:t xml:space="preserve">{esc(v)}</w:t></w:r></w:p>')
        else:
            label, caption, rows = table_grid(v)
            body.append(f'<w:p><w:pPr><w:pStyle w:val="Caption"/></w:pPr><w:r><w:t xml:space="preserve">{esc(label + " " + caption)}</w:t></w:r></w:p>')
            body.append("<w:tbl>")
            for r in rows:
                body.append("<w:tr>")
                for t, cs, _, th in r:
                    span = f'<w:tcPr><w:gridSpan w:val="{cs}"/></w:tcPr>' if cs > 1 else ""
                    bold = "<w:rPr><w:b/></w:rPr>" if th else ""
                    body.append(f'<w:tc>{span}<w:p><w:r>{bold}<w:t xml:space="preserve">{esc(t)}</w:t></w:r></w:p></w:tc>')
                body.append("</w:tr>")
            body.append("</w:tbl>")
    styles = "".join(
        f'<w:style w:type="paragraph" w:styleId="Heading{i}"><w:name w:val="heading {i}"/><w:basedOn w:val="Normal"/><w:pPr><w:outlineLvl w:val="{i - 1}"/></w:pPr></w:style>'
        for i in range(1, 7)) + '<w:style w:type="paragraph" w:styleId="Caption"><w:name w:val="caption"/></w:style>'
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>')
        z.writestr("_rels/.rels", '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>')
        z.writestr("word/_rels/document.xml.rels", '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>')
        z.writestr("word/document.xml", f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document {w}><w:body>{"".join(body)}</w:body></w:document>')
        z.writestr("word/styles.xml", f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:styles {w}>{styles}</w:styles>')


def table_csv(pmcid, path):
    """Writes an article's first baseline table as CSV (spans repeated as blanks)."""
    t = json.load(open(os.path.join(SRC, "table1_cells_from_jats.json")))[pmcid]["tables"][0]
    with open(path, "w", newline="", encoding="utf-8") as f:
        wr = csv.writer(f)
        for r in t["rows"]:
            row = []
            for c in r:
                row += [c["text"]] + [""] * (c["colspan"] - 1)
            wr.writerow(row)
    return t["label"] + " " + t["caption"]


def main():
    os.makedirs(OUT, exist_ok=True)
    plan = [("PMC3751573", "html"), ("PMC3546023", "md"), ("PMC4486927", "txt"), ("PMC3321528", "docx")]
    notes = []
    for pmcid, fmt in plan:
        meta, items = article(pmcid)
        path = os.path.join(OUT, f"{pmcid}.{fmt}")
        if fmt == "html":
            open(path, "w", encoding="utf-8").write(to_html(meta, items))
        elif fmt == "md":
            open(path, "w", encoding="utf-8").write(to_md(meta, items))
        elif fmt == "txt":
            open(path, "w", encoding="utf-8").write(to_txt(meta, items))
        else:
            to_docx(meta, items, path)
        notes.append((os.path.basename(path), pmcid, meta))
    meta, _ = article("PMC3654355")
    table_csv("PMC3654355", os.path.join(OUT, "PMC3654355_table1.csv"))
    notes.append(("PMC3654355_table1.csv", "PMC3654355", meta))
    json.dump([{"file": f, "pmcid": p, **m} for f, p, m in notes], sys.stdout, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()
