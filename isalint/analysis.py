"""One file's analysis: parse -> model, with the derived facts rules share
(CFG, loops, dependency graphs) computed once, on first use."""
from __future__ import annotations

from functools import cached_property

from .model.program import DEFAULT_TARGET, Program, build_program
from .parse.source import InputError, SourceFile, read_file
from .hw.vopd import check_pair, half


class OtherProcessor(InputError):
    """Assembly for another processor (the host's x86-64 ``.s`` beside the device's): ``check``
    skips it, other commands report it."""


class Analysis:
    def __init__(self, program: Program, config: dict | None = None):
        self.program = program
        self.config = config or {}
        self._halves: dict[int, object] = {}  # 2 * instruction index + statement -> its VOPD half
        self._violations: dict[int, tuple] = {}  # instruction index -> the violations of its VOPD pair

    @classmethod
    def from_path(cls, path: str, config: dict | None = None) -> Analysis:
        source = read_file(path)
        return cls.from_source(source, config)

    @classmethod
    def from_source(cls, source: SourceFile, config: dict | None = None) -> Analysis:
        config = config or {}
        program = build_program(source, config.get("target", DEFAULT_TARGET))
        if not any(info is not None for ins in program.instrs for info in ins.infos):
            if source.encoding_errors:
                bad = next(line.number for line in source.lines if line.error)
                raise InputError(source.path, bad, "not UTF-8 text and no RDNA3 instruction found")
            first = next((line.number for line in source.lines if line.kind in ("instruction", "unknown")), None)
            from .parse.foreign import other_processor

            what = other_processor(source)
            if what is not None:
                raise OtherProcessor(source.path, first or 1, f"{what}, not AMDGPU code")
            if first is not None:
                raise InputError(source.path, first, "no RDNA3 instruction found: not a gfx11 assembly file")
            # No instruction line at all: an empty file, or only directives, labels and comments (LLVM
            # emits a kernel with an empty body for code it proved unreachable). No code, no finding.
        return cls(program, config)

    @cached_property
    def cfg(self):
        return self.program.cfg()

    @cached_property
    def hot_loop(self):
        return self.cfg.hottest_loop()

    def loop_indices(self, loop) -> list[int]:
        return loop.indices(self.cfg)

    def depgraph(self, indices: list[int] | None = None, loop: bool = False):
        from .model.depgraph import build_depgraph

        if indices is None:
            indices = list(range(len(self.program.instrs)))
        key = (tuple(indices), loop)
        cache = self.__dict__.setdefault("_dep_cache", {})
        if key not in cache:
            cache[key] = build_depgraph(self.program, indices, loop)
        return cache[key]

    def in_loop(self, index: int) -> bool:
        return self.cfg.loop_of(index) is not None

    def vopd_half(self, index: int, stmt: int = 0):
        """:func:`isalint.hw.vopd.half` of statement ``stmt`` of instruction ``index``, built once for all rules."""
        if stmt != 0 and stmt != 1:  # an instruction has at most two statements: this raises IndexError
            return half(self.program.instrs[index].stmts[stmt])
        h = self._halves.get(2 * index + stmt)
        if h is None:
            statement = self.program.instrs[index].stmts[stmt]
            got = _HALVES.get(id(statement))
            if got is not None and got[0] is statement:
                h = got[1]
            else:
                h = half(statement)
                if len(_HALVES) >= _SHARED_MAX:
                    _HALVES.clear()
                _HALVES[id(statement)] = (statement, h)
            self._halves[2 * index + stmt] = h
        return h

    def vopd_violations(self, index: int) -> tuple:
        """:func:`isalint.hw.vopd.check_pair` of the VOPD instruction ``index`` (its two halves), worked
        out once for all rules."""
        found = self._violations.get(index)
        if found is None:
            stmts = self.program.instrs[index].stmts
            got = _VIOLATIONS.get(id(stmts))
            if got is not None and got[0] is stmts:
                found = got[1]
            else:
                found = tuple(check_pair(self.vopd_half(index, 0), self.vopd_half(index, 1)))
                if len(_VIOLATIONS) >= _SHARED_MAX:
                    _VIOLATIONS.clear()
                _VIOLATIONS[id(stmts)] = (stmts, found)
            self._violations[index] = found
        return found


# A VOPD half and a pair's violations depend on the statements alone, which are never changed once
# parsed: statements a parse reused from an earlier one (parse_text's ``reuse``) are judged once.
# Keyed by the statements' identity, which the entry keeps alive.
_HALVES: dict[int, tuple] = {}
_VIOLATIONS: dict[int, tuple] = {}
_SHARED_MAX = 1 << 15
