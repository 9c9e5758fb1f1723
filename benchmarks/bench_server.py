"""Benchmark: how long after an edit ``isalint server`` publishes the new diagnostics of a kernel.

    python benchmarks/bench_server.py [FILE.s] [--lines N] [--edits N] [--debounce MS] [--breakdown]

A client of a few lines (:class:`RawClient`) starts the server as an editor does, over stdio, opens
the kernel (default: the 2,500-line input of bench_check.py, kernel5.s with its instructions
repeated), then makes ``--edits`` one-line edits one after the other, as a person does: each renames
a VGPR in one instruction (a different line each time, spread over the file) and the client waits for
the diagnostics of that version. Reported: the time from sending the change to receiving the
diagnostics (the debounce pause included: ``--debounce``, default the server's), median, 90th
percentile and worst, with the server process's CPU time per edit beside it; and the first check on
open. The target: 300 ms after an edit for a 2,500-line kernel.

``--breakdown`` also times, in this process, one re-check after such an edit with and without the
reuse of the last parse (CPU ms per stage: parse, model, rules), to show what reuse saves.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import tempfile
import time
from asyncio.subprocess import PIPE
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

_VGPR = re.compile(r"\bv(\d+)\b")


def _cpu(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` so far."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def edit_lines(text: str, count: int) -> list[tuple[int, str]]:
    """(0-based line, its new text) of ``count`` edits spread over the file: a VGPR renamed in an
    instruction line (its number plus 4: same bank, another register)."""
    lines = text.splitlines()
    candidates = [n for n, line in enumerate(lines) if line.strip().startswith("v_") and _VGPR.search(line)]
    step = max(1, len(candidates) // count)
    out = []
    for n in candidates[::step][:count]:
        m = _VGPR.search(lines[n])
        out.append((n, lines[n][:m.start()] + f"v{(int(m.group(1)) + 4) % 256}" + lines[n][m.end():]))
    return out


class RawClient:
    """The least an editor does: JSON-RPC over the server's stdin and stdout, each message read whole
    and decoded with ``json`` (no protocol library in the way of the timing)."""

    def __init__(self, proc):
        self.proc = proc
        self.next_id = 0
        self.pending: dict[int, asyncio.Future] = {}
        self.published: list[tuple[float, dict]] = []
        self.arrived = asyncio.Event()
        self.reader = asyncio.create_task(self._read())

    def send(self, method: str, params, request: bool = False):
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        future = None
        if request:
            self.next_id += 1
            message["id"] = self.next_id
            future = self.pending[self.next_id] = asyncio.get_running_loop().create_future()
        body = json.dumps(message).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return future

    async def _read(self) -> None:
        out = self.proc.stdout
        while True:
            header = await out.readuntil(b"\r\n\r\n")
            length = int(re.search(rb"Content-Length: (\d+)", header).group(1))
            message = json.loads(await out.readexactly(length))
            now = time.perf_counter()
            if "id" in message and "method" not in message:
                self.pending.pop(message["id"]).set_result(message.get("result"))
            elif message.get("method") == "textDocument/publishDiagnostics":
                self.published.append((now, message["params"]))
                self.arrived.set()
            elif "id" in message:  # a request of the server's (progress, configuration): answered empty
                body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": None}).encode()
                self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def diagnostics(self, uri: str, version: int, timeout: float = 120) -> float:
        """When the diagnostics of ``version`` arrived (perf_counter)."""
        deadline = time.monotonic() + timeout
        while True:
            for when, params in self.published:
                if params["uri"] == uri and params.get("version") == version:
                    return when
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), max(0.01, deadline - time.monotonic()))


async def measure(path: Path, edits: int, debounce: float | None) -> dict:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "isalint", "server", stdin=PIPE, stdout=PIPE,
                                                limit=1 << 26)
    client = RawClient(proc)
    await client.send("initialize", {"processId": None, "rootUri": None, "capabilities": {},
                                     "initializationOptions": {"debounceMs": debounce} if debounce is not None else {}},
                      request=True)
    client.send("initialized", {})
    text = path.read_text()
    uri = path.resolve().as_uri()
    t = time.perf_counter()
    client.send("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "asm", "version": 1, "text": text}})
    opened = await client.diagnostics(uri, 1) - t
    latencies, cpu = [], []
    lines = text.splitlines()
    for version, (line, new) in enumerate(edit_lines(text, edits), start=2):
        c = _cpu(proc.pid)
        t = time.perf_counter()
        client.send("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": {"line": line, "character": 0},
                                          "end": {"line": line, "character": len(lines[line])}}, "text": new}]})
        lines[line] = new
        latencies.append(await client.diagnostics(uri, version) - t)
        cpu.append(_cpu(proc.pid) - c)
    await client.send("shutdown", None, request=True)
    client.send("exit", None)
    code = await asyncio.wait_for(proc.wait(), 30)
    client.reader.cancel()
    return {"open": opened, "latencies": latencies, "cpu": cpu, "exit": code}


def breakdown(path: Path) -> list[tuple[str, float, float]]:
    """(stage, CPU ms without reuse, CPU ms with reuse) of one re-check after one edit (median of 5)."""
    from isalint import rules as registry
    from isalint.analysis import Analysis
    from isalint.lint.engine import check_analysis
    from isalint.parse.source import parse_text

    text = path.read_text()
    codes = registry.available()
    lines = text.splitlines(keepends=True)
    reuse: dict = {}
    parse_text(text, str(path), reuse=reuse)
    Analysis.from_source(parse_text(text, str(path), reuse=reuse))
    stages: dict[str, list[list[float]]] = {"parse": [[], []], "model": [[], []], "rules": [[], []]}
    for line, new in edit_lines(text, 5):
        edited = "".join(lines[:line] + [new + "\n"] + lines[line + 1:])
        for mode, memo in ((0, None), (1, reuse)):
            t = time.process_time()
            source = parse_text(edited, str(path), reuse=memo)
            t1 = time.process_time()
            analysis = Analysis.from_source(source)
            t2 = time.process_time()
            check_analysis(analysis, codes)
            t3 = time.process_time()
            for name, ms in (("parse", t1 - t), ("model", t2 - t1), ("rules", t3 - t2)):
                stages[name][mode].append(ms * 1000)
    return [(name, statistics.median(a), statistics.median(b)) for name, (a, b) in stages.items()]


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?")
    ap.add_argument("--lines", type=int, default=2500, help="size of the generated input (without FILE)")
    ap.add_argument("--edits", type=int, default=30)
    ap.add_argument("--debounce", type=float, help="the server's pause after a change, in ms (default: its own)")
    ap.add_argument("--breakdown", action="store_true")
    args = ap.parse_args()
    from bench_check import default_input

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(args.file) if args.file else default_input(Path(tmp), args.lines)
        n_lines = len(src.read_text().splitlines())
        result = asyncio.run(measure(src, args.edits, args.debounce))
        stages = breakdown(src) if args.breakdown else []
    ms = [x * 1000 for x in result["latencies"]]
    cpu = [x * 1000 for x in result["cpu"]]
    print(f"input: {src.name}, {n_lines} lines; {len(ms)} edits, one at a time")
    print(f"first check on open: {result['open'] * 1000:.0f} ms")
    print(f"edit -> diagnostics: median {statistics.median(ms):.0f} ms, p90 {_pct(ms, 0.9):.0f} ms, "
          f"worst {max(ms):.0f} ms (target 300 ms)")
    print(f"server CPU per edit: median {statistics.median(cpu):.0f} ms, worst {max(cpu):.0f} ms")
    print(f"server exit code after shutdown: {result['exit']}")
    if stages:
        print("one re-check in-process (CPU ms, median of 5 edits): without reuse / reusing the last parse")
        for name, a, b in stages:
            print(f"  {name:6s} {a:7.1f} {b:7.1f}")
        print(f"  {'total':6s} {sum(a for _, a, _ in stages):7.1f} {sum(b for _, _, b in stages):7.1f}")


if __name__ == "__main__":
    main()
