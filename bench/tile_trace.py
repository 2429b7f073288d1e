#!/usr/bin/env python3
"""Builds a large Kineto trace by tiling a real one: the source's events are
repeated N times, each copy shifted in time by the source's span (plus a
gap) and with correlation, External id and flow ids offset so that links
stay unique. Writes plain (uncompressed) JSON in Kineto's layout.

usage: tile_trace.py SRC.json[.gz] OUT.json --min-bytes BYTES
"""
import argparse, gzip, json, os, re, sys

ID_ARGS = ("correlation", "External id", "external id")
PLACEHOLDER = re.compile(r'"@([^"@]+)@"')


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--min-bytes", type=int, default=1 << 30)
    a = ap.parse_args()
    doc = load(a.src)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    timed = [e for e in events if isinstance(e.get("ts"), (int, float))]
    if any(isinstance(e["ts"], float) for e in timed):
        sys.exit("tile_trace: source must have integer timestamps (exact shifting)")
    t0 = min(e["ts"] for e in timed)
    t1 = max(e["ts"] + int(e.get("dur", 0)) for e in timed)
    span = t1 - t0 + 1000
    max_id = 0
    for e in events:
        if "id" in e and isinstance(e["id"], int):
            max_id = max(max_id, e["id"])
        for k in ID_ARGS:
            v = e.get("args", {}).get(k)
            if isinstance(v, int):
                max_id = max(max_id, v)
    id_step = max_id + 1
    meta = [e for e in events if e.get("ph") == "M"]
    body = [e for e in events if e.get("ph") != "M"]
    # one template per event: json text with placeholders for shifted fields
    templates = []
    for e in body:
        e = dict(e)
        fields = []
        if "ts" in e:
            fields.append(("ts", e["ts"]))
            e["ts"] = "@TS@"
        if "id" in e and isinstance(e["id"], int):
            fields.append(("id", e["id"]))
            e["id"] = "@ID@"
        args = e.get("args")
        if isinstance(args, dict):
            args = dict(args)
            for k in ID_ARGS:
                if isinstance(args.get(k), int) and args[k] > 0:
                    fields.append((k, args[k]))
                    args[k] = "@%s@" % k
            e["args"] = args
        text = json.dumps(e)
        vals = {("TS" if n == "ts" else "ID" if n == "id" else n): (n, v) for n, v in fields}
        parts = []
        for i, piece in enumerate(PLACEHOLDER.split(text)):
            parts.append(piece if i % 2 == 0 else vals[piece])
        templates.append(parts)
    head = {k: v for k, v in doc.items() if k != "traceEvents"} if isinstance(doc, dict) else {}
    written = 0
    with open(a.out, "w") as f:
        f.write('{\n  "schemaVersion": 1,\n')
        for k, v in head.items():
            if k == "schemaVersion":
                continue
            f.write("  %s: %s,\n" % (json.dumps(k), json.dumps(v)))
        f.write('  "traceEvents": [\n')
        first = True
        for e in meta:
            f.write(("" if first else ",\n") + "  " + json.dumps(e))
            first = False
        tile = 0
        while True:
            dt, did = tile * span, tile * id_step
            out = []
            for parts in templates:
                s = []
                for p in parts:
                    if isinstance(p, str):
                        s.append(p)
                    elif p[0] == "ts":
                        s.append(str(p[1] + dt))
                    else:
                        s.append(str(p[1] + did))
                out.append("".join(s))
            chunk = ",\n  ".join(out)
            f.write(("" if first else ",\n  ") + chunk)
            first = False
            tile += 1
            written = f.tell()
            if written >= a.min_bytes:
                break
        f.write("\n  ]\n}\n")
    print("tile_trace: %d tiles, %d events, %.1f MB -> %s" %
          (tile, tile * len(templates) + len(meta), os.path.getsize(a.out) / 1e6, a.out))


if __name__ == "__main__":
    main()
