#!/usr/bin/env python3
"""Writes N folded-stack lines ("a;b;c COUNT") shaped like a real profiler's:
stacks grow from a few roots through a vocabulary of ~5,000 frame names,
depth 5..23, so that the merged tree has many distinct paths (about 100 MB
for 1 M lines, like the flamegraph.pl reference). Deterministic.

usage: gen_folded.py OUT N"""
import random, sys


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    rnd = random.Random(42)
    names = ["m%d.f%d" % (rnd.randint(0, 30), i) for i in range(5000)]
    roots = ["main", "worker1", "worker2"]
    with open(out, "w") as f:
        for _ in range(n):
            depth = rnd.randint(4, 22)
            # a skewed walk: early frames repeat a lot (shared prefixes), deep ones vary
            st = [rnd.choice(roots)]
            for d in range(depth):
                k = int(rnd.paretovariate(1.2)) * (d + 1) % len(names)
                st.append(names[k])
            f.write(";".join(st) + " " + str(rnd.randint(1, 500)) + "\n")


main()
