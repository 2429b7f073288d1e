#!/usr/bin/env python3
"""tests/t_compile_page.py: the HTML page of `gpuprof compile -o` in headless
Chromium: its script finishes without console output, draws the compile
timeline (one bar per closed phase), the ranks side by side with the
divergent cells marked and the compile-id table (one row per record of the
JSON); names from a hostile log (markup in function names, reasons, kernel
names) reach the DOM only as text. Exit 77 without Chromium."""
import json, os, re, shutil, subprocess, sys, tempfile
from gp_testutil import BIN, SRC, check, failures, set_verbose

set_verbose()

TT = os.path.join(SRC, "..", "shared", "torch_trace")
FIXTURE = os.path.join(SRC, "tests", "data", "torch_trace_small.log")


def gp(*args):
    r = subprocess.run([BIN, "compile"] + list(args), capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise SystemExit("gpuprof compile %s: %s" % (" ".join(args), r.stderr))
    return r.stdout


XSS = '<img src=x onerror="document.title=\'pwned\'"><script>document.title=\'pwned\'</script>'


def hostile_log(path):
    """The fixture with markup in the function name, a restart reason, a
    recompile reason and a kernel name."""
    with open(FIXTURE) as f:
        text = f.read()
    text = text.replace('"co_name": "step"', '"co_name": %s' % json.dumps("step" + XSS))
    text = text.replace("generic_jump TensorVariable()", "generic_jump " + XSS.replace('"', "'"))
    text = text.replace("size mismatch", "size mismatch " + XSS.replace('"', "'").replace("\\", ""))
    with open(path, "w") as f:
        f.write(text)


def find_chromium():
    for n in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if shutil.which(n):
            return shutil.which(n)
    return None


def render(chrome, path):
    """(DOM after the page's scripts ran, console lines)."""
    prof = tempfile.mkdtemp(prefix="gp_chrome_")
    r = subprocess.run([chrome, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--user-data-dir=" + prof, "--enable-logging=stderr", "--v=0",
                        "--window-size=1400,1000", "--virtual-time-budget=5000", "--dump-dom",
                        "file://" + os.path.abspath(path)], capture_output=True, text=True, timeout=120)
    shutil.rmtree(prof, ignore_errors=True)
    return r.stdout, [l for l in r.stderr.splitlines() if ":CONSOLE" in l]


def main():
    chrome = find_chromium()
    if not chrome:
        print("SKIP: chromium not installed (scripts/install-deps.sh installs it)")
        return 77
    tmp = tempfile.mkdtemp(prefix="gp_compile_page_")
    inputs = [os.path.join(TT, "multi_rank_logs")] if os.path.isdir(TT) else [FIXTURE]
    page = os.path.join(tmp, "compile.html")
    gp("-o", page, *inputs)
    doc = json.loads(gp("--json", *inputs))
    dom, con = render(chrome, page)
    check(not con, "page: no console output %r" % con[:3])
    check('data-ready="1"' in dom, "page: script finished")
    n_ph = sum(len(l["phases"]) for l in doc["logs"])
    check(len(re.findall(r'<rect class="ph"', dom)) == n_ph, "timeline: %d phase bars" % n_ph)
    n_ids = sum(len(l["compiles"]) for l in doc["logs"])
    rows = re.findall(r'<td class="l st-(ok|failed|restarted|incomplete)">', dom)
    check(len(rows) == n_ids, "compile-id table: %d rows (%d)" % (n_ids, len(rows)))
    if len(doc["logs"]) > 1:
        check(len(re.findall(r'class="divx"', dom)) >= len([d for d in doc.get("divergence", [])
                                                            if not d["what"].startswith("compile id")]),
              "ranks side by side: one outlier cell per divergent figure")
    check("http://" not in open(page).read().replace("http://www.w3.org/2000/svg", ""),
          "page refers to no network resource")

    hostile = os.path.join(tmp, "hostile.log")
    hostile_log(hostile)
    hp = os.path.join(tmp, "hostile.html")
    gp("-o", hp, hostile)
    dom, con = render(chrome, hp)
    check('data-ready="1"' in dom and not con, "hostile log: page finished without console output %r" % con[:3])
    shown = re.sub(r"<script\b.*?</script>", "", dom, flags=re.S)  # the JSON data block is not DOM
    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    check("<img" not in shown and title and "pwned" not in title.group(1),
          "hostile log: no element from the data, title untouched")
    check(dom.count("&lt;img src=x") >= 3, "hostile log: the markup is shown as text (%d)" % dom.count("&lt;img src=x"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
