"""``isalint server``: the language server, over stdio (pygls).

Documents are checked in one worker thread, so that the server answers hovers and requests while a
check runs. A change is checked after a short pause (``debounceMs``, default :data:`DEBOUNCE_MS`);
an open or a save at once. Only the latest text of a document is ever checked: a check that
finishes after the document changed is not published, and the newest text is checked next. Fixes
are worked out and validated in a thread of their own.

The cyclic garbage collector is not left to run by itself: a kernel's model is a few hundred
thousand objects, which it would scan again and again during every check (``isalint check`` turns
it off too). The server collects in the check thread, between checks, once it is idle for
:data:`IDLE_COLLECT_S` seconds or after :data:`COLLECT_EVERY` checks.

``initializationOptions`` (all optional): ``debounceMs``; ``liveLines`` (documents longer than this
are checked on open and save only, not after every change; default :data:`LIVE_LINES`);
``ruleDocs`` (a URL template such as ``https://example.org/rules/{code}`` for the links of rule codes;
by default each rule's documentation is written once to the user's cache directory and linked there).
"""
from __future__ import annotations

import asyncio
import gc
import logging
import os
from concurrent.futures import ThreadPoolExecutor

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from .. import __version__
from ..lint.paths import ASM_SUFFIXES
from . import actions as fixes
from .docs import RuleDocs
from .engine import Checker
from .hover import hover as hover_text
from .positions import Positions
from .published import diagnostics as to_diagnostics

DEBOUNCE_MS = 50
IDLE_COLLECT_S = 0.5  # a pause after which the garbage of past checks is collected
COLLECT_EVERY = 8
LIVE_LINES = 20_000
CONFIG_NAMES = ("pyproject.toml", "isalint.toml")
ASM_LANGUAGES = ("asm", "gas", "assembly", "amdgpu", "amdgcn", "rdna", "s")
CODE_ACTION_KINDS = [lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.Source]


class Document:
    """What the server holds for one open document: its last published check and the check to come."""

    def __init__(self, uri: str, path: str):
        self.uri = uri
        self.path = path
        self.outcome = None  # engine.Outcome of the last published check
        self.positions: Positions | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.running = False
        self.again = False  # the text changed while a check ran
        self.live_note = False  # the "checked on save only" note was given


