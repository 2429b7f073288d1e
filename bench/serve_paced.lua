-- serve_paced.lua: wrk script of bench/serve.sh: every connection sends GET
-- $GP_PATH, waits for the answer, then pauses $GP_PAUSE_MS (default 10) before
-- the next one, so that N connections offer about N x 1000 / pause requests
-- per second: the latency at a given rate rather than at saturation.
local path = os.getenv("GP_PATH") or "/"
local pause = tonumber(os.getenv("GP_PAUSE_MS") or "10")
request = function()
  return wrk.format("GET", path)
end
delay = function()
  return pause
end
local bad = 0
response = function(status, headers, body)
  if status ~= 200 then bad = bad + 1 end
end
done = function(summary, latency, requests)
  io.write(string.format("PACED requests=%d non200=%d errors=%d\n", summary.requests,
    summary.errors.status, summary.errors.connect + summary.errors.read +
    summary.errors.write + summary.errors.timeout))
end
