"""Baselines for `npm run bench -- trace`: JSONL programs on stdin, `repeat` times.

    trace_inprocess.py REPEAT raw    tracer.trace_program in this one process (no sandbox, no
                                     fork, no output): the raw settrace cost
    trace_inprocess.py REPEAT fork   a naive fork-per-program harness: fork, trace, json.dumps
                                     to a pipe, _exit; no limits, no guards (what the sandbox
                                     costs on top of a plain fork)

Prints one JSON object: programs, seconds (wall), cpu_seconds (including children), events."""

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "trace"))
import tracer  # noqa: E402


def run_raw(code, call):
    return len(tracer.trace_program(code, call)["events"])


def run_fork(code, call):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        data = (json.dumps(tracer.trace_program(code, call)) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(w, view):]
        os._exit(0)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 1 << 20)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    os.waitpid(pid, 0)
    return len(json.loads(b"".join(chunks))["events"])


def main():
    repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    mode = sys.argv[2] if len(sys.argv) > 2 else "raw"
    progs = [json.loads(l) for l in sys.stdin if l.strip()]
    calls = [(p["code"], "%s(%s)" % (p.get("entry", "f"), p["input"])) for p in progs]
    for code, call in calls[:20]:  # warm-up
        tracer.trace_program(code, call)
    events = 0
    run = run_raw if mode == "raw" else run_fork
    t0 = time.perf_counter()
    c0 = os.times()
    for _ in range(repeat):
        for code, call in calls:
            events += run(code, call)
    wall = time.perf_counter() - t0
    c1 = os.times()
    cpu = sum(c1[:4]) - sum(c0[:4])
    print(json.dumps({"programs": len(calls) * repeat, "seconds": wall, "cpu_seconds": cpu, "events": events}))


if __name__ == "__main__":
    main()
