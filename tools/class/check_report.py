#!/usr/bin/env python3
"""The class report in a real browser: tools/class/class_report.py's pages opened by headless Chromium (Debian's
chromium-headless-shell) from files, no network, at a laptop's width (1366 × 768), each with a small script added that
measures the laid-out page; the DOM after it ran is read back (--dump-dom) and checked:
  - layout: the page is no wider than the window; no table, picture or block ends past it; no table cell cuts its
    text; no two blocks of a section overlap;
  - the class page's points table holds gradebook.csv's numbers, row by row; every flag shows as text (a flag that
    holds HTML, such as a file named `<img src=x onerror=…>.cpp`, must not become an element);
  - each student's page: their own row of points as in gradebook.csv, their history rows as in the history file, and
    no other student: no cell or link names another student, and no other student's name is in the page's text
    (a name that is also a course word, "reference" or "skeleton", only as a cell or link of its own).

    tools/class/check_report.py OUT [--history FILE]      (exit 1 on the first page that fails; 77 without a browser)
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

BROWSER = "chromium-headless-shell"
# Names that are course words too (the page says "the reference", a flag says "a skeleton file"): for these, only a
# cell or a link that is the name alone counts as naming a student.
PAGE_WORDS = {"reference", "skeleton"}
LAYOUT_JS = r"""<script>(function(){
const W=document.documentElement.clientWidth, P=[];
if(document.documentElement.scrollWidth>W+1)P.push('page wider than the window: '+document.documentElement.scrollWidth+' > '+W);
document.querySelectorAll('table,svg,p,h1,h2,h3,div').forEach(function(e){const r=e.getBoundingClientRect();
 if(r.right>W+1)P.push(e.tagName+' ends at '+Math.round(r.right)+' past '+W+': '+e.textContent.slice(0,40));});
document.querySelectorAll('td,th').forEach(function(c){if(c.scrollWidth>c.clientWidth+1)P.push('cell cut: '+c.textContent.slice(0,40));});
[document.body].concat([].slice.call(document.querySelectorAll('section,div.charts'))).forEach(function(s){
 const k=[].slice.call(s.children).filter(function(e){return e.tagName!=='SCRIPT';}).map(function(e){return [e,e.getBoundingClientRect()];});
 for(let i=0;i<k.length;i++)for(let j=i+1;j<k.length;j++){const a=k[i][1],b=k[j][1];
  if(a.width&&b.width&&a.left<b.right-1&&b.left<a.right-1&&a.top<b.bottom-1&&b.top<a.bottom-1)
   P.push('overlap: '+k[i][0].tagName+' and '+k[j][0].tagName+' in '+s.tagName);}});
const o=document.createElement('pre');o.id='layout-check';o.textContent=P.length?P.join('\n'):'ok';document.body.appendChild(o);
})();</script>"""


class Page(HTMLParser):
    """The dumped DOM: each table's rows (cell texts, by table class), link texts, element names, all text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables, self.links, self.tags, self.text, self.layout = [], [], set(), [], None
        self._cell = self._row = self._link = None
        self._in_layout = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        if tag == "table":
            self.tables.append((a.get("class", ""), []))
        elif tag == "tr" and self.tables:
            self._row = []
            self.tables[-1][1].append(self._row)
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "a":
            self._link = []
        elif tag == "pre" and a.get("id") == "layout-check":
            self._in_layout, self.layout = True, ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "a" and self._link is not None:
            self.links.append("".join(self._link).strip())
            self._link = None
        elif tag == "pre":
            self._in_layout = False

    def handle_data(self, data):
        if self._in_layout:
            self.layout += data
            return
        self.text.append(data)
        for buf in (self._cell, self._link):
            if buf is not None:
                buf.append(data)


def open_in_browser(path, work):
    """The page's DOM after it loaded and the layout script ran, parsed."""
    with open(path) as f:
        src = f.read()
    probe = os.path.join(work, os.path.basename(path))
    with open(probe, "w") as f:
        f.write(src.replace("</body>", LAYOUT_JS + "</body>"))
    dom = subprocess.run([BROWSER, "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1366,768",
                          "--dump-dom", "file://" + os.path.abspath(probe)], capture_output=True, text=True,
                         timeout=120).stdout
    p = Page()
    p.feed(dom)
    return p


