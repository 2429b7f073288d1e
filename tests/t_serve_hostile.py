#!/usr/bin/env python3
"""gpuprof serve against hostile requests: missing, wrong and other-scheme
tokens (401), a read token on a POST (403), oversize headers and URL, a body
over the limit, bad methods, path traversal in every spelling, malformed,
repeated, too many and huge query values, a NUL byte, too many requests from
one address (429), a slowloris connection (closed by the idle timeout while
other clients are served), TLS with a test certificate (plain HTTP on the TLS
port gets nothing), a non-loopback address without tokens (refused; --no-auth
warns), a token file readable by others (refused). After each the server
must still answer, and no token may appear in its log. Exit 77 without
serve."""
import http.client, json, os, socket, ssl, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import BIN, Server, status_of  # noqa: E402
from gp_testutil import SRC, check, failures, set_verbose  # noqa: E402

set_verbose()

READ = "r3adt0ken-0123456789abcdef"
CTRL = "c0ntr0lt0ken-0123456789abcdef"


def main():
    if subprocess.run([BIN, "serve", "--help"], capture_output=True).returncode != 0:
        print("SKIP: this gpuprof has no serve command")
        return 77
    tmp = tempfile.mkdtemp(prefix="gp_serve_hostile_")
    trace = os.path.join(SRC, "tests", "data", "small_kineto.json")
    tok = os.path.join(tmp, "tokens")
    with open(tok, "w") as f:
        f.write("# test tokens\n%s read\n%s control\n" % (READ, CTRL))
    os.chmod(tok, 0o600)
    env = dict(os.environ, GPUPROF_OUTPUT_DIR=os.path.join(tmp, "out"),
               GPUPROF_NVML_LIB="/nonexistent", GPUPROF_NVIDIA_SMI="/nonexistent")
    s = Server([trace, "--token-file", tok, "--max-per-ip", "4", "--timeout", "2"], env=env)
    rd = {"Authorization": "Bearer " + READ}
    ct = {"Authorization": "Bearer " + CTRL, "Content-Type": "application/json"}

    def up(what):
        st, _, _ = s.get("/api/traces", headers=rd)
        check(st == 200 and s.alive(), "still answering after " + what)

    try:
        st, h, b = s.get("/api/traces")
        check(st == 401 and "bearer" in h.get("www-authenticate", "").lower() and
              json.loads(b)["status"] == 401, "no token: 401 with WWW-Authenticate")
        st, _, _ = s.get("/api/traces", headers={"Authorization": "Bearer wrong-token-0123456789"})
        check(st == 401, "wrong token: 401")
        st, _, _ = s.get("/api/traces", headers={"Authorization": "Bearer " + READ[:-1]})
        check(st == 401, "a prefix of a token: 401")
        st, _, _ = s.get("/api/traces", headers={"Authorization": "Bearer " + READ + "x"})
        check(st == 401, "a token with one byte more: 401")
        st, _, _ = s.get("/api/traces", headers={"Authorization": "Basic " + READ})
        check(st == 401, "another scheme: 401")
        st, _, _ = s.get("/api/traces", headers={"Cookie": "gpuprof_token=" + READ})
        check(st == 200, "the dashboard's cookie works for GET")
        st, _, b = s.get("/api/traces", headers=rd)
        tid = json.loads(b)["traces"][0]["id"]
        check(st == 200, "read token: 200")
        st, h, b = s.get("/", headers={})
        check(st == 200 and h["content-type"].startswith("text/html") and
              "script-src 'sha256-" in h.get("content-security-policy", ""),
              "the dashboard page needs no token and has a hash-only CSP")
        check("access-control-allow-origin" not in h, "no CORS header")
        body = json.dumps({"action": "start", "name": "x"})
        st, _, _ = s.get("/api/sessions", method="POST", body=body,
                         headers=dict(rd, **{"Content-Type": "application/json"}))
        check(st == 403, "read token on a POST: 403")
        st, _, _ = s.get("/api/sessions", method="POST", body=body,
                         headers={"Cookie": "gpuprof_token=" + CTRL,
                                  "Content-Type": "application/json"})
        check(st == 401, "the cookie is not accepted for a POST (CSRF)")
        st, _, _ = s.get("/api/sessions", method="POST", body="{not json", headers=ct)
        check(st == 400, "control token, malformed JSON body: 400")
        st, _, _ = s.get("/api/sessions", method="POST", body=body,
                         headers={"Authorization": "Bearer " + CTRL, "Content-Type": "text/plain"})
        check(st == 415, "POST that is not application/json: 415")
        up("token checks")
        # oversize header and URL
        r = s.raw(b"GET /api/traces HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 60000 + b"\r\n\r\n")
        code = status_of(r)
        check(code == 431, "oversize header: 431 (%s)" % code)
        r = s.raw(b"GET /api/traces HTTP/1.1\r\nHost: x\r\n" +
                  b"".join(b"X-%d: %s\r\n" % (i, b"b" * 100) for i in range(400)) + b"\r\n")
        check(status_of(r) == 431, "400 headers of 100 bytes: 431 (%s)" % status_of(r))
        up("an oversize header")
        st, _, _ = s.get("/api/traces?x=" + "a" * 5000, headers=rd)
        check(st == 414, "URL over 4096 bytes: 414 (%d)" % st)
        r = s.raw(b"GET /api/traces?x=" + b"a" * 20000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        check(status_of(r) in (414, 431), "URL of 20 kB (beyond the header memory): 414/431 (%s)"
              % status_of(r))
        r = s.raw(b"OPTIONS /api/traces HTTP/1.1\r\nHost: x\r\nOrigin: http://evil.example\r\n"
                  b"Access-Control-Request-Method: GET\r\n\r\n")
        check(status_of(r) == 405 and b"access-control" not in r.lower(),
              "CORS preflight (OPTIONS): 405, no Access-Control header")
        big = "x" * (100 * 1024)
        st, _, _ = s.get("/api/sessions", method="POST", body=big, headers=ct)
        check(st == 413, "body over 64 KiB: 413")
        up("a large body")
        # methods
        for m in ("PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"):
            st, _, _ = s.get("/api/traces", method=m, headers=rd)
            check(st in (405, 501), "%s: 405 (%d)" % (m, st))
        r = s.raw(b"FOO /api/traces HTTP/1.1\r\nHost: x\r\n\r\n")
        check(status_of(r) in (400, 405, 501), "unknown method: 4xx/501 (%s)" % status_of(r))
        st, _, _ = s.get("/api/traces", method="POST", body="{}", headers=ct)
        check(st == 405, "POST on a GET route: 405")
        up("bad methods")
        # traversal: never a file, always 400 or 404
        for path in ("/api/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/api/%2e%2e/x",
                     "/api%2Ftraces", "//etc/passwd", "/api/./traces", "/api\\..\\x",
                     "/api/summary?trace=../../../../etc/passwd",
                     "/api/summary?trace=%2Fetc%2Fpasswd", "/view/report?trace=/etc/passwd",
                     "/etc/passwd", "/api/summary?trace=" + trace):
            st, h, b = s.get(path, headers=rd)
            check(st in (400, 404) and b"root:" not in b and
                  h.get("content-type") == "application/json", "%s: %d, no file" % (path, st))
        r = s.raw(b"GET http://127.0.0.1/api/traces HTTP/1.1\r\nHost: x\r\n\r\n")
        check(status_of(r) in (400, 404), "absolute-form target: 400/404 (%s)" % status_of(r))
        # malformed queries
        for q, what in (("trace=%zz", "bad escape"), ("trace=%4", "short escape"),
                        ("trace=%00", "NUL"), ("trace=a%0a", "newline"),
                        ("a=1&a=2", "repeated key"), ("BAD=1", "upper-case key"),
                        ("&".join("k%d=1" % i for i in range(40)), "40 parameters"),
                        ("trace=" + "a" * 2000, "2000-byte value"), ("=x", "empty key"),
                        ("trace=%s&top=99999999999999999999" % tid, "huge number"),
                        ("trace=%s&top=1e3" % tid, "non-integer"),
                        ("trace=%s&top=-5" % tid, "negative")):
            st, h, b = s.get("/api/summary?" + q, headers=rd)
            check(st == 400 and json.loads(b)["status"] == 400, "query with %s: 400" % what)
        up("malformed queries")
        # too many requests at once from one address: 4 slow ones held open
        held = []
        for _ in range(4):
            c = socket.create_connection(("127.0.0.1", s.port))
            c.sendall(b"GET /api/traces HTTP/1.1\r\nHost: x\r\n")  # headers never end
            held.append(c)
        time.sleep(0.3)
        st, _, _ = s.get("/api/traces", headers=rd)
        check(st == 429, "a 5th request while 4 are in flight from the same address: 429")
        for c in held:
            c.close()
        time.sleep(0.3)
        up("the per-address limit")
        # slowloris: a connection that sends a byte now and then is closed by
        # the idle timeout (2 s) when it stops; others are served meanwhile
        c = socket.create_connection(("127.0.0.1", s.port))
        c.settimeout(10)
        c.sendall(b"GET /api/traces HTTP/1.1\r\nHost: x\r\n")
        t0 = time.time()
        st, _, _ = s.get("/api/traces", headers=rd)
        check(st == 200, "served while a slow client holds a connection")
        try:
            got = c.recv(1000)
        except (socket.timeout, ConnectionResetError):
            got = None
        check(got is not None and time.time() - t0 < 8,
              "the idle slow connection is closed by the timeout (%.1f s)" % (time.time() - t0))
        c.close()
        up("slowloris")
        # slowloris that keeps sending: a byte every 0.4 s never lets the idle
        # timeout fire; the request deadline (twice --timeout: 4 s) closes it,
        # in the request line, the headers or the body
        def trickle(first, byte):
            c = socket.create_connection(("127.0.0.1", s.port))
            c.settimeout(0.1)
            t0 = time.time()
            c.sendall(first)
            try:
                while time.time() - t0 < 12:
                    c.sendall(byte)
                    try:
                        if not c.recv(100):
                            return time.time() - t0
                    except socket.timeout:
                        pass
                    time.sleep(0.4)
            except OSError:
                return time.time() - t0
            finally:
                c.close()
            return None
        for what, first, byte in (
                ("request line", b"GET /api/tra", b"c"),
                ("headers", b"GET /api/traces HTTP/1.1\r\nHost: x\r\nX-Slow: ", b"a"),
                ("body", b"POST /api/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
                 CTRL.encode() + b"\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 60000\r\n\r\n", b" ")):
            took = trickle(first, byte)
            check(took is not None and 3.5 < took < 9,
                  "a %s sent a byte at a time is closed by the request deadline (%s s)"
                  % (what, took and round(took, 1)))
        up("slowloris that keeps sending")
        # a keep-alive connection whose requests arrive in time stays usable
        c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
        ok = True
        for _ in range(4):
            c.request("GET", "/api/traces", headers=rd)
            r = c.getresponse()
            r.read()
            ok = ok and r.status == 200
            time.sleep(1.6)
        c.close()
        check(ok, "a keep-alive connection used for 6 s (over the deadline) with prompt "
                  "requests is not cut")
    finally:
        rc, err = s.stop()
    check(READ not in err and CTRL not in err, "no token in the server's log")
    check(rc == 0, "clean stop")

    # startup refusals
    r = subprocess.run([BIN, "serve", "--listen", "0.0.0.0:0", trace], capture_output=True,
                       text=True, timeout=30)
    check(r.returncode == 2 and "token-file" in r.stderr,
          "a non-loopback address without tokens is refused")
    bad = os.path.join(tmp, "tokens644")
    with open(bad, "w") as f:
        f.write(READ + "\n")
    os.chmod(bad, 0o644)
    r = subprocess.run([BIN, "serve", "--token-file", bad, trace], capture_output=True, text=True,
                       timeout=30)
    check(r.returncode == 2 and "chmod 600" in r.stderr, "a token file readable by others: refused")
    semi = os.path.join(tmp, "semicolon")
    with open(semi, "w") as f:
        f.write("abcdefghijklmnop;Domain=evil read\n")
    os.chmod(semi, 0o600)
    r = subprocess.run([BIN, "serve", "--token-file", semi, trace], capture_output=True,
                       text=True, timeout=30)
    check(r.returncode == 2 and "other than ;" in r.stderr and r.stderr.count("\n") == 1,
          "a token with a cookie delimiter is refused: %r" % r.stderr)
    short = os.path.join(tmp, "short")
    with open(short, "w") as f:
        f.write("abc read\n")
    os.chmod(short, 0o600)
    r = subprocess.run([BIN, "serve", "--token-file", short, trace], capture_output=True,
                       text=True, timeout=30)
    check(r.returncode == 2 and ":1:" in r.stderr, "a too short token: refused with FILE:LINE")
    # a symlink out of a served folder
    folder = os.path.join(tmp, "ranks")
    os.mkdir(folder)
    os.symlink(trace, os.path.join(folder, "rank0.json"))  # its target lies outside
    r = subprocess.run([BIN, "serve", "--listen", "127.0.0.1:0", folder], capture_output=True,
                       text=True, timeout=30)
    check(r.returncode == 2 and "outside the served folder" in r.stderr,
          "a folder with a symlink to a file outside it is refused")
    os.unlink(os.path.join(folder, "rank0.json"))
    with open(trace) as src, open(os.path.join(folder, "rank0.json"), "w") as dst:
        dst.write(src.read())
    t = Server([folder, "--quiet"], env=env)
    try:
        fid = json.loads(t.get("/api/traces")[2])["traces"][0]["id"]
        st, _, _ = t.get("/api/summary?trace=" + fid)
        check(st == 200, "the same folder with a real file is served")
        time.sleep(1.1)
        os.symlink("/etc/passwd", os.path.join(folder, "rank1.json"))
        st, _, b = t.get("/api/summary?trace=" + fid)
        check(st == 422 and b"outside the served folder" in b and b"root:" not in b,
              "a symlink out of the folder added later: the trace is refused (422)")
    finally:
        t.stop()
    p = subprocess.Popen([BIN, "serve", "--listen", "0.0.0.0:0", "--no-auth", trace],
                         stderr=subprocess.PIPE, text=True)
    first = p.stderr.readline()
    rest = p.stderr.readline()
    p.terminate()
    p.wait(timeout=30)
    p.stderr.close()
    check("WARNING" in first + rest and "--no-auth" in first + rest, "--no-auth warns at start")

    # TLS with a test certificate
    key, cert = os.path.join(tmp, "key.pem"), os.path.join(tmp, "cert.pem")
    made = False
    if subprocess.run(["which", "certtool"], capture_output=True).returncode == 0:
        tpl = os.path.join(tmp, "tpl")
        with open(tpl, "w") as f:
            f.write('cn = "127.0.0.1"\nip_address = "127.0.0.1"\nexpiration_days = 2\n'
                    'tls_www_server\nsigning_key\nencryption_key\n')
        made = subprocess.run(["certtool", "--generate-privkey", "--outfile", key],
                              capture_output=True).returncode == 0 and subprocess.run(
            ["certtool", "--generate-self-signed", "--load-privkey", key, "--template", tpl,
             "--outfile", cert], capture_output=True).returncode == 0
    if not made:
        print("note: certtool (gnutls-bin) missing: TLS not checked")
    else:
        t = Server([trace, "--tls-cert", cert, "--tls-key", key, "--quiet"], env=env)
        try:
            check(t.scheme == "https", "https announced")
            ctx = ssl.create_default_context(cafile=cert)
            ctx.check_hostname = False
            c = http.client.HTTPSConnection("127.0.0.1", t.port, context=ctx, timeout=30)
            c.request("GET", "/api/traces")
            r = c.getresponse()
            data = r.read()
            check(r.status == 200 and json.loads(data)["traces"] and
                  r.getheader("Strict-Transport-Security"), "HTTPS request with the test CA: 200")
            c.close()
            plain = t.raw(b"GET /api/traces HTTP/1.1\r\nHost: x\r\n\r\n", timeout=5)
            check(b"traces" not in plain, "plain HTTP to the TLS port gets no data")
            c = http.client.HTTPSConnection("127.0.0.1", t.port, context=ctx, timeout=30)
            c.request("GET", "/api/traces")
            check(c.getresponse().status == 200, "TLS server still answers")
            c.close()
        finally:
            t.stop()
    print("t_serve_hostile: %d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
