"""The dependency graph over instructions.

Edges are RAW / WAR / WAW, labelled with the registers that cause them, and
``WAITS_FOR`` from an ``s_waitcnt`` to each memory operation whose completion
it guarantees. Over a loop, edges from one iteration into the next are marked
``carried``. The graph is held in plain lists (analysis rules walk it on every
``check``) and converted to networkx on demand (``to_networkx``).
"""
from __future__ import annotations

from dataclasses import dataclass

from .waitcnt import wait_thresholds


@dataclass(slots=True)
class DepEdge:
    src: int
    dst: int
    kind: str  # RAW | WAR | WAW | WAITS_FOR
    regs: tuple[str, ...] = ()
    carried: bool = False


@dataclass
class DepGraph:
    nodes: list[int]
    edges: list[DepEdge]

    def preds(self, index: int, kinds=("RAW", "WAR", "WAW")) -> list[DepEdge]:
        return [e for e in self.edges if e.dst == index and e.kind in kinds]

    def to_networkx(self, program):
        import networkx as nx

        g = nx.MultiDiGraph()
        for i in self.nodes:
            ins = program.instrs[i]
            g.add_node(i, line=ins.lineno, text=ins.text(), opcode=ins.mnemonic, klass=ins.klass,
                       defs=list(ins.defs), uses=list(ins.uses))
        for e in self.edges:
            g.add_edge(e.src, e.dst, kind=e.kind, regs=list(e.regs), carried=e.carried)
        return g


def build_depgraph(program, indices: list[int], loop: bool = False) -> DepGraph:
    """Dependencies among ``indices`` in that order; with ``loop``, also the
    edges carried from one iteration into the next."""
    instrs = program.instrs
    merged: dict[tuple[int, int, str, bool], list[str]] = {}

    def add(src: int, dst: int, kind: str, reg: str, carried: bool) -> None:
        if src == dst and not carried:
            return
        merged.setdefault((src, dst, kind, carried), []).append(reg)

    last_def: dict[str, tuple[int, int]] = {}
    readers: dict[str, list[tuple[int, int]]] = {}
    sequence = list(enumerate(indices))
    rounds = 2 if loop else 1
    n = len(indices)
    for rnd in range(rounds):
        for pos, i in sequence:
            p = rnd * n + pos
            ins = instrs[i]
            for reg in ins.uses:
                d = last_def.get(reg)
                if d is not None and (rnd == 0 or d[0] < n):
                    add(d[1], i, "RAW", reg, carried=rnd == 1)
                readers.setdefault(reg, []).append((p, i))
            for reg in ins.defs:
                for rp, r in readers.get(reg, ()):
                    if rp != p and (rnd == 0 or rp < n):
                        add(r, i, "WAR", reg, carried=rnd == 1)
                d = last_def.get(reg)
                if d is not None and (rnd == 0 or d[0] < n):
                    add(d[1], i, "WAW", reg, carried=rnd == 1)
                last_def[reg] = (p, i)
                readers[reg] = []
    edges = [DepEdge(s, d, k, tuple(dict.fromkeys(regs)), c) for (s, d, k, c), regs in merged.items()]
    edges.extend(_wait_edges(program, indices, loop))
    return DepGraph(list(indices), edges)


def _wait_edges(program, indices: list[int], loop: bool) -> list[DepEdge]:
    """Which memory operations each s_waitcnt is guaranteed to have seen complete,
    counting only operations issued in program order along ``indices``."""
    instrs = program.instrs
    outstanding: dict[str, list[tuple[int, bool]]] = {}
    out: list[DepEdge] = []
    seen: set[tuple[int, int]] = set()
    rounds = 2 if loop else 1
    for rnd in range(rounds):
        for i in indices:
            ins = instrs[i]
            thresholds = wait_thresholds(ins) if ins.klass == "waitcnt" else None
            if thresholds:
                for counter, t in thresholds.items():
                    queue = outstanding.get(counter, [])
                    in_order = not any(is_smem for _, is_smem in queue) or counter != "lgkmcnt"
                    done = queue[: max(0, len(queue) - t)] if in_order else (queue if t == 0 else [])
                    for op, _ in done:
                        if (i, op) not in seen:
                            seen.add((i, op))
                            out.append(DepEdge(i, op, "WAITS_FOR", (counter,), carried=rnd == 1 and op >= i))
                    outstanding[counter] = queue[len(done):] if in_order else ([] if t == 0 else queue)
            for counter in ins.counters:
                outstanding.setdefault(counter, []).append((i, ins.klass == "smem"))
    return out
