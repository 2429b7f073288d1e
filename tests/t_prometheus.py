#!/usr/bin/env python3
"""tests/t_prometheus.py: gpuprof as a Prometheus node exporter, against the
NVML stand-in: `promtool check metrics` on the exposition of every scenario
(lost GPUs, unsupported fields, the nvidia-smi fallback, no GPU), the
textfile replaced atomically while it is read, the listener's rules (token,
loopback, methods), monitor line output with alert records, events.jsonl,
`run --sample-interval` with the monitor configuration, and a real
Prometheus server (Debian package) that scrapes `gpuprof monitor
--prometheus` and is queried through its HTTP API. Bounded: ~30 s."""
import json
import os
import re
import signal
import socket
import sqlite3
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from gp_testutil import check, failures, set_verbose

set_verbose()

GP = os.environ.get("GPUPROF_BIN")
SRC = os.environ.get("GPUPROF_SOURCE_DIR")
BUILD = os.environ.get("GPUPROF_BUILD_DIR")
if not GP or not SRC or not BUILD:
    print("skip: GPUPROF_BIN / GPUPROF_SOURCE_DIR / GPUPROF_BUILD_DIR not set")
    sys.exit(77)
DATA = os.path.join(SRC, "tests", "data", "monitor")
FAKE = os.path.join(BUILD, "tests", "libfake_nvml.so")
PROMTOOL = shutil.which("promtool")
PROMETHEUS = shutil.which("prometheus")
if not os.path.exists(FAKE):
    print("skip: %s not built" % FAKE)
    sys.exit(77)
if not PROMTOOL or not PROMETHEUS:
    print("skip: promtool/prometheus not installed (Debian package prometheus; "
          "scripts/install-deps.sh installs it)")
    sys.exit(77)
HOST = socket.gethostname()

def env_for(extra=None):
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("GPUPROF_") and k not in ("GPUPROF_BIN", "GPUPROF_SOURCE_DIR",
                                                  "GPUPROF_BUILD_DIR"):
            del env[k]
    env.update({"GPUPROF_NVML_LIB": "/nonexistent/libnvidia-ml.so.1",
                "GPUPROF_NVIDIA_SMI": "/nonexistent/nvidia-smi",
                "GPUPROF_ENABLE_OPENCL_MONITORING": "false"})
    env.update(extra or {})
    return env


def run(args, extra=None, timeout=60, cwd=None):
    p = subprocess.run([GP] + args, env=env_for(extra), capture_output=True, text=True,
                       timeout=timeout, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def scenario(name):
    return {"GPUPROF_NVML_LIB": FAKE, "FAKE_NVML_SCENARIO": os.path.join(DATA, name)}


SMI = dict(scenario("nvml_mismatch.scn"), GPUPROF_NVIDIA_SMI=os.path.join(DATA, "fake-nvidia-smi"))

# promtool lints names; these complaints are about names the issue requires
# (the seed's eight metrics, dcgm-exporter's names and labels) and are the
# only ones allowed.
ALLOWED_LINT = [
    re.compile(r'^gpu_device_count non-histogram and non-summary metrics should not have "_count" suffix$'),
    re.compile(r'^gpu_(inference_time_ms|total_memory_mb|total_memory_used_mb) metric names should not contain abbreviated units$'),
    re.compile(r"^DCGM_FI_[A-Z_]+ label names should be written in 'snake_case' not 'camelCase'$"),
    re.compile(r'^DCGM_FI_DEV_(ECC_SBE_VOL_TOTAL|ECC_DBE_VOL_TOTAL|TOTAL_ENERGY_CONSUMPTION) counter metrics should have "_total" suffix$'),
]


def promtool(text):
    p = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True,
                       text=True, timeout=60)
    msgs = [l for l in (p.stdout + p.stderr).splitlines() if l.strip()]
    bad = [m for m in msgs if not any(r.match(m) for r in ALLOWED_LINT)]
    return p.returncode, bad


