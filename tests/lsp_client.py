"""A language client for the tests and the benchmark: starts ``isalint server`` as an editor does (a
child process speaking JSON-RPC over its stdin and stdout), on pygls's client, and records what the
server sends (diagnostics, log and shown messages, edits it asks the client to apply).
"""
from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Union

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

# What a full-featured editor (VS Code) tells a server it supports.
CAPABILITIES = lsp.ClientCapabilities(
    general=lsp.GeneralClientCapabilities(position_encodings=[lsp.PositionEncodingKind.Utf16]),
    text_document=lsp.TextDocumentClientCapabilities(
        synchronization=lsp.TextDocumentSyncClientCapabilities(did_save=True),
        hover=lsp.HoverClientCapabilities(content_format=[lsp.MarkupKind.Markdown, lsp.MarkupKind.PlainText]),
        publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(
            related_information=True, version_support=True, code_description_support=True, data_support=True),
        code_action=lsp.CodeActionClientCapabilities(
            code_action_literal_support=lsp.ClientCodeActionLiteralOptions(
                lsp.ClientCodeActionKindOptions(value_set=["", "quickfix", "refactor", "source"])),
            is_preferred_support=True, data_support=True,
            resolve_support=lsp.ClientCodeActionResolveOptions(properties=["edit"])),
    ),
    workspace=lsp.WorkspaceClientCapabilities(
        apply_edit=True, workspace_edit=lsp.WorkspaceEditClientCapabilities(document_changes=True)),
    window=lsp.WindowClientCapabilities(work_done_progress=True),
)