class IsalintServer(LanguageServer):
    def __init__(self):
        super().__init__("isalint", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.checker = Checker()
        self.check_pool = ThreadPoolExecutor(1, thread_name_prefix="isalint-check")
        self.fix_pool = ThreadPoolExecutor(1, thread_name_prefix="isalint-fix")
        self.documents: dict[str, Document] = {}
        self.debounce = DEBOUNCE_MS / 1000
        self.live_lines = LIVE_LINES
        self.rule_docs = RuleDocs()
        self.said: set[str] = set()  # configuration warnings already logged
        self.uncollected = 0  # checks since the last garbage collection
        self.idle: asyncio.TimerHandle | None = None

    # ------------------------------------------------------------------ messages to the client

    def log(self, message: str, kind=lsp.MessageType.Info) -> None:
        self.window_log_message(lsp.LogMessageParams(type=kind, message=f"isalint: {message}"))

    def say(self, message: str, kind=lsp.MessageType.Warning) -> None:
        self.window_show_message(lsp.ShowMessageParams(type=kind, message=f"isalint: {message}"))
        self.log(message, kind)

    @property
    def encoding(self) -> str:
        enc = self.workspace.position_encoding
        return str(getattr(enc, "value", enc) or "utf-16")

    # ------------------------------------------------------------------ checking

    def schedule(self, uri: str, delay: float) -> None:
        doc = self.documents.get(uri)
        if doc is None:
            return
        if self.idle is not None:
            self.idle.cancel()
            self.idle = None
        if doc.timer is not None:
            doc.timer.cancel()
        loop = asyncio.get_running_loop()
        doc.timer = loop.call_later(delay, self.start, uri) if delay > 0 else None
        if delay <= 0:
            self.start(uri)

    def start(self, uri: str) -> None:
        doc = self.documents.get(uri)
        if doc is None:
            return
        doc.timer = None
        if doc.running:
            doc.again = True
            return
        text_doc = self.workspace.get_text_document(uri)
        text, version = text_doc.source, text_doc.version
        doc.running, doc.again = True, False
        encoding = self.encoding
        future = asyncio.get_running_loop().run_in_executor(
            self.check_pool, _check, self.checker, self.rule_docs, text, doc.path, uri, version, encoding)
        future.add_done_callback(lambda f: self.finished(doc, f))

    def finished(self, doc: Document, future) -> None:
        uri = doc.uri
        if self.documents.get(uri) is not doc:
            return  # closed (and perhaps opened again) meanwhile
        doc.running = False
        try:
            outcome, positions, diagnostics = future.result()
        except Exception as exc:  # noqa: BLE001 - _check catches the engine's failures; this is the server's
            self.log(f"{doc.path}: check failed: {type(exc).__name__}: {exc}", lsp.MessageType.Error)
            return
        current = self.workspace.get_text_document(uri)
        if doc.again or current.version != outcome.version:
            if doc.timer is None:  # else the pause after the latest change is still running
                self.start(uri)  # the text changed meanwhile: this result is stale
            return
        doc.outcome, doc.positions = outcome, positions
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri, diagnostics, outcome.version))
        self.collect_later()
        for w in outcome.config_warnings:
            if w not in self.said:
                self.said.add(w)
                self.log(f"warning: {w}", lsp.MessageType.Warning)
        if outcome.skipped:
            self.log(f"{doc.path}: not checked: {outcome.skipped}")
        elif outcome.problem:
            self.log(f"{doc.path}:{outcome.problem[0]}: {outcome.problem[1]}", lsp.MessageType.Warning)
        else:
            logging.getLogger(__name__).debug("checked %s in %.0f ms", doc.path, outcome.seconds * 1000)

    def collect_later(self) -> None:
        """Collect the garbage of past checks once the server is idle (at once after many checks)."""
        self.uncollected += 1
        if self.idle is not None:
            self.idle.cancel()
        if self.uncollected >= COLLECT_EVERY:
            self.collect()
        else:
            self.idle = asyncio.get_running_loop().call_later(IDLE_COLLECT_S, self.collect)

    def collect(self) -> None:
        self.idle = None
        self.uncollected = 0
        self.check_pool.submit(gc.collect)  # in the check thread: never during a check

    def current_outcome(self, uri: str):
        """The last check of ``uri`` if it is of the document's current text, else None."""
        doc = self.documents.get(uri)
        if doc is None or doc.outcome is None:
            return None
        if self.workspace.get_text_document(uri).version != doc.outcome.version:
            return None
        return doc


def _check(checker: Checker, docs: RuleDocs, text: str, path: str, uri: str, version, encoding: str):
    """(outcome, positions, diagnostics) of one text: run in the check thread."""
    outcome = checker.check(text, path, version)
    positions = Positions(text, encoding)
    return outcome, positions, to_diagnostics(outcome, positions, uri, docs)


def _is_assembly(uri: str, language: str | None) -> bool:
    path = uri.split("?")[0].split("#")[0]
    return path.endswith(ASM_SUFFIXES) or (language or "").lower() in ASM_LANGUAGES


def _path_of(uri: str) -> str:
    path = to_fs_path(uri) if uri.startswith("file:") else None
    return path or uri.rsplit("/", 1)[-1]