def table_rows(page, cls):
    return next((rows for c, rows in page.tables if c == cls), [])


def names_pattern(name):
    """A student's name as a word of its own: not part of a longer name, nor a segment of a path (task1/skeleton/…)."""
    return re.compile(rf"(?<![\w.@+/-]){re.escape(name)}(?![\w.@+/-])")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    history_path = sys.argv[sys.argv.index("--history") + 1] if "--history" in sys.argv else os.path.join(out, "history.jsonl")
    if not shutil.which(BROWSER):
        print(f"skipped: {BROWSER} is not installed (apt-get install chromium-headless-shell)")
        sys.exit(77)
    with open(os.path.join(out, "gradebook.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    with open(history_path) as f:
        history = [json.loads(line) for line in f if line.strip()]
    cols = [c for c in rows[0] if re.fullmatch(r"task\d+", c) or c == "bonus"] + ["total"]
    names = [r["student"] for r in rows]
    bad = []
    with tempfile.TemporaryDirectory() as work:
        idx = open_in_browser(os.path.join(out, "report", "index.html"), work)
        if idx.layout != "ok":
            bad.append(f"index.html: layout: {idx.layout}")
        got = {r[0]: r for r in table_rows(idx, "points")[1:]}
        for r in rows:
            want = [r["student"]] + [f"{float(r.get(c) or 0)}" for c in cols]
            have = got.get(r["student"])
            if not have or [have[0]] + [f"{float(x or 0)}" for x in have[1:1 + len(cols)]] != want:
                bad.append(f"index.html: {r['student']}'s points {have} are not gradebook.csv's {want}")
        text = "".join(idx.text)
        for r in rows:
            if r["flags"] and r["flags"] not in " ".join(text.split()):
                bad.append(f"index.html: {r['student']}'s flags are not shown as text: {r['flags'][:80]!r}")
        if "img" in idx.tags:
            bad.append("index.html: a flag became an element (<img>)")
        for r in rows:
            s = r["student"]
            p = open_in_browser(os.path.join(out, "report", "students", s + ".html"), work)
            if p.layout != "ok":
                bad.append(f"{s}.html: layout: {p.layout}")
            yours = next((x for x in table_rows(p, "points") if x and x[0] == "yours"), None)
            want = [f"{float(r.get(c) or 0):.2f}" for c in cols]
            if not yours or [f"{float(x or 0):.2f}" for x in yours[1:]] != want:
                bad.append(f"{s}.html: 'yours' {yours} is not gradebook.csv's {want}")
            mine = [h for h in history if h["student"] == s]
            hist = table_rows(p, "history")[1:]
            if [(h[0], h[1]) for h in hist] != [(h["when"], f"{h['total']:.2f}") for h in mine]:
                bad.append(f"{s}.html: history rows {[(h[0], h[1]) for h in hist]} are not the history's "
                           f"{[(h['when'], h['total']) for h in mine]}")
            cells = [c for _, t in p.tables for row in t for c in row] + p.links
            body = " ".join(p.text)
            for other in names:
                pat = names_pattern(other)
                if other == s:
                    continue
                if other in PAGE_WORDS:  # a course word too: only a cell or link that is the name alone is a student's
                    if other in cells:
                        bad.append(f"{s}.html: names another student, {other!r}, in a table or link")
                elif any(pat.search(c) for c in cells):
                    bad.append(f"{s}.html: names another student, {other!r}, in a table or link")
                elif pat.search(body):
                    bad.append(f"{s}.html: names another student, {other!r}")
            if "img" in p.tags:
                bad.append(f"{s}.html: a flag became an element (<img>)")
    print("\n".join(bad) or f"check-report: the class page and {len(rows)} students' pages pass in {BROWSER} at 1366 px: "
                            "numbers as gradebook.csv and the history, no element cut or overlapping, flags as text, "
                            "no other student on a student's page")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
