"""Helpers of the gpuprof serve tests: start a server on a free loopback
port (parsed from its start line), make raw or plain HTTP requests, stop it."""
import http.client, os, re, signal, socket, subprocess, time

BIN = os.environ.get("GPUPROF_BIN", "build/gpuprof")


class Server:
    def __init__(self, args, env=None, timeout=60):
        self.p = subprocess.Popen([BIN, "serve", "--listen", "127.0.0.1:0"] + args,
                                  stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                                  env=env)
        line = self.p.stderr.readline()
        m = re.search(r"listening on (https?)://127\.0\.0\.1:(\d+)/", line)
        if not m:
            rest = ""
            try:
                rest = self.p.stderr.read()
            except Exception:
                pass
            self.p.kill()
            raise RuntimeError("server did not start: " + line + rest)
        self.scheme, self.port = m.group(1), int(m.group(2))
        self.start_line = line

    def get(self, path, headers=None, method="GET", body=None, timeout=120):
        """Returns (status, headers dict (lower-case names), body bytes)."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        h = {k.lower(): v for k, v in r.getheaders()}
        c.close()
        return r.status, h, data

    def raw(self, data, timeout=10, shut=True):
        """Sends raw bytes, returns what the server answered until it closed
        (or the timeout)."""
        s = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        out = b""
        try:  # the server may answer and close before everything was sent
            s.sendall(data)
            if shut:
                s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        try:
            while True:
                k = s.recv(65536)
                if not k:
                    break
                out += k
        except (socket.timeout, OSError):
            pass
        s.close()
        return out

    def alive(self):
        return self.p.poll() is None

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        err = self.p.stderr.read()
        self.p.stderr.close()
        return self.p.returncode, err


def status_of(resp):
    m = re.match(rb"HTTP/1\.[01] (\d{3})", resp)
    return int(m.group(1)) if m else None