def build() -> IsalintServer:
    server = IsalintServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: IsalintServer, params: lsp.InitializeParams):
        options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
        try:
            ls.debounce = max(0.0, float(options.get("debounceMs", DEBOUNCE_MS)) / 1000)
            ls.live_lines = int(options.get("liveLines", LIVE_LINES))
        except (TypeError, ValueError):
            pass
        if isinstance(options.get("ruleDocs"), str):
            ls.rule_docs = RuleDocs(options["ruleDocs"])

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: IsalintServer, params: lsp.DidOpenTextDocumentParams):
        item = params.text_document
        if not _is_assembly(item.uri, item.language_id):
            return
        ls.documents[item.uri] = Document(item.uri, _path_of(item.uri))
        ls.schedule(item.uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: IsalintServer, params: lsp.DidChangeTextDocumentParams):
        doc = ls.documents.get(params.text_document.uri)
        if doc is None:
            return
        lines = len(ls.workspace.get_text_document(doc.uri).lines)
        if lines > ls.live_lines:
            if not doc.live_note:
                doc.live_note = True
                ls.log(f"{doc.path}: {lines} lines: checked on open and save only (liveLines {ls.live_lines})")
            return
        ls.schedule(doc.uri, ls.debounce)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: IsalintServer, params: lsp.DidSaveTextDocumentParams):
        uri = params.text_document.uri
        if os.path.basename(_path_of(uri)) in CONFIG_NAMES:
            for other in list(ls.documents):
                ls.schedule(other, 0)  # the configuration may have changed: check everything again
        elif uri in ls.documents:
            ls.schedule(uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: IsalintServer, params: lsp.DidCloseTextDocumentParams):
        doc = ls.documents.pop(params.text_document.uri, None)
        if doc is None:
            return
        if doc.timer is not None:
            doc.timer.cancel()
        ls.checker.forget(doc.path)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(doc.uri, []))

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: IsalintServer, params: lsp.HoverParams):
        doc = ls.current_outcome(params.text_document.uri)
        if doc is None:
            return None
        line, column = doc.positions.from_client(params.position.line, params.position.character)
        text = hover_text(doc.outcome, line, column, ls.rule_docs)
        if text is None:
            return None
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text))

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                    lsp.CodeActionOptions(code_action_kinds=CODE_ACTION_KINDS, resolve_provider=True))
    def code_action(ls: IsalintServer, params: lsp.CodeActionParams):
        doc = ls.current_outcome(params.text_document.uri)
        if doc is None or not doc.outcome.checked:
            return None
        first = doc.positions.from_client(params.range.start.line, params.range.start.character)[0]
        last = doc.positions.from_client(params.range.end.line, params.range.end.character)[0]
        kinds = [str(getattr(k, "value", k)) for k in params.context.only] if params.context.only else None
        resolve, literals = _can_resolve(ls), _takes_literals(ls)
        out = []
        for offer in fixes.offers(doc.outcome, first, max(first, last), kinds):
            data = {"uri": doc.uri, "version": doc.outcome.version}
            if not literals:  # a client of the protocol's first versions: commands only
                data.update({"edits": offer.edits} if offer.edits is not None else {"fix": offer.fix})
                out.append(lsp.Command(title=offer.title, command=fixes.COMMAND, arguments=[data]))
                continue
            action = lsp.CodeAction(title=offer.title, kind=offer.kind, is_preferred=offer.preferred or None,
                                    diagnostics=_diagnostics_of(params.context.diagnostics, offer.code))
            if offer.edits is not None:
                action.edit = _workspace_edit(ls, doc, offer.edits)
            elif resolve:
                action.data = {**data, "fix": offer.fix}
            else:
                action.command = lsp.Command(title=offer.title, command=fixes.COMMAND,
                                             arguments=[{**data, "fix": offer.fix}])
            out.append(action)
        return out

    @server.feature(lsp.CODE_ACTION_RESOLVE)
    async def resolve_code_action(ls: IsalintServer, action: lsp.CodeAction):
        data = action.data if isinstance(action.data, dict) else None
        if data is None:
            return action
        edit = await _work_out(ls, data)
        if edit is not None:
            action.edit = edit
        return action

    @server.command(fixes.COMMAND)
    async def apply_fix(ls: IsalintServer, *args):
        data = args[0] if args and isinstance(args[0], dict) else None
        if data is None:
            ls.say(f"{fixes.COMMAND} takes the action's data")
            return None
        if isinstance(data.get("edits"), list):  # a suppression, for a client that takes commands only
            doc = ls.current_outcome(str(data.get("uri")))
            if doc is None or doc.outcome.version != data.get("version"):
                ls.say("the file changed since the action was offered: ask for it again")
                return None
            edit = _workspace_edit(ls, doc, [tuple(e) for e in data["edits"]])
        else:
            edit = await _work_out(ls, data)
        if edit is not None:
            result = await ls.workspace_apply_edit_async(lsp.ApplyWorkspaceEditParams(edit, label="isalint fix"))
            if not result.applied:
                why = f": {result.failure_reason}" if result.failure_reason else ""
                ls.say(f"the editor did not apply the fix{why}")
        return None

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: IsalintServer, *args):
        for doc in ls.documents.values():
            if doc.timer is not None:
                doc.timer.cancel()
        ls.check_pool.shutdown(wait=False, cancel_futures=True)
        ls.fix_pool.shutdown(wait=False, cancel_futures=True)

    return server