def parse(text):
    """{(name, frozenset(labels)): value}, families {name: type}, helps."""
    series, types, helps = {}, {}, set()
    lab = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"')
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, n, t = line.split(" ", 3)
            types[n] = t
        elif line.startswith("# HELP "):
            helps.add(line.split(" ")[2])
        elif line and not line.startswith("#"):
            m = re.match(r'^([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})? (\S+)$', line)
            assert m, line
            labels = frozenset(lab.findall(m.group(3) or ""))
            series[(m.group(1), labels)] = float(m.group(4))
    return series, types, helps


def get(series, name, **labels):
    want = set(labels.items())
    hits = [v for (n, l), v in series.items() if n == name and want <= set(l)]
    return hits[0] if len(hits) == 1 else None if not hits else hits


def family_of(name, types):
    for suf in ("_bucket", "_sum", "_count"):
        if name.endswith(suf) and types.get(name[:-len(suf)]) == "histogram":
            return name[:-len(suf)]
    return name


tmp = tempfile.mkdtemp(prefix="gp_prom_")
procs = []
try:
    # 1. promtool on every scenario, with and without the dcgm names
    cases = [("no GPU", {}), ("basic (lost GPU, unsupported fields)", scenario("nvml_basic.scn")),
             ("8 GPUs, every field", scenario("nvml_8gpu.scn")),
             ("soak (faults)", scenario("nvml_soak.scn")), ("bench", scenario("nvml_bench.scn")),
             ("prom (escaped name)", scenario("nvml_prom.scn")), ("nvidia-smi fallback", SMI)]
    for name, extra in cases:
        for dcgm in (False, True):
            tf = os.path.join(tmp, "case.prom")
            args = ["monitor", "--count", "4", "--interval", "0.02", "--textfile", tf]
            if dcgm:
                args += ["--metric-names", "dcgm"]
            rc, out, err = run(args, extra)
            what = "%s%s" % (name, " --metric-names dcgm" if dcgm else "")
            check(rc == 0 and out == "", "%s: monitor --textfile runs quietly (%s)" % (what, err.strip()))
            text = open(tf).read()
            prc, bad = promtool(text)
            check(prc in (0, 3) and not bad, "%s: promtool check metrics (%s)" % (what, bad[:3]))
            series, types, helps = parse(text)
            missing = {family_of(n, types) for (n, _) in series} - (set(types) & helps)
            check(not missing, "%s: HELP and TYPE for every family (%s)" % (what, sorted(missing)[:3]))
            check(get(series, "gpu_device_count") is not None, "%s: gpu_device_count" % what)
            check(any(n.startswith("DCGM_FI_") for n in types) == dcgm,
                  "%s: dcgm names only when asked" % what)

    # values of the basic scenario: GPU 1 is lost at tick 2, fan unsupported
    # (10 ticks over ~0.5 s: the XID event thread polls every 20 ms)
    rc, out, err = run(["monitor", "--count", "10", "--interval", "0.05", "--textfile",
                        os.path.join(tmp, "b.prom"), "--metric-names", "dcgm"],
                       scenario("nvml_basic.scn"))
    series, types, helps = parse(open(os.path.join(tmp, "b.prom")).read())
    u0 = "GPU-11111111-2222-3333-4444-555555555555"
    u1 = "GPU-66666666-7777-8888-9999-000000000000"
    check(get(series, "gpu_device_count") == 1, "basic: one GPU present after the loss")
    check(get(series, "gpuprof_gpu_present", uuid=u1) == 0 and
          get(series, "gpuprof_gpu_present", uuid=u0) == 1, "basic: present 1 / lost 0")
    check(get(series, "gpuprof_gpu_temperature_celsius", uuid=u1) is None,
          "basic: a lost GPU has no gauges")
    check(get(series, "gpuprof_gpu_fan_speed_ratio", uuid=u0) is None and
          "gpuprof_gpu_fan_speed_ratio" in types, "basic: unsupported fan is absent, family typed")
    check(get(series, "gpuprof_gpu_memory_used_bytes", uuid=u0, gpu="0", hostname=HOST,
              backend="nvml", model="NVIDIA H100 80GB HBM3") == 81604378624,
          "basic: memory used with its labels")
    check(get(series, "gpuprof_gpu_utilization_ratio", uuid=u0) == 0.8, "basic: 80 % = 0.8")
    check(get(series, "DCGM_FI_DEV_FB_USED", UUID=u0, modelName="NVIDIA H100 80GB HBM3",
              Hostname=HOST, gpu="0") == 81604378624 / 1048576, "basic: DCGM_FI_DEV_FB_USED MiB")
    # device 1 is lost, and device 0's XID 79 (fell off the bus) is a loss too (issue 15)
    check(get(series, "gpuprof_alerts_total", kind="device_lost", level="critical") == 2,
          "basic: the loss counted")
    check(get(series, "gpuprof_alert_level", uuid=u1, kind="device_lost") == 2,
          "basic: device_lost active")
    check(get(series, "gpuprof_gpu_xid_errors_total", uuid=u0) == 1 and
          get(series, "gpuprof_gpu_last_xid", uuid=u0) == 79, "basic: XID counter and code")
    check(get(series, "gpuprof_gpu_process_memory_used_bytes", uuid=u0, pid="999999",
              process="?") == 2147483648, "basic: per-process memory")
    check(get(series, "gpuprof_gpu_clock_throttled", uuid=u0, reason="sw_thermal") == 1 and
          get(series, "gpuprof_gpu_clock_throttled", uuid=u0, reason="hw_thermal") == 0,
          "basic: throttle reasons")

    # 2. textfile replaced atomically while a reader reads it
    tf = os.path.join(tmp, "tf", "gpuprof.prom")
    os.makedirs(os.path.dirname(tf))
    p = subprocess.Popen([GP, "monitor", "--count", "60", "--interval", "0.02", "--textfile", tf],
                         env=env_for(scenario("nvml_prom.scn")), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    procs.append(p)
    reads = partial = 0
    inodes = set()
    deadline = time.time() + 20
    while p.poll() is None and time.time() < deadline:
        try:
            with open(tf) as f:
                inodes.add(os.fstat(f.fileno()).st_ino)
                t = f.read()
        except FileNotFoundError:
            continue
        reads += 1
        time.sleep(0.003)
        if not (t.endswith("\n") and "gpuprof_monitor_ticks_total " in t and
                t.startswith("# HELP gpu_device_count")):
            partial += 1
    p.wait(timeout=20)
    check(p.returncode == 0, "textfile: monitor ends after --count")
    check(reads > 5 and partial == 0, "textfile: %d reads, %d partial" % (reads, partial))
    check(len(inodes) > 1, "textfile: replaced by rename (%d inodes seen)" % len(inodes))
    check(os.listdir(os.path.dirname(tf)) == ["gpuprof.prom"], "textfile: no temporary left")
    final = open(tf).read()
    prc, bad = promtool(final)
    check(prc in (0, 3) and not bad, "textfile: promtool reads it")
    s2, _, _ = parse(final)
    check(get(s2, "gpuprof_monitor_ticks_total") == 60, "textfile: the last tick's content")

    # 3. monitor line mode: alert records, uuid/hostname, events.jsonl
    outdir = os.path.join(tmp, "out")
    rc, out, err = run(["monitor", "--count", "4", "--interval", "0.02", "--gpus-only"],
                       dict(scenario("nvml_basic.scn"), GPUPROF_OUTPUT_DIR=outdir))
    lines = [json.loads(l) for l in out.splitlines()]
    samples = [l for l in lines if "type" not in l]
    alerts = [l for l in lines if l.get("type") == "alert"]
    check(rc == 0 and len(samples) == 8, "lines: 4 ticks x 2 GPUs of samples")
    check(all(l["uuid"] in (u0, u1) and l["hostname"] == HOST for l in samples),
          "lines: samples carry uuid and hostname")
    # device 0's XID 79 is a device_lost alert (issue 15) whose tick depends
    # on when the XID event thread (20 ms polls) saw it: not part of the tick check
    xid = [a for a in alerts if a["kind"] == "device_lost" and a["device"] == 0]
    rest = [a for a in alerts if a not in xid]
    kinds = sorted((a["kind"], a["level"], a["device"]) for a in rest)
    check(kinds == [("device_lost", "critical", 1), ("memory", "critical", 0),
                    ("temperature", "warning", 0), ("utilization", "warning", 0)]
          and len(xid) <= 1, "lines: alert records %s" % kinds)
    check(all(a["tick"] == 2 and a["hostname"] == HOST and a["uuid"] in (u0, u1) for a in rest)
          and all(a["hostname"] == HOST and a["uuid"] == u0 for a in xid),
          "lines: alert records carry tick, uuid, hostname")
    ev = [json.loads(l) for l in open(os.path.join(outdir, "events.jsonl"))]
    evk = [(e["kind"], e["level"], e.get("device")) for e in ev if e["type"] == "alert"]
    check(("temperature", "warning", 0) in evk and ("device_lost", "critical", 1) in evk,
          "events.jsonl written by monitor with the alerts")
    rc, out, err = run(["monitor", "--count", "4", "--interval", "0.02", "--gpus-only", "--csv"],
                       scenario("nvml_basic.scn"))
    rows = out.splitlines()
    head = rows[0].split(",")
    check(head[-8:] == ["uuid", "hostname", "event", "alert_kind", "alert_level", "alert_value",
                        "alert_threshold", "message"], "csv: header ends with identity and alert columns")
    arows = [r for r in rows[1:] if ",alert,temperature,warning," in r]
    check(len(arows) == 1 and len(rows) in (1 + 8 + 4, 1 + 8 + 5), "csv: sample rows and alert rows")

    # 4. run --sample-interval uses the monitor configuration
    db = os.path.join(tmp, "run.db")
    rc, out, err = run(["run", "-q", "--no-summary", "--sample-interval", "20", "-o", db, "--",
                        "sleep", "0.3"], scenario("nvml_prom.scn"))
    names = [r[0] for r in sqlite3.connect(db).execute(
        "select s.s from counters c join strings s on s.id = c.name and s.proc = c.proc")]
    check(rc == 0 and any(n.startswith("NVIDIA A100-SXM4-80GB util_pct") for n in names),
          "run: GPU counters through GPUPROF_NVML_LIB (%s)" % err.strip())
    db2 = os.path.join(tmp, "run2.db")
    cfg = os.path.join(tmp, "mon.yaml")
    open(cfg, "w").write("enable_gpu_monitoring: false\n")
    rc, out, err = run(["run", "-q", "--no-summary", "--sample-interval", "20", "--config", cfg,
                        "-o", db2, "--", "sleep", "0.2"], scenario("nvml_prom.scn"))
    names = [r[0] for r in sqlite3.connect(db2).execute(
        "select s.s from counters c join strings s on s.id = c.name and s.proc = c.proc")]
    check(rc == 0 and names and not any("A100" in n for n in names),
          "run --config: GPU monitoring off, host counters only")
    # GPUPROF_NVIDIA_SMI: the nvidia-smi back-end when NVML is absent
    db3 = os.path.join(tmp, "run3.db")
    # (nvidia-smi is a process per query: a longer run for its first samples.
    # The sampler spawns it with the environment: its thread starts only once
    # run has set CMD's environment, else setenv raced with the spawn and
    # the samples were lost now and then)
    rc, out, err = run(["run", "-q", "--no-summary", "--sample-interval", "20", "-o", db3,
                        "--", "sleep", "1.5"],
                       {"GPUPROF_NVIDIA_SMI": os.path.join(DATA, "fake-nvidia-smi")})
    names = [r[0] for r in sqlite3.connect(db3).execute(
        "select s.s from counters c join strings s on s.id = c.name and s.proc = c.proc")]
    check(rc == 0 and any(n.startswith("NVIDIA A100-SXM4-40GB util_pct") for n in names),
          "run: GPU counters through GPUPROF_NVIDIA_SMI (%s; %s)" % (err.strip(), names[:4]))
    # --set KEY=VALUE as monitor --set
    db4 = os.path.join(tmp, "run4.db")
    rc, out, err = run(["run", "-q", "--no-summary", "--sample-interval", "20", "--set",
                        "enable_gpu_monitoring=false", "-o", db4, "--", "sleep", "0.2"],
                       scenario("nvml_prom.scn"))
    names = [r[0] for r in sqlite3.connect(db4).execute(
        "select s.s from counters c join strings s on s.id = c.name and s.proc = c.proc")]
    check(rc == 0 and names and not any("A100" in n for n in names),
          "run --set enable_gpu_monitoring=false: host counters only")
    rc, out, err = run(["run", "--sample-interval", "20", "--set", "nope=1", "--", "true"])
    check(rc == 2 and "unknown key 'nope'" in err, "run --set: a bad key is refused")

    # 5. listener rules
    rc, out, err = run(["monitor", "--count", "1", "--prometheus", "0.0.0.0:0"])
    check(rc == 2 and "not a loopback address" in err, "listener: non-loopback refused")
    rc, out, err = run(["monitor", "--count", "1", "--prometheus", "0.0.0.0:0", "--no-auth"])
    check(rc == 0 and "WARNING" in err, "listener: --no-auth starts with a warning")
    short = os.path.join(tmp, "short.token")
    open(short, "w").write("abc\n")
    rc, out, err = run(["monitor", "--count", "1", "--prometheus", "127.0.0.1:0",
                        "--token-file", short])
    check(rc == 2 and "at least 16" in err, "listener: short token refused")

    def free_port():
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        return port

    # 6. a real Prometheus scrapes gpuprof monitor --prometheus
    token = "t0ken-" + os.urandom(12).hex()
    tokf = os.path.join(tmp, "token")
    open(tokf, "w").write(token + "\n")
    gport, pport, sport = free_port(), free_port(), free_port()
    rules = os.path.join(SRC, "dashboards", "gpuprof-rules.yml")
    pr = subprocess.run([PROMTOOL, "check", "rules", rules], capture_output=True, text=True)
    check(pr.returncode == 0, "dashboards/gpuprof-rules.yml: promtool check rules")
    cfgp = os.path.join(tmp, "prometheus.yml")
    open(cfgp, "w").write("""global:
  scrape_interval: 500ms
  scrape_timeout: 400ms
  evaluation_interval: 500ms
rule_files: ['%s']
scrape_configs:
  - job_name: gpuprof
    authorization:
      type: Bearer
      credentials_file: %s
    static_configs:
      - targets: ['127.0.0.1:%d']
  - job_name: gpuprof_serve
    static_configs:
      - targets: ['127.0.0.1:%d']
""" % (rules, tokf, gport, sport))
    prom = subprocess.Popen([PROMETHEUS, "--config.file=" + cfgp,
                             "--web.listen-address=127.0.0.1:%d" % pport,
                             "--storage.tsdb.path=" + os.path.join(tmp, "tsdb"),
                             "--log.level=warn"],
                            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "prom.log"), "w"))
    procs.append(prom)
    base = "http://127.0.0.1:%d" % pport

    def http(url, headers=None, method="GET"):
        req = urllib.request.Request(url, headers=headers or {}, method=method)
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return r.status, r.read().decode(), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(), dict(e.headers)
        except (urllib.error.URLError, ConnectionError, socket.timeout):
            return None, "", {}

    def query(q):
        st, body, _ = http(base + "/api/v1/query?" + urllib.parse.urlencode({"query": q}))
        if st != 200:
            return None
        return json.loads(body)["data"]["result"]

    deadline = time.time() + 30
    while time.time() < deadline and http(base + "/-/ready")[0] != 200:
        time.sleep(0.2)
    check(http(base + "/-/ready")[0] == 200, "prometheus: ready")
    # started after Prometheus so that it sees the temperature before the alert
    gp = subprocess.Popen([GP, "monitor", "--prometheus", "127.0.0.1:%d" % gport, "--interval",
                           "0.25", "--metric-names", "dcgm", "--token-file", tokf],
                          env=env_for(scenario("nvml_prom.scn")), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    procs.append(gp)
    # and gpuprof serve --monitor (GET /metrics beside the API; loopback: no token)
    tmpout = os.path.join(tmp, "serve-out")
    sv = subprocess.Popen([GP, "serve", "--monitor", "--metric-names", "dcgm", "--quiet",
                           "--listen", "127.0.0.1:%d" % sport],
                          env=env_for(dict(scenario("nvml_prom.scn"),
                                           GPUPROF_MONITORING_INTERVAL_SECONDS="0.25",
                                           GPUPROF_OUTPUT_DIR=tmpout)),
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    procs.append(sv)
    gurl = "http://127.0.0.1:%d" % gport
    while time.time() < deadline and http(gurl + "/metrics")[0] is None:
        time.sleep(0.1)
    st, body, hdr = http(gurl + "/metrics")
    check(st == 401 and "Bearer" in hdr.get("WWW-Authenticate", ""), "listener: 401 without token")
    st, _, _ = http(gurl + "/metrics", {"Authorization": "Bearer " + token[:-1] + "x"})
    check(st == 401, "listener: 401 with a wrong token")
    auth = {"Authorization": "Bearer " + token}
    st, body, hdr = http(gurl + "/metrics", auth)
    check(st == 200 and hdr.get("Content-Type", "").startswith("text/plain; version=0.0.4") and
          "gpu_device_count 2\n" in body, "listener: 200 with the exposition")
    import gzip
    st, _, _ = http(gurl + "/metrics", auth)
    req = urllib.request.Request(gurl + "/metrics", headers=dict(auth, **{"Accept-Encoding": "gzip"}))
    with urllib.request.urlopen(req, timeout=5) as r:
        zbody, zenc = r.read(), r.headers.get("Content-Encoding")
    plain = http(gurl + "/metrics", auth)[1]
    check(zenc == "gzip" and "gpu_device_count 2\n" in gzip.decompress(zbody).decode() and
          len(zbody) < len(plain) / 4, "listener: gzip when asked (%d vs %d bytes)" % (len(zbody), len(plain)))
    check(http(gurl + "/metrics", auth, "POST")[0] == 405, "listener: POST is 405")
    check(http(gurl + "/nope", auth)[0] == 404, "listener: unknown path is 404")

    ua = "GPU-aaaaaaaa-1111-2222-3333-444444444444"
    grew = None
    while time.time() < deadline:
        r = query('max_over_time(gpuprof_alerts_total{job="gpuprof",kind="temperature",level="critical"}[5m])')
        if r and float(r[0]["value"][1]) >= 1:
            grew = r
            break
        time.sleep(0.3)
    check(grew is not None, "prometheus: the temperature alert counter reached 1")
    r = query('min_over_time(gpuprof_alerts_total{job="gpuprof",kind="temperature",level="critical"}[5m])')
    check(r and float(r[0]["value"][1]) == 0, "prometheus: the counter was 0 before (it grew)")
    r = query('max_over_time(gpu_thermal_alerts_total{job="gpuprof"}[5m]) - '
              'min_over_time(gpu_thermal_alerts_total{job="gpuprof"}[5m])')
    check(r and float(r[0]["value"][1]) == 1, "prometheus: gpu_thermal_alerts_total grew by 1")
    r = query("up{job=\"gpuprof\"}")
    check(r and r[0]["value"][1] == "1", "prometheus: target up (with the bearer token)")
    r = query('gpu_device_count{job="gpuprof"}')
    check(r and r[0]["value"][1] == "2", "prometheus: gpu_device_count 2")
    r = query('gpuprof_gpu_memory_used_bytes{job="gpuprof",uuid="%s"}' % ua)
    want = {"gpu": "0", "uuid": ua, "model": "NVIDIA A100-SXM4-80GB", "hostname": HOST,
            "backend": "nvml", "job": "gpuprof"}
    check(r and len(r) == 1 and all(r[0]["metric"].get(k) == v for k, v in want.items()) and
          float(r[0]["value"][1]) == 21474836480, "prometheus: per-GPU gauge, labels and value")
    r = query('gpuprof_gpu_power_watts{job="gpuprof",uuid="%s"}' % ua)
    check(r and float(r[0]["value"][1]) == 250.5, "prometheus: power 250.5 W")
    r = query('DCGM_FI_DEV_FB_USED{job="gpuprof",UUID="%s",modelName="NVIDIA A100-SXM4-80GB"}' % ua)
    check(r and float(r[0]["value"][1]) == 20480 and r[0]["metric"].get("Hostname") == HOST,
          "prometheus: dcgm-exporter name and labels")
    r = query('gpuprof_gpu_memory_used_bytes{job="gpuprof",model="Odd \\"GPU\\" \\\\ name"}')
    check(r and float(r[0]["value"][1]) == 1073741824, "prometheus: escaped label value round trip")
    r = query('gpuprof_gpu_temperature_celsius{gpu="1"}')  # both jobs
    check(r == [], "prometheus: an unsupported field is absent, not 0")
    # the shipped rules and dashboard work on what gpuprof exposes
    r = query('gpuprof:gpu_memory_used:ratio{job="gpuprof",uuid="%s"}' % ua)
    check(r and float(r[0]["value"][1]) == 0.25, "rules: recording rule (memory ratio 0.25)")
    firing = None
    while time.time() < deadline and not firing:
        firing = query('ALERTS{alertname="GpuprofMonitorAlert",alertstate="firing",kind="temperature"}')
        time.sleep(0.3)
    check(bool(firing), "rules: GpuprofMonitorAlert fires for the temperature alert")
    dash = json.load(open(os.path.join(SRC, "dashboards", "gpuprof-grafana.json")))
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    empty = []
    for e in exprs:
        e2 = e.replace("$hostname", ".*").replace("$gpu", ".*")
        r = query(e2)
        if not r:
            empty.append(e)
    check(len(exprs) >= 20 and not empty,
          "dashboard: all %d panel queries answer with data (empty: %s)" % (len(exprs), empty[:3]))
    for v in dash["templating"]["list"][1:]:
        st, body, _ = http(base + "/api/v1/label/%s/values" % v["name"])
        check(st == 200 and json.loads(body)["data"], "dashboard: variable %s has values" % v["name"])
    # the serve --monitor target, scraped by the same Prometheus
    served = None
    while time.time() < deadline + 15 and not served:
        served = query('max_over_time(gpuprof_alerts_total{job="gpuprof_serve",kind="temperature",'
                       'level="critical"}[5m])')
        served = served if served and float(served[0]["value"][1]) >= 1 else None
        time.sleep(0.3)
    r = query('up{job="gpuprof_serve"}')
    check(r and r[0]["value"][1] == "1", "prometheus: serve --monitor target up")
    r = query('gpu_device_count{job="gpuprof_serve"}')
    check(r and r[0]["value"][1] == "2", "prometheus: serve --monitor: gpu_device_count 2")
    r = query('gpuprof_gpu_memory_used_bytes{job="gpuprof_serve",uuid="%s"}' % ua)
    want["job"] = "gpuprof_serve"
    check(r and len(r) == 1 and all(r[0]["metric"].get(k) == v for k, v in want.items()) and
          float(r[0]["value"][1]) == 21474836480,
          "prometheus: serve --monitor: per-GPU gauge, labels and value")
    r = query('DCGM_FI_DEV_FB_USED{job="gpuprof_serve",UUID="%s"}' % ua)
    check(r and float(r[0]["value"][1]) == 20480, "prometheus: serve --monitor: dcgm name")
    check(served is not None, "prometheus: serve --monitor: the temperature alert counter grew")
    sv.send_signal(signal.SIGTERM)
    sv.wait(timeout=10)
    check(sv.returncode == 0, "serve --monitor stops on SIGTERM")
    gp.send_signal(signal.SIGTERM)
    gp.wait(timeout=10)
    check(gp.returncode == 0, "monitor --prometheus stops on SIGTERM")
finally:
    for p in procs:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
    shutil.rmtree(tmp, ignore_errors=True)

print("%d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
