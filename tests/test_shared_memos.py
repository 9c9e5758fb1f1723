"""What isalint keeps from one file to the next in one process (the workers of a library's check
see thousands of kernels) never carries one file's facts into another's findings: each file checked
after all the others finds what it finds in a process that has checked nothing."""
from __future__ import annotations

from conftest import FIXTURES, fixture_kernels

from isalint.lint.files import check_text
from isalint.model import alu_delays, program, resources
from isalint.parse import source


def _forget() -> None:
    for memo in (alu_delays._FACTS, resources._NAMES, program._DECODED, source._STATEMENTS):
        memo.clear()


def _found(text: str, name: str) -> list[tuple]:
    return [(d.line, d.column, d.code, d.severity, d.message, [(s.line, s.message) for s in d.sites])
            for d in check_text(text, name).findings]


def test_each_file_finds_the_same_after_the_others():
    wave64 = (FIXTURES / "kernels" / "probes" / "features.wave64.s").read_text()
    assert "\t\t.amdhsa_wavefront_size32 0\n" in wave64
    # the same lines in wave32: VCC is one SGPR there, two in wave64 (and the carries of VOP3b)
    wave32 = wave64.replace("\t\t.amdhsa_wavefront_size32 0\n", "\t\t.amdhsa_wavefront_size32 1\n")
    files = [("wave32.s", wave32), ("wave64.s", wave64)]
    files += [(p.name, p.read_text()) for p in fixture_kernels()[:3]]
    alone = {}
    for name, text in files:
        _forget()
        alone[name] = _found(text, name)
    assert alone["wave32.s"] != alone["wave64.s"]  # the wave size changes what is found
    for order in (files, files[::-1]):
        _forget()
        for name, text in order:
            _found(text, name)
        for name, text in order:
            assert _found(text, name) == alone[name], name


def _program(text: str, name: str):
    from isalint.analysis import Analysis
    from isalint.parse.source import parse_text

    return Analysis.from_source(parse_text(text, name)).program


def test_an_instructions_facts_follow_its_decoding_not_its_text():
    """The same lines decode differently in wave32 and wave64 (``s[2:3]`` is a carry in wave64, an
    operand error in wave32): the ALU facts and the registers named that one kernel leaves behind
    are not another's."""
    wave64 = (FIXTURES / "kernels" / "probes" / "features.wave64.s").read_text()
    wave32 = wave64.replace("\t\t.amdhsa_wavefront_size32 0\n", "\t\t.amdhsa_wavefront_size32 1\n")

    def facts(text, name):
        prog = _program(text, name)
        return (alu_delays._facts(prog.instrs, alu_delays._default)[0],
                [vars(resources.kernel_resources(prog, k)) | {"kernel": None} for k in prog.kernels])

    _forget()
    alone64 = facts(wave64, "wave64.s")
    _forget()
    alone32 = facts(wave32, "wave32.s")
    assert alone32[0] != alone64[0]
    after32 = facts(wave64, "wave64.s")
    _forget()
    facts(wave64, "wave64.s")
    after64 = facts(wave32, "wave32.s")

    def plain(f):  # the instructions a resource points at, by line
        return f[0], [{k: (v.lineno if hasattr(v, "lineno") else v) for k, v in r.items() if k != "lane_masks"}
                      for r in f[1]]

    assert plain(after32) == plain(alone64)
    assert plain(after64) == plain(alone32)