class Session:
    def __init__(self, capabilities: lsp.ClientCapabilities = CAPABILITIES, options: dict | None = None):
        self.capabilities = capabilities
        self.options = options
        self.client = LanguageClient("isalint-tests", "1")
        self.published: dict[str, list[tuple[float, lsp.PublishDiagnosticsParams]]] = {}
        self.logs: list[str] = []
        self.shown: list[str] = []
        self.applied: list[lsp.WorkspaceEdit] = []
        self.progress: list = []
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}
        self.stderr = b""
        self._arrived = asyncio.Event()
        self.result: lsp.InitializeResult | None = None
        client = self.client
        converter = client.protocol._converter

        def _action(obj, _type):
            # a code action may carry a command; only a command's "command" is a string (lsprotocol's own
            # hook takes every object with a "command" for a command)
            if isinstance(obj.get("command"), str):
                return converter.structure(obj, lsp.Command)
            return converter.structure(obj, lsp.CodeAction)

        converter.register_structure_hook(Union[lsp.Command, lsp.CodeAction], _action)  # noqa: UP007 - the key

        @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _published(ls, params: lsp.PublishDiagnosticsParams):
            self.published.setdefault(params.uri, []).append((time.perf_counter(), params))
            self._arrived.set()

        @client.feature(lsp.WINDOW_LOG_MESSAGE)
        def _log(ls, params: lsp.LogMessageParams):
            self.logs.append(params.message)
            self._arrived.set()

        @client.feature(lsp.WINDOW_SHOW_MESSAGE)
        def _show(ls, params: lsp.ShowMessageParams):
            self.shown.append(params.message)
            self._arrived.set()

        @client.feature(lsp.WORKSPACE_APPLY_EDIT)
        def _apply(ls, params: lsp.ApplyWorkspaceEditParams):
            self.applied.append(params.edit)
            self._arrived.set()
            return lsp.ApplyWorkspaceEditResult(applied=True)

        @client.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def _progress(ls, params):
            return None

        @client.feature(lsp.PROGRESS)
        def _progress_note(ls, params):
            self.progress.append(params)

    # ------------------------------------------------------------------ life cycle

    async def start(self, cwd: str | None = None, env: dict | None = None) -> lsp.InitializeResult:
        await self.client.start_io(sys.executable, "-m", "isalint", "server", cwd=cwd,
                                   env={**os.environ, **(env or {})})
        self._stderr_task = asyncio.create_task(self._drain())
        self.result = await self.client.initialize_async(lsp.InitializeParams(
            capabilities=self.capabilities, process_id=os.getpid(), root_uri=None,
            initialization_options=self.options))
        self.client.initialized(lsp.InitializedParams())
        return self.result

    async def _drain(self) -> None:
        stream = self.client._server.stderr
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                return
            self.stderr += chunk

    async def stop(self) -> int:
        """Shut down and exit as an editor does; the server's exit code."""
        await asyncio.wait_for(self.client.shutdown_async(None), 30)
        self.client.exit(None)
        code = await asyncio.wait_for(self.client._server.wait(), 30)
        await self.client.stop()
        return code

    @property
    def alive(self) -> bool:
        return self.client._server is not None and self.client._server.returncode is None

    # ------------------------------------------------------------------ documents

    def open(self, path: Path | str, text: str | None = None, language: str = "asm") -> str:
        path = Path(path)
        uri = path.resolve().as_uri()
        text = path.read_text(encoding="utf-8", errors="surrogateescape") if text is None else text
        self.texts[uri], self.versions[uri] = text, 1
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri, language, 1, text)))
        return uri

    def change(self, uri: str, edits: list[lsp.TextEdit]) -> int:
        """Send ``edits`` as incremental changes (as an editor does, one range each); the new version."""
        self.versions[uri] += 1
        changes = []
        for e in edits:
            self.texts[uri] = apply_edits(self.texts[uri], [e])
            changes.append(lsp.TextDocumentContentChangePartial(range=e.range, text=e.new_text))
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]), changes))
        return self.versions[uri]

    def replace_line(self, uri: str, line: int, new: str) -> int:
        """Replace 0-based ``line`` (without its end of line) by ``new``."""
        old = self.texts[uri].splitlines()[line]
        return self.change(uri, [lsp.TextEdit(lsp.Range(lsp.Position(line, 0), lsp.Position(line, utf16(old))), new)])

    def save(self, uri: str) -> None:
        self.client.text_document_did_save(lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(uri)))

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri)))

    async def diagnostics(self, uri: str, version: int | None = None, timeout: float = 60,
                          after: float = 0.0) -> lsp.PublishDiagnosticsParams:
        """The first diagnostics of ``uri`` published after ``after`` (perf_counter) for ``version`` (any
        when None)."""
        deadline = time.monotonic() + timeout
        while True:
            for when, params in self.published.get(uri, []):
                if when >= after and (version is None or params.version == version):
                    return params
            await self._wait(deadline, f"diagnostics of {uri} (version {version})")

    async def message(self, needle: str, timeout: float = 60, shown: bool = False) -> str:
        deadline = time.monotonic() + timeout
        while True:
            for m in self.shown if shown else self.logs:
                if needle in m:
                    return m
            await self._wait(deadline, f"a message with {needle!r}")

    async def _wait(self, deadline: float, what: str) -> None:
        self._arrived.clear()
        left = deadline - time.monotonic()
        if left <= 0 or not self.alive:
            raise AssertionError(f"no {what}; the server {'is alive' if self.alive else 'exited'}; "
                                 f"logs: {self.logs[-5:]}; stderr: {self.stderr[-2000:]!r}")
        try:
            await asyncio.wait_for(self._arrived.wait(), min(left, 1.0))
        except asyncio.TimeoutError:
            pass

    # ------------------------------------------------------------------ requests

    async def hover(self, uri: str, line: int, character: int) -> str | None:
        h = await self.client.text_document_hover_async(lsp.HoverParams(
            lsp.TextDocumentIdentifier(uri), lsp.Position(line, character)))
        return h.contents.value if h is not None else None

    async def actions(self, uri: str, line: int, end_line: int | None = None, only: list[str] | None = None,
                      diagnostics: list[lsp.Diagnostic] | None = None) -> list[lsp.CodeAction]:
        end = line if end_line is None else end_line
        got = await self.client.text_document_code_action_async(lsp.CodeActionParams(
            lsp.TextDocumentIdentifier(uri), lsp.Range(lsp.Position(line, 0), lsp.Position(end, 0)),
            lsp.CodeActionContext(diagnostics=diagnostics or [], only=only)))
        return list(got or [])

    async def resolve(self, action: lsp.CodeAction) -> lsp.CodeAction:
        return await asyncio.wait_for(self.client.code_action_resolve_async(action), 300)

    def apply(self, uri: str, edit: lsp.WorkspaceEdit) -> int:
        """Apply a workspace edit of ``uri`` as the editor would (one change per edit, last first)."""
        if edit.document_changes:
            (change,) = edit.document_changes
            assert change.text_document.version in (None, self.versions[uri]), "an edit of another version"
            edits = list(change.edits)
        else:
            edits = list(edit.changes[uri])
        edits.sort(key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)
        return self.change(uri, edits)


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _offset(text: str, pos: lsp.Position) -> int:
    import re

    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\n|\r", text)]
    if pos.line >= len(starts):
        return len(text)
    start = starts[pos.line]
    end = starts[pos.line + 1] if pos.line + 1 < len(starts) else len(text)
    line = text[start:end].rstrip("\r\n")
    units = 0
    for k, c in enumerate(line):
        if units >= pos.character:
            return start + k
        units += utf16(c)
    return start + len(line)


def apply_edits(text: str, edits: list[lsp.TextEdit]) -> str:
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        a, b = _offset(text, e.range.start), _offset(text, e.range.end)
        text = text[:a] + e.new_text + text[b:]
    return text


def run(coroutine):
    """Run one client scenario to its end."""
    return asyncio.run(coroutine)