def _can_resolve(ls: IsalintServer) -> bool:
    caps = ls.client_capabilities.text_document
    action = caps.code_action if caps is not None else None
    support = action.resolve_support if action is not None else None
    return bool(support and "edit" in (support.properties or []))


def _takes_literals(ls: IsalintServer) -> bool:
    caps = ls.client_capabilities.text_document
    action = caps.code_action if caps is not None else None
    return bool(action is not None and action.code_action_literal_support is not None)


def _diagnostics_of(diagnostics, code: str | None):
    if not code:
        return None
    found = [d for d in diagnostics or [] if d.code == code and d.source == "isalint"]
    return found or None


def _workspace_edit(ls: IsalintServer, doc: Document, edits: list[tuple]) -> lsp.WorkspaceEdit:
    pos = doc.positions
    text_edits = []
    for line, col, end_line, end_col, new in edits:
        start = pos.to_client(line, col) if line <= len(pos.lines) else pos.end()
        end = pos.to_client(end_line, end_col) if end_line <= len(pos.lines) else pos.end()
        text_edits.append(lsp.TextEdit(lsp.Range(lsp.Position(*start), lsp.Position(*end)), new))
    caps = ls.client_capabilities.workspace
    if caps is not None and caps.workspace_edit is not None and caps.workspace_edit.document_changes:
        return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(
            lsp.OptionalVersionedTextDocumentIdentifier(doc.uri, doc.outcome.version), text_edits)])
    return lsp.WorkspaceEdit(changes={doc.uri: text_edits})


async def _work_out(ls: IsalintServer, data: dict):
    """The validated edit of a fix action's ``data``, or None (the user is told why)."""
    uri = data.get("uri")
    doc = ls.current_outcome(uri) if isinstance(uri, str) else None
    if doc is None or doc.outcome.version != data.get("version"):
        ls.say("the file changed since the action was offered: ask for it again")
        return None
    fix = data.get("fix") if isinstance(data.get("fix"), dict) else {}
    flag = fixes.pass_flag(str(fix.get("pass")))
    token = None
    if _progress(ls):
        token = f"isalint-fix-{id(data)}"
        try:
            await ls.work_done_progress.create_async(token)
            ls.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(title=f"isalint fix {flag}",
                                                                         message="rewriting and validating"))
        except Exception:  # noqa: BLE001 - progress is a courtesy; the fix goes on without it
            token = None
    try:
        edits, summary = await asyncio.get_running_loop().run_in_executor(
            ls.fix_pool, fixes.work_out, doc.outcome.text, doc.path, fix)
    except fixes.FixFailed as exc:
        ls.say(str(exc))
        return None
    except Exception as exc:  # noqa: BLE001 - a bug in a pass: said, the server goes on
        from ..failure import describe

        ls.say(f"fix {flag}: {describe(exc, doc.path)}", lsp.MessageType.Error)
        return None
    finally:
        if token is not None:
            ls.work_done_progress.end(token, lsp.WorkDoneProgressEnd())
    ls.log(summary)
    return _workspace_edit(ls, doc, edits)


def _progress(ls: IsalintServer) -> bool:
    window = ls.client_capabilities.window
    return bool(window is not None and window.work_done_progress)


def main() -> None:
    """Serve over stdin/stdout until the client exits."""
    logging.basicConfig(level=os.environ.get("ISALINT_SERVER_LOG", "WARNING"), format="isalint server: %(message)s")
    server = build()
    gc.collect()
    gc.freeze()  # what is loaded by now (the protocol's types, isalint's modules) lives as long as the server
    gc.disable()
    server.start_io()
