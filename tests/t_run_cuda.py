#!/usr/bin/env python3
"""gpuprof run --cuda on a real CUDA program (examples/cuda_saxpy.cu): the
CUPTI injection records kernels, copies and runtime API calls linked by
correlation ids. Needs an NVIDIA GPU and driver: skips with the reason
otherwise (the record conversion itself is tested by test_cupti_conv)."""
import ctypes, os, sqlite3, subprocess, sys, tempfile

BIN = os.environ.get("GPUPROF_BIN", "build/gpuprof")
BUILD = os.environ.get("GPUPROF_BUILD_DIR", os.path.dirname(BIN))
PROG = os.path.join(BUILD, "example_cuda_saxpy")
LIB = os.path.join(BUILD, "libgpuprof_cuda_inject.so")
if not os.path.exists(LIB):
    print("SKIP: libgpuprof_cuda_inject.so not built (no CUDA toolkit)")
    sys.exit(77)
if not os.path.exists(PROG):
    print("SKIP: example_cuda_saxpy not built (no nvcc)")
    sys.exit(77)
try:
    cuda = ctypes.CDLL("libcuda.so.1")
    n = ctypes.c_int(0)
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(n)) != 0 or n.value == 0:
        raise OSError("no CUDA device")
except OSError as e:
    print("SKIP: no NVIDIA GPU / driver here (%s): CUDA recording not verified" % e)
    sys.exit(77)
tmp = tempfile.mkdtemp(prefix="gp_cuda_")
db = os.path.join(tmp, "c.db")
r = subprocess.run([BIN, "run", "-o", db, "--cuda", "--", PROG], capture_output=True, text=True,
                   cwd=tmp)
print(r.stdout[-2000:], r.stderr[-2000:])
con = sqlite3.connect(db)
k = con.execute("SELECT count(*), min(dur) FROM kernel_v").fetchone()
c = con.execute("SELECT count(*) FROM copy_v").fetchone()[0]
linked = con.execute("SELECT count(*) FROM api_v a JOIN kernel_v k ON k.corr = a.corr AND "
                     "k.proc = a.proc").fetchone()[0]
ok = r.returncode == 0 and k[0] > 0 and k[1] > 0 and c > 0 and linked == k[0]
print("kernels %d (min dur %s ns), copies %d, launches linked %d" % (k[0], k[1], c, linked))
sys.exit(0 if ok else 1)
