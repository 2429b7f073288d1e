// bench/simdjson_count.cpp: the peer for bench/import.sh: simdjson (Debian
// libsimdjson-dev, a bench-only dependency) counting the events of a trace's
// "traceEvents" array with its on-demand API, from a warm in-memory buffer
// (the file is loaded first and not timed). Also its DOM parse of the whole
// document (skipped with a third argument "count", so that two runs at once
// overlap in their counts). Prints the best time of ROUNDS for each, in
// seconds and MB/s.
// Usage: simdjson_count FILE [ROUNDS] [count]
#include <simdjson.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

using namespace simdjson;
#define STRINGIFY_(x) #x
#define STRINGIFY(x)  STRINGIFY_(x)

static double cpu_now()
{
    timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double secs(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b)
{
    return std::chrono::duration<double>(b - a).count();
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: simdjson_count FILE [ROUNDS] [count]\n");
        return 2;
    }
    int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
    bool dom_too = !(argc > 3 && std::string(argv[3]) == "count");
    padded_string json;
    if (padded_string::load(argv[1]).get(json)) {
        std::fprintf(stderr, "simdjson_count: cannot load %s\n", argv[1]);
        return 2;
    }
    double mb = (double)json.size() / 1e6;
    double best_od = 1e30, best_dom = 1e30, cpu_od = 1e30, cpu_dom = 1e30;
    size_t count = 0;
    ondemand::parser op;
    dom::parser dp;
    for (int r = 0; r < rounds; r++) {
        double c0 = cpu_now();
        auto t0 = std::chrono::steady_clock::now();
        ondemand::document doc;
        if (op.iterate(json).get(doc)) return 1;
        ondemand::array evs;
        if (doc["traceEvents"].get_array().get(evs)) return 1;
        size_t n = 0;
        for (auto e : evs) {
            ondemand::object o;
            if (e.get_object().get(o)) return 1;
            n++;
        }
        auto t1 = std::chrono::steady_clock::now();
        double c1 = cpu_now();
        count = n;
        if (secs(t0, t1) < best_od) best_od = secs(t0, t1);
        if (c1 - c0 < cpu_od) cpu_od = c1 - c0;
        if (!dom_too) continue;
        c0 = cpu_now();
        t0 = std::chrono::steady_clock::now();
        dom::element root;
        if (dp.parse(json).get(root)) {
            best_dom = -1;
        } else {
            t1 = std::chrono::steady_clock::now();
            c1 = cpu_now();
            if (secs(t0, t1) < best_dom) best_dom = secs(t0, t1);
            if (c1 - c0 < cpu_dom) cpu_dom = c1 - c0;
        }
    }
    std::printf("simdjson %s (%s), %.1f MB, %zu events\n", STRINGIFY(SIMDJSON_VERSION),
                simdjson::get_active_implementation()->name().c_str(), mb, count);
    std::printf("  on-demand event count: wall %6.3f s %6.0f MB/s   cpu %6.3f s %6.0f MB/s\n",
                best_od, mb / best_od, cpu_od, mb / cpu_od);
    if (!dom_too)
        ;
    else if (best_dom > 0)
        std::printf("  DOM parse            : wall %6.3f s %6.0f MB/s   cpu %6.3f s %6.0f MB/s\n",
                    best_dom, mb / best_dom, cpu_dom, mb / cpu_dom);
    else
        std::printf("  DOM parse            : failed (document too large for the DOM parser?)\n");
    return 0;
}
