#!/usr/bin/env python3
"""Build the labelled page set of bench/html-eval: pages.warc.gz and labels.jsonl.

The pages are real: the response records of two dolma WARC samples and Common Crawl's
whirlwind record, Wikipedia, Mozilla, V8 and blog pages with open licences from Mozilla
Readability's test pages, Debian's HTML documentation in 16 languages (from the packages),
and Chinese Debian pages converted to GBK, GB18030 and Big5, declared by <meta>, by the HTTP
header or not at all. Each page is a WARC response record with its HTTP header.

Labels (trafilatura's evaluation style): for each page, snippets the main text must contain
("with") and must not contain ("without"). The web pages' snippets are written by hand in
labels-web.tsv (url, with snippets, without snippets; " || " between snippets). The Debian
pages are labelled from their documented structure, not from any extractor: DocBook and
Sphinx mark navigation (div.navheader, div.navfooter, div.related, div.sphinxsidebar,
div.footer) and content (div.section, div.body); "with" takes the start of the first, middle
and last content paragraphs, a line of a <pre>, a list item and a table cell; "without" the
navigation texts that occur nowhere in the content.

usage: make-pages.py --dolma A.warc.gz B.warc.gz --whirlwind W.warc.gz --readability DIR
                     --debian DIR --samples DIR [--out DIR]
  --readability: Mozilla Readability's test/test-pages (a checkout)
  --debian: a directory where the Debian packages listed in DEBIAN were unpacked, one
            subdirectory per package (apt-get download PKG; dpkg-deb -x PKG.deb DIR/PKG)
  --samples: samples/corpus/html of this repository
"""
import argparse
import gzip
import json
import os
import re
import sys

import lxml.html

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from html_eval import warc_records  # noqa: E402  (bench/html_eval.py)

READABILITY = {  # test page -> URL of the original, all under open licences (see NOTICE)
    "wikipedia": "https://en.wikipedia.org/wiki/Mozilla",
    "wikipedia-3": "https://en.wikipedia.org/wiki/Hermitian_matrix",
    "wikipedia-4": "https://en.wikipedia.org/wiki/List_of_films_featuring_time_loops",
    "mozilla-1": "https://www.mozilla.org/en-US/firefox/desktop/customize/",
    "mozilla-2": "https://www.mozilla.org/en-US/firefox/developer/",
    "firefox-nightly-blog": "https://blog.nightly.mozilla.org/2020/12/18/these-weeks-in-firefox-issue-85",
    "v8-blog": "https://v8.dev/blog/wasm-standalone",
    "ebb-org": "http://ebb.org/bkuhn/blog/2019/10/15/fsf-rms.html",
    "blogger": "https://siliconexposed.blogspot.com/2016/05/open-verilog-flow-for-silego-greenpak4.html",
}

# package, page (relative to the package root)
DEBIAN = [
    ("debian-faq-de", "usr/share/doc/debian/FAQ/de/basic-defs.de.html"),
    ("debian-faq-fr", "usr/share/doc/debian/FAQ/fr/compatibility.fr.html"),
    ("debian-faq-it", "usr/share/doc/debian/FAQ/it/software.it.html"),
    ("debian-faq-ja", "usr/share/doc/debian/FAQ/ja/pkgtools.ja.html"),
    ("debian-faq-ko", "usr/share/doc/debian/FAQ/ko/customizing.ko.html"),
    ("debian-faq-nl", "usr/share/doc/debian/FAQ/nl/support.nl.html"),
    ("debian-faq-pt", "usr/share/doc/debian/FAQ/pt/uptodate.pt.html"),
    ("debian-faq-ru", "usr/share/doc/debian/FAQ/ru/kernel.ru.html"),
    ("debian-faq-zh-cn", "usr/share/doc/debian/FAQ/zh-cn/pkg-basics.zh-cn.html"),
    ("debian-reference-de", "usr/share/debian-reference/ch04.de.html"),
    ("debian-reference-es", "usr/share/debian-reference/ch05.es.html"),
    ("debian-reference-fr", "usr/share/debian-reference/ch03.fr.html"),
    ("debian-reference-id", "usr/share/debian-reference/ch04.id.html"),
    ("debian-reference-it", "usr/share/debian-reference/ch05.it.html"),
    ("debian-reference-ja", "usr/share/debian-reference/ch08.ja.html"),
    ("debian-reference-pt", "usr/share/debian-reference/ch03.pt.html"),
    ("debian-reference-zh-cn", "usr/share/debian-reference/ch04.zh-cn.html"),
    ("debian-reference-zh-tw", "usr/share/debian-reference/ch05.zh-tw.html"),
    ("developers-reference-de", "usr/share/developers-reference/de/beyond-pkging.html"),
    ("developers-reference-fr", "usr/share/developers-reference/fr/l10n.html"),
    ("developers-reference-it", "usr/share/developers-reference/it/new-maintainer.html"),
    ("developers-reference-ja", "usr/share/developers-reference/ja/beyond-pkging.html"),
    ("developers-reference-ru", "usr/share/developers-reference/ru/l10n.html"),
    ("maint-guide-ca", "usr/share/doc/maint-guide-ca/html/advanced.ca.html"),
    ("maint-guide-de", "usr/share/doc/maint-guide-de/html/build.de.html"),
    ("maint-guide-es", "usr/share/doc/maint-guide-es/html/checkit.es.html"),
    ("maint-guide-fr", "usr/share/doc/maint-guide-fr/html/update.fr.html"),
    ("maint-guide-it", "usr/share/doc/maint-guide-it/html/upload.it.html"),
    ("maint-guide-ja", "usr/share/doc/maint-guide-ja/html/modify.ja.html"),
    ("maint-guide-ru", "usr/share/doc/maint-guide-ru/html/start.ru.html"),
    ("maint-guide-vi", "usr/share/doc/maint-guide-vi/html/dreq.vi.html"),
    ("maint-guide-zh-cn", "usr/share/doc/maint-guide-zh-cn/html/advanced.zh-cn.html"),
    ("maint-guide-zh-tw", "usr/share/doc/maint-guide-zh-tw/html/advanced.zh-tw.html"),
]

