-- serve_mixed.lua: wrk script of the gpuprof serve load test and benchmark:
-- cycles through a mix of requests on trace $GP_TRACE (the result endpoints,
-- the trace list, the dashboard) and counts answers that are not 200.
local id = os.getenv("GP_TRACE") or "00000000"
local paths = {
  "/api/profiler/kernels?trace=" .. id,
  "/api/summary?trace=" .. id .. "&top=5",
  "/api/traces",
  "/api/profiler/hta?trace=" .. id,
  "/api/profiler/flame?trace=" .. id .. "&min_duration=100us",
  "/api/advise?trace=" .. id,
  "/api/profiler/memory?trace=" .. id .. "&points=200",
  "/",
}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % #paths) + 1])
end
local bad = 0
response = function(status, headers, body)
  if status ~= 200 then bad = bad + 1 end
end
done = function(summary, latency, requests)
  io.write(string.format("RESULT requests=%d non200=%d errors=%d p50_us=%d p99_us=%d\n",
    summary.requests, summary.errors.status, summary.errors.connect + summary.errors.read +
    summary.errors.write + summary.errors.timeout, latency:percentile(50), latency:percentile(99)))
end
