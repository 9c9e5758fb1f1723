"""``isalint server`` driven as an editor drives it: a child process speaking JSON-RPC over stdio
(tests/lsp_client.py, on pygls's client). Diagnostics are those ``isalint check`` gives; hovers,
suppressions and validated fixes work on the project's fixture kernels (and on kernel5.s when the
shared corpus is present); no input stops the server."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls", reason="isalint server needs the server extra (pip install 'isalint[server]')")

from conftest import KERNELS  # noqa: E402
from lsp_client import Session, run  # noqa: E402
from lsprotocol import types as lsp  # noqa: E402

KERNEL6 = KERNELS / "kernel6_style" / "kernel6_style.s"
SEVERITY = {"error": 1, "warning": 2, "info": 3}


def _check_json(path: Path) -> list[dict]:
    out = subprocess.run([sys.executable, "-m", "isalint", "check", "--no-cache", "--format", "json", str(path)],
                         capture_output=True, text=True)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def _main(diagnostics) -> list[lsp.Diagnostic]:
    """The findings among published diagnostics (not their sites, which are hints)."""
    return [d for d in diagnostics if d.code and d.severity != lsp.DiagnosticSeverity.Hint]


def _assert_same_as_check(published, path: Path) -> None:
    expected = _check_json(path)
    got = _main(published.diagnostics)
    assert [(d.code, d.range.start.line + 1, d.range.start.character + 1, d.severity, d.message.split("\n")[0])
            for d in got] == \
           [(f["code"], f["line"], f["column"], SEVERITY[f["severity"]], f["message"]) for f in expected]
    for d, f in zip(got, expected):
        assert [(r.location.range.start.line + 1, r.message) for r in d.related_information or []] == \
               [(s["line"], s["message"]) for s in f["sites"]]
    hints = [d for d in published.diagnostics if d.severity == lsp.DiagnosticSeverity.Hint]
    assert len(hints) == sum(len(f["sites"]) for f in expected)


def _line_of(text: str, start: str) -> int:
    return next(n for n, line in enumerate(text.splitlines()) if line.strip().startswith(start))


def _env(tmp_path: Path) -> dict:
    return {"XDG_CACHE_HOME": str(tmp_path / "cache")}


def test_diagnostics_hovers_suppressions_and_edits(tmp_path):
    async def scenario():
        s = Session()
        result = await s.start(env=_env(tmp_path))
        caps = result.capabilities
        assert caps.hover_provider and caps.code_action_provider.resolve_provider
        assert caps.text_document_sync.change == lsp.TextDocumentSyncKind.Incremental
        uri = s.open(KERNEL6)
        first = await s.diagnostics(uri, 1)
        _assert_same_as_check(first, KERNEL6)
        # each rule code links to its documentation (isalint explain's text)
        for d in _main(first.diagnostics):
            href = d.code_description.href
            assert href.startswith("file://")
            assert Path(href[len("file://"):]).read_text().startswith(f"{d.code} (")
        text = s.texts[uri]

        # hover: a VOPD FMA in the loop, an LDS load, a register
        n = _line_of(text, "v_dual_fmac_f32")
        h = await s.hover(uri, n, text.splitlines()[n].index("v_dual") + 3)
        assert "VOPD" in h and "src0" in h and "bank" in h and "Operand cache" in h
        assert "In loop `.LBB0_1`" in h and "64 iterations" in h and "runs 64 times per wave" in h
        assert "Latency: result readable 5 cycles" in h
        n = _line_of(text, "ds_load_b64")
        line = text.splitlines()[n]
        h = await s.hover(uri, n, line.index("ds_load") + 1)
        assert "**ds_load_b64**: LDS" in h and "64-bit banks" in h and "lgkmcnt" in h
        h = await s.hover(uri, n, line.rindex("v1") + 1)  # the address register
        assert "VGPR bank" in h and "Last written by" in h and "Live range in block `.LBB0_1`" in h
        assert await s.hover(uri, 0, 0) is None  # a comment without a rule code

        # suppress the DELAY001 finding on its line; the edit goes back as the editor would send it
        delay = next(d for d in first.diagnostics if d.code == "DELAY001")
        actions = await s.actions(uri, delay.range.start.line, diagnostics=[delay])
        suppress = next(a for a in actions if a.title.startswith("Suppress DELAY001 on this line"))
        assert suppress.diagnostics and suppress.diagnostics[0].code == "DELAY001"
        version = s.apply(uri, suppress.edit)
        after = await s.diagnostics(uri, version)
        assert "DELAY001" not in {d.code for d in after.diagnostics}
        assert {d.code for d in _main(after.diagnostics)} == {d.code for d in _main(first.diagnostics)} - {"DELAY001"}
        # hover on the code in the new comment: the rule's summary
        n = delay.range.start.line
        h = await s.hover(uri, n, s.texts[uri].splitlines()[n].index("DELAY001") + 2)
        assert "**DELAY001** `missing-delay-alu`" in h and "s_delay_alu" in h

        # edit the line back: the finding returns, for the new version
        version = s.replace_line(uri, n, text.splitlines()[n])
        back = await s.diagnostics(uri, version)
        assert [d.code for d in _main(back.diagnostics)] == [d.code for d in _main(first.diagnostics)]
        # changes in quick succession are checked once, at the last version: nothing older is published
        published = len(s.published[uri])
        for k in range(5):
            last = s.replace_line(uri, n, text.splitlines()[n] + " ; typing" + "." * k)
        latest = await s.diagnostics(uri, last)
        assert [p.version for _, p in s.published[uri][published:]] == [last]
        assert [d.code for d in _main(latest.diagnostics)] == [d.code for d in _main(first.diagnostics)]
        # a change the server has not checked yet is never answered from an older check
        s.replace_line(uri, n, text.splitlines()[n] + " ")
        assert await s.hover(uri, _line_of(text, "ds_load_b64"), 2) is None
        assert await s.stop() == 0
        assert not s.shown, s.shown

    run(scenario())


def test_quick_fixes_and_passes_are_validated_before_the_edit(tmp_path):
    from isalint.fixes.toolkit.pipeline import validator_missing

    if validator_missing():
        pytest.skip(validator_missing())

    async def scenario():
        s = Session()
        await s.start(env=_env(tmp_path))
        uri = s.open(KERNEL6)
        first = await s.diagnostics(uri, 1)
        meta = [d for d in first.diagnostics if d.code == "META001"]
        assert len(meta) == 2
        # META001 at the descriptor: the --metadata change of that line alone
        actions = await s.actions(uri, meta[0].range.start.line)
        fix = next(a for a in actions if a.title.startswith("Fix META001"))
        assert fix.edit is None and fix.is_preferred  # worked out when chosen
        fix = await s.resolve(fix)
        (change,) = fix.edit.document_changes
        assert [(e.range.start.line, e.range.end.line) for e in change.edits] == \
               [(meta[0].range.start.line, meta[0].range.start.line + 1)]
        assert change.edits[0].new_text.split() == [".amdhsa_next_free_sgpr", "3"]
        assert "validated: the machine code is unchanged" in s.logs[-1]
        version = s.apply(uri, fix.edit)
        after = await s.diagnostics(uri, version)
        assert [d.range.start.line for d in after.diagnostics if d.code == "META001"] == [meta[1].range.start.line]

        # DELAY001: the hint the instruction lacks, written before it
        delay = next(d for d in after.diagnostics if d.code == "DELAY001")
        actions = await s.actions(uri, delay.range.start.line)
        fix = await s.resolve(next(a for a in actions if a.title.startswith("Fix DELAY001")))
        (change,) = fix.edit.document_changes
        assert [e.new_text.strip() for e in change.edits] == ["s_delay_alu instid0(SALU_CYCLE_1)"]
        assert "without its s_delay_alu hints is the input's machine code" in s.logs[-1]
        version = s.apply(uri, fix.edit)
        after = await s.diagnostics(uri, version)
        assert "DELAY001" not in {d.code for d in after.diagnostics}

        # a pass that cannot be validated on this kernel (no GEMM arguments to emulate it with) is not
        # offered as an edit: the user is told why
        actions = await s.actions(uri, 0, only=["source"])
        names = [a.kind for a in actions]
        from isalint.fixes import PASSES

        assert names == [f"source.isalint.{p.name}" for p in PASSES]
        assert names[:3] == ["source.isalint.dual-fmac", "source.isalint.unroll", "source.isalint.batch-gmem"]
        dual = await s.resolve(actions[0])
        assert dual.edit is None
        assert "fix --dual-fmac" in s.shown[-1] and "GEMM ABI" in s.shown[-1]
        refused = await s.resolve(actions[2])
        assert refused.edit is None and "fix --batch-gmem refused" in s.shown[-1]
        assert await s.stop() == 0

    run(scenario())


@pytest.mark.parametrize("literals", [True, False], ids=["actions", "commands-only"])
def test_a_client_that_cannot_resolve_gets_the_fix_through_a_command(tmp_path, literals):
    from isalint.fixes.toolkit.pipeline import validator_missing

    if validator_missing():
        pytest.skip(validator_missing())

    async def scenario():
        # no resolveSupport, no versioned document changes; with literals=False not even code action
        # literals: the protocol's first versions, where an action is a command
        caps = lsp.ClientCapabilities(workspace=lsp.WorkspaceClientCapabilities(apply_edit=True))
        if literals:
            caps.text_document = lsp.TextDocumentClientCapabilities(code_action=lsp.CodeActionClientCapabilities(
                code_action_literal_support=lsp.ClientCodeActionLiteralOptions(
                    lsp.ClientCodeActionKindOptions(value_set=["quickfix", "source"]))))
        s = Session(capabilities=caps)
        await s.start(env=_env(tmp_path))
        uri = s.open(KERNEL6)
        first = await s.diagnostics(uri, 1)
        meta = next(d for d in first.diagnostics if d.code == "META001")
        offered = await s.actions(uri, meta.range.start.line)
        fix = next(a for a in offered if a.title.startswith("Fix META001"))
        command = fix.command if literals else fix
        assert isinstance(command, lsp.Command) and command.command == "isalint.applyFix"
        await s.client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            command=command.command, arguments=command.arguments))
        (edit,) = s.applied
        assert edit.changes is not None  # this client takes no versioned document changes
        version = s.apply(uri, edit)
        after = await s.diagnostics(uri, version)
        assert len([d for d in after.diagnostics if d.code == "META001"]) == 1
        if not literals:  # a suppression, as a command too
            delay = next(d for d in after.diagnostics if d.code == "DELAY001")
            offered = await s.actions(uri, delay.range.start.line)
            suppress = next(a for a in offered if a.title.startswith("Suppress DELAY001 on this line"))
            await s.client.workspace_execute_command_async(lsp.ExecuteCommandParams(
                command=suppress.command, arguments=suppress.arguments))
            version = s.apply(uri, s.applied[-1])
            after = await s.diagnostics(uri, version)
            assert "DELAY001" not in {d.code for d in after.diagnostics}
        assert await s.stop() == 0

    run(scenario())


def test_configuration_and_suppressions_of_the_file_apply(tmp_path):
    folder = tmp_path / "project"
    folder.mkdir()
    kernel = folder / "k.s"
    shutil.copy(KERNEL6, kernel)
    (folder / "pyproject.toml").write_text('[tool.isalint]\nignore = ["OCC001"]\n'
                                           '[tool.isalint.severity]\nMETA001 = "warning"\n')

    async def scenario():
        s = Session()
        await s.start(env=_env(tmp_path))
        uri = s.open(kernel)
        got = await s.diagnostics(uri, 1)
        _assert_same_as_check(got, kernel)
        codes = {d.code: d.severity for d in _main(got.diagnostics)}
        assert "OCC001" not in codes and codes["META001"] == lsp.DiagnosticSeverity.Warning
        # a configuration isalint cannot follow is said on the file, and corrected on save
        (folder / "pyproject.toml").write_text('[tool.isalint]\nignore = ["NOPE001"]\n')
        config_uri = (folder / "pyproject.toml").as_uri()
        s.client.text_document_did_save(lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(config_uri)))
        version = s.replace_line(uri, 0, "; edited")
        bad = await s.diagnostics(uri, version)
        assert len(bad.diagnostics) == 1 and "configuration error" in bad.diagnostics[0].message
        assert "NOPE001" in bad.diagnostics[0].message
        (folder / "pyproject.toml").write_text('[tool.isalint]\nper-file-ignores = { "k.s" = ["META"] }\n')
        t = len(s.published[uri])
        s.client.text_document_did_save(lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(config_uri)))
        while len(s.published[uri]) == t:
            await s.diagnostics(uri, version, after=s.published[uri][-1][0] + 1e-9, timeout=60)
        fixed = s.published[uri][-1][1]
        assert {d.code for d in _main(fixed.diagnostics)} == {"DELAY001", "OCC001"}
        # a suppression comment that cannot suppress anything is a warning on its line
        version = s.replace_line(uri, 0, "; isalint: disable=NOSUCH999")
        warned = await s.diagnostics(uri, version)
        assert any(d.range.start.line == 0 and "NOSUCH999" in d.message for d in warned.diagnostics)
        assert await s.stop() == 0

    run(scenario())


def test_bad_input_never_stops_the_server(tmp_path):
    binary = tmp_path / "blob.s"
    x86 = tmp_path / "host.s"
    huge = tmp_path / "huge.s"
    junk = tmp_path / "junk.asm"
    x86_text = "\t.text\n\t.globl\tmain\n\t.type\tmain,@function\nmain:\n\tpushq\t%rbp\n\tmovq\t%rsp, %rbp\n\tretq\n"
    huge_text = "; a comment line\n" * 200_000

    async def scenario():
        s = Session(options={"liveLines": 1000})
        await s.start(env=_env(tmp_path))
        uri = s.open(binary, text="\x7fELF\x00\x01\x02" * 100)
        d = await s.diagnostics(uri, 1)
        assert len(d.diagnostics) == 1 and "binary data" in d.diagnostics[0].message
        uri = s.open(x86, text=x86_text)
        d = await s.diagnostics(uri, 1)
        assert not d.diagnostics
        assert "x86-64" in await s.message("host.s: not checked")
        uri = s.open(tmp_path / "cdna.s", text='\t.amdgcn_target "amdgcn-amd-amdhsa--gfx90a"\n\tv_mov_b32 v0, v1\n')
        d = await s.diagnostics(uri, 1)
        assert len(d.diagnostics) == 1 and "gfx90a is not RDNA3" in d.diagnostics[0].message
        uri = s.open(junk, text="hello world\n\x00\x00 not assembly \udcff\n" * 50)
        d = await s.diagnostics(uri, 1)
        assert d.diagnostics and all(x.severity == lsp.DiagnosticSeverity.Warning for x in d.diagnostics)
        uri = s.open(huge, text=huge_text)
        d = await s.diagnostics(uri, 1, timeout=300)
        assert not d.diagnostics  # comments only: no code, no finding (and no cut worth a LIMIT001)
        s.replace_line(uri, 5, "v_mov_b32 v0, v1")  # past liveLines: checked on save only
        await s.message("huge.s: 200000 lines: checked on open and save only")
        # requests about places that do not exist, and a command with nonsense
        assert await s.hover(uri, 10**6, 10**6) is None
        assert await s.actions(uri, 10**6) in ([], None)
        await s.client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            command="isalint.applyFix", arguments=["nonsense"]))
        # the server still checks a kernel
        good = s.open(KERNEL6)
        got = await s.diagnostics(good, 1)
        _assert_same_as_check(got, KERNEL6)
        assert await s.stop() == 0

    run(scenario())


def test_kernel5(kernel5, tmp_path):
    from isalint.fixes.toolkit.pipeline import validator_missing

    async def scenario():
        s = Session()
        await s.start(env=_env(tmp_path))
        uri = s.open(kernel5)
        first = await s.diagnostics(uri, 1)
        _assert_same_as_check(first, kernel5)
        text = s.texts[uri]
        n = _line_of(text, "v_dual_fmac_f32")
        h = await s.hover(uri, n, 2)
        assert "In loop `.LBB0_9`" in h and "8 iterations" in h and "Dual issue" in h
        n = _line_of(text, "ds_load_b128")
        h = await s.hover(uri, n, 2)
        assert "**ds_load_b128**: LDS" in h and "128-bit" in h
        if validator_missing():
            return await s.stop()
        # the worklog's kernel 5 -> kernel 6 rewrite, validated in the emulator before it is offered
        dual = next(d for d in _main(first.diagnostics) if d.code == "DUAL002" and "--dual-fmac" in d.message)
        actions = await s.actions(uri, dual.range.start.line)
        rewrite = await s.resolve(next(a for a in actions if "fix --dual-fmac" in a.title))
        assert rewrite.edit is not None, s.shown
        assert "bit-identical" in s.logs[-1]
        version = s.apply(uri, rewrite.edit)
        after = await s.diagnostics(uri, version)
        assert not [d for d in _main(after.diagnostics) if d.code == "DUAL002" and "--dual-fmac" in d.message]
        return await s.stop()

    assert run(scenario()) == 0