# Chinese pages in legacy encodings: package, page, encoding written, how it is declared
# (meta:LABEL puts <meta charset=LABEL>, http:LABEL the HTTP charset, none neither)
LEGACY = [
    ("debian-faq-zh-cn", "usr/share/doc/debian/FAQ/zh-cn/getting-debian.zh-cn.html", "gbk", "meta:gbk"),
    ("maint-guide-zh-cn", "usr/share/doc/maint-guide-zh-cn/html/first.zh-cn.html", "gbk", "meta:gb2312"),
    ("debian-reference-zh-cn", "usr/share/debian-reference/ch03.zh-cn.html", "gbk", "none"),
    ("debian-faq-zh-cn", "usr/share/doc/debian/FAQ/zh-cn/support.zh-cn.html", "gb18030", "http:GB18030"),
    ("maint-guide-zh-tw", "usr/share/doc/maint-guide-zh-tw/html/first.zh-tw.html", "big5", "meta:big5"),
    ("debian-reference-zh-tw", "usr/share/debian-reference/ch03.zh-tw.html", "big5", "http:Big5"),
    ("maint-guide-zh-tw", "usr/share/doc/maint-guide-zh-tw/html/start.zh-tw.html", "big5", "none"),
    ("debian-reference-zh-tw", "usr/share/debian-reference/ch04.zh-tw.html", "big5", "meta:big5"),
]

SAMPLES = ["maint-guide_first.en.html", "debian-handbook_zh-CN_sect.apt-get.html",
           "debian-reference_ch01.zh-cn.html", "python3.11-doc_library_json.html",
           "python3.11-doc_howto_unicode.html"]
# the Python pages and the Debian Handbook (Publican, not DocBook's stylesheets) are labelled
# by hand (labels-web.tsv); the other Debian ones by structure
SAMPLES_BY_HAND = {"python3.11-doc_library_json.html", "python3.11-doc_howto_unicode.html",
                   "debian-handbook_zh-CN_sect.apt-get.html"}


def http(body, charset=None):
    ct = "text/html" + ("; charset=" + charset if charset else "")
    return ("HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n" % (ct, len(body))).encode() + body


def warc_record(uri, msg):
    head = ("WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: %s\r\n"
            "WARC-Date: 2024-06-01T00:00:00Z\r\nContent-Type: application/http; msgtype=response\r\n"
            "Content-Length: %d\r\n\r\n" % (uri, len(msg))).encode()
    return gzip.compress(head + msg + b"\r\n\r\n", mtime=0)


def norm(s):
    return " ".join(s.split())


def prefix(text, n=60):
    """The start of a paragraph as a snippet: about n characters, cut at a space when the
    text has spaces (CJK text has none)."""
    t = norm(text)
    if len(t) <= n:
        return t
    cut = t.rfind(" ", 0, n)
    return t[:cut] if cut > n // 2 else t[:n]


NAV = ("navheader", "navfooter", "related", "sphinxsidebar", "footer", "toc")


def structural_labels(html):
    doc = lxml.html.fromstring(html)
    for bad in doc.xpath("//script|//style|//head"):
        bad.drop_tree()

    def in_nav(el):
        """In navigation, or in a footnote (whether footnotes are main text is a choice
        extractors make differently: no snippet is taken from them)."""
        for a in el.iterancestors():
            if set((a.get("class") or "").split()) & set(NAV + ("footnote", "footnotes")):
                return True
        return False

    nav = [el for el in doc.xpath("//div") if set((el.get("class") or "").split()) & set(NAV[:5])]
    content_text = norm(" ".join(el.text_content() for el in
                                 doc.xpath("//div[contains(concat(' ', @class, ' '), ' section ') or "
                                           "contains(concat(' ', @class, ' '), ' body ') or "
                                           "contains(concat(' ', @class, ' '), ' chapter ')]")
                                 if not in_nav(el)))
    def in_box(el):
        """In an admonition: the maint-guide repeats one on every page, a site notice more
        than the page's text, so no snippet is taken from them either."""
        return any(set((a.get("class") or "").split()) & {"note", "caution", "important", "warning", "tip"}
                   for a in el.iterancestors())

    paras = [p for p in doc.xpath("//p") if not in_nav(p) and not in_box(p) and
             len(norm(p.text_content())) >= 40]
    with_ = []
    for p in (paras[:1] + paras[len(paras) // 2:len(paras) // 2 + 1] + paras[-1:]):
        s = prefix(p.text_content())
        if s not in with_:
            with_.append(s)
    for xp in ("//pre", "//li", "//td"):
        for el in doc.xpath(xp):
            if in_nav(el) or in_box(el):
                continue
            t = el.text_content()
            if xp == "//pre":
                lines = [l.strip() for l in t.splitlines() if len(l.strip()) >= 10]
                if lines and norm(lines[0])[:60] not in with_:
                    with_.append(norm(lines[0])[:60])
                    break
            elif len(norm(t)) >= 30 and not el.xpath(".//li|.//table") and prefix(t) not in with_:
                with_.append(prefix(t))
                break
    without = []
    for div in nav:
        for el in div.xpath(".//a|.//td|.//th|.//li|.//p"):
            t = norm(el.text_content())
            if len(t) >= 4 and t not in content_text and t not in without and \
                    not any(t in w or w in t for w in without):
                without.append(t)
    return with_, without[:4]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dolma", nargs="+", required=True)
    ap.add_argument("--whirlwind", required=True)
    ap.add_argument("--readability", required=True)
    ap.add_argument("--debian", required=True)
    ap.add_argument("--samples", required=True)
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    manual = {}
    for line in open(os.path.join(here, "labels-web.tsv"), encoding="utf-8"):
        if not line.strip() or line.startswith("#"):
            continue
        url, w, wo = (line.rstrip("\n").split("\t") + ["", ""])[:3]
        manual[url] = ([s for s in w.split(" || ") if s], [s for s in wo.split(" || ") if s])

    recs, labels, seen = [], [], set()

    def add(uri, msg, lab, source):
        recs.append(warc_record(uri, msg))
        labels.append({"url": uri, "source": source, "with": lab[0], "without": lab[1]})

    for path in a.dolma + [a.whirlwind]:
        for h, block in warc_records(path):
            uri = h.get("warc-target-uri", "").strip("<>")
            if h.get("warc-type") != "response" or uri in seen or uri not in manual:
                continue
            seen.add(uri)
            add(uri, block, manual[uri], os.path.basename(path))
    for page, url in READABILITY.items():
        body = open(os.path.join(a.readability, page, "source.html"), "rb").read()
        add(url, http(body), manual[url], "readability:" + page)
    for name in SAMPLES:
        body = open(os.path.join(a.samples, name), "rb").read()
        uri = "samples/corpus/html/" + name
        lab = manual[uri] if name in SAMPLES_BY_HAND else structural_labels(body)
        add(uri, http(body), lab, "samples")
    for pkg, page in DEBIAN:
        body = open(os.path.join(a.debian, pkg, page), "rb").read()
        add("debian:%s/%s" % (pkg, page), http(body), structural_labels(body), "debian:" + pkg)
    for pkg, page, enc, decl in LEGACY:
        text = open(os.path.join(a.debian, pkg, page), encoding="utf-8").read()
        lab = structural_labels(text.encode())
        # the page's own declaration goes; the new one (if any) replaces it
        text = re.sub(r'<meta[^>]*charset[^>]*>', "", text, flags=re.I)
        kind, _, label = decl.partition(":")
        if kind == "meta":
            text = text.replace("<head>", '<head><meta http-equiv="Content-Type" content="text/html; charset=%s">' % label, 1)
        body = text.encode(enc, "xmlcharrefreplace")
        add("debian:%s/%s?%s=%s" % (pkg, page, enc, decl), http(body, label if kind == "http" else None),
            lab, "debian:%s (%s, %s)" % (pkg, enc, decl))
    missing = set(manual) - {l["url"] for l in labels}
    if missing:
        sys.exit("labels-web.tsv: no page for %s" % ", ".join(sorted(missing)))
    with open(os.path.join(a.out, "pages.warc.gz"), "wb") as f:
        f.write(b"".join(recs))
    with open(os.path.join(a.out, "labels.jsonl"), "w", encoding="utf-8") as f:
        for l in labels:
            f.write(json.dumps(l, ensure_ascii=False) + "\n")
    print("%d pages, %d snippets" % (len(labels), sum(len(l["with"]) + len(l["without"]) for l in labels)))


if __name__ == "__main__":
    main()
