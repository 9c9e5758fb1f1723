"""The fast instruction scanner: a hand-written splitter that produces the same
nodes as the pyparsing grammar in :mod:`isalint.parse.grammar` (a property test
holds the two to agreement) in a fraction of the time.
"""
from __future__ import annotations

import re

from .nodes import Statement
from .operands import SPACED_FIRST_OPERAND, OperandError, classify_modifier, classify_operand, is_call_word

_OPEN = {"[": "]", "(": ")", "{": "}"}  # braces: the structured hwreg operand {id: 1, size: 4}
_CLOSE = {"]", ")", "}"}
_MNEMONIC = re.compile(r"[ \t]*([A-Za-z_][\w.]*)")
# One operand or modifier word whose brackets are single-level and balanced: the words of
# nearly every real line. Anything else (nested or stray brackets, ``key: value``, stray
# commas) leaves the fast path and goes through the character loop below.
_WORD = r"(?:[^ \t,\[\](){}]+|\[[^\[\](){}]*\]|\([^\[\](){}]*\))+"
_TOKENS = re.compile(rf"([ \t]*,?[ \t]*)({_WORD})")
_BRACKETS = re.compile(r"[\[\](){}]")
# Operand and modifier nodes are never changed once made, and the same text at the same column
# comes back line after line (half the operands of a real kernel): one node serves them all.
_NODES: dict[tuple[str, int], object] = {}
_NODES_MAX = 1 << 14


def split_vopd(code: str, start: int = 0) -> list[tuple[int, int]]:
    """Spans of the statements of ``code`` (two for a VOPD ``x :: y`` line)."""
    i = code.find("::", start)
    n = len(code)
    while i >= 0:
        depth = 0  # bracket depth at i: every bracket counts, as in the word splitter
        for b in _BRACKETS.findall(code, start, i):
            depth += 1 if b in _OPEN else -1
        if depth == 0:
            return [(start, i), (i + 2, n)]
        # a "::" inside brackets: look further, skipping only its first colon (":::" holds two)
        i = code.find("::", i + 1)
    return [(start, n)]


def scan_statement(code: str, start: int, end: int) -> Statement:
    """Parse ``code[start:end]`` (one instruction, no comment) into a Statement.

    Columns are 1-based positions in ``code``. Raises OperandError on bad syntax.
    """
    try:
        stmt = _scan_plain(code, start, end)
    except OperandError:
        stmt = None
    if stmt is not None:
        return stmt
    return _scan(code, start, end)  # what the plain path leaves: the same statement or the same error


def _scan_plain(code: str, start: int, end: int) -> Statement | None:
    """:func:`_scan` of the usual line in one pass: every word found by the word pattern, no
    ``key: value``, nothing stray; None otherwise (and :func:`_scan` decides)."""
    m = _MNEMONIC.match(code, start, end)
    if m is None:
        return None
    i, j = m.span(1)
    if j < end and code[j] not in " \t":
        return None
    operands: list = []
    modifiers: list = []
    seen_modifier = False
    nodes = _NODES
    pos = j
    first = True
    spaced = code[i:j].lower() in SPACED_FIRST_OPERAND
    for sep, text in _TOKENS.findall(code, j, end):
        word_start = pos + len(sep)
        pos = word_start + len(text)
        if "," in sep:
            if first:
                return None  # a leading comma
            after_comma = True
        else:
            after_comma = first
        first = False
        if text[-1] == ":" and pos < end and code[pos] in " \t":
            return None  # ``key: value``
        if text == "|" or text == "&":
            continue
        if not after_comma and operands and not (spaced and len(operands) == 1):
            node = nodes.get((text, -1 - word_start))  # a modifier (not a call word) at this column
            if node is None and not is_call_word(text):
                node = _remember(nodes, (text, -1 - word_start), classify_modifier(text, word_start + 1))
            if node is not None:
                modifiers.append(node)
                seen_modifier = True
                continue
        if seen_modifier and after_comma:
            return None
        node = nodes.get((text, word_start))
        if node is None:
            node = _remember(nodes, (text, word_start), classify_operand(text, word_start + 1))
        operands.append(node)
    if code[pos:end].strip(" \t"):
        return None  # something the word pattern skipped (a stray bracket or comma)
    stmt = Statement(m.group(1).lower(), i + 1, operands, modifiers)
    stmt.end_col = len(code[start:end].rstrip(" \t")) + start + 1
    return stmt


def _scan(code: str, start: int, end: int) -> Statement:
    m = _MNEMONIC.match(code, start, end)
    if m is None:
        i = start
        while i < end and code[i] in " \t":
            i += 1
        raise OperandError("expected an instruction mnemonic", i - start)
    i, j = m.span(1)
    if j < end and code[j] not in " \t":
        raise OperandError("expected an instruction mnemonic", i - start)
    operands: list = []
    modifiers: list = []
    stmt = Statement(m.group(1).lower(), i + 1, operands, modifiers)
    seen_modifier = False
    nodes = _NODES
    spaced = stmt.mnemonic in SPACED_FIRST_OPERAND
    for word_start, text, after_comma in _split_words(code, j, end):
        if text == "|" or text == "&":
            continue
        if not after_comma and operands and not (spaced and len(operands) == 1):
            node = nodes.get((text, -1 - word_start))  # a modifier (not a call word) at this column
            if node is None and not is_call_word(text):
                node = _remember(nodes, (text, -1 - word_start), classify_modifier(text, word_start + 1))
            if node is not None:
                modifiers.append(node)
                seen_modifier = True
                continue
        if seen_modifier and after_comma:
            raise OperandError(f"operand '{text}' after modifiers", word_start - start)
        node = nodes.get((text, word_start))
        if node is not None:
            operands.append(node)
            continue
        try:
            node = _remember(nodes, (text, word_start), classify_operand(text, word_start + 1))
            operands.append(node)
        except OperandError as exc:
            if not after_comma and operands:
                raise
            if not operands and (not after_comma or (":" in text and not modifiers)) and _looks_like_modifier(text):
                modifiers.append(classify_modifier(text, word_start + 1))
                seen_modifier = True
                continue
            if operands and ":" in text and _looks_like_modifier(text):
                # ``s3, format:[BUF_FMT_8_UNORM]``, ``s3, offset:4095``: LLVM also takes a ``key:value``
                # modifier after a comma
                modifiers.append(classify_modifier(text, word_start + 1))
                seen_modifier = True
                continue
            raise OperandError(str(exc), word_start - start) from None
    stmt.end_col = len(code[start:end].rstrip(" \t")) + start + 1
    return stmt


def _remember(nodes: dict, key: tuple, node):
    """Keep ``node`` for ``key`` (the word and its column), the table emptied when it is full."""
    if len(nodes) >= _NODES_MAX:
        nodes.clear()
    nodes[key] = node
    return node


def _looks_like_modifier(text: str) -> bool:
    head = text.split(":", 1)[0]
    return head.isidentifier()


def _split_words(code: str, i: int, end: int) -> list[tuple[int, str, bool]]:
    """Words of an operand field: (start, text, follows_a_comma_or_is_first).

    Words are separated by commas or blanks at bracket depth 0; ``key: value`` is
    one word (the hand-edited ``offset: 64`` form).
    """
    words: list[tuple[int, str, bool]] = []
    pos = i
    for sep, word in _TOKENS.findall(code, i, end):
        start = pos + len(sep)
        pos = start + len(word)
        if "," in sep:
            if not words:
                break  # a leading comma
            words.append((start, word, True))
        else:
            words.append((start, word, not words))
        if word[-1] == ":" and pos < end and code[pos] in " \t":
            break  # ``key: value``
    else:
        # findall skips what no token matches (a stray bracket or comma): then the text
        # after the last counted word is not blank
        if not code[pos:end].strip(" \t"):
            return words
    return [(a, code[a:b], c) for a, b, c in _split_words_careful(code, i, end)]


def _split_words_careful(code: str, i: int, end: int) -> list[tuple[int, int, bool]]:
    words: list[tuple[int, int, bool]] = []
    after_comma = True
    n = end
    while i < n:
        c = code[i]
        if c in " \t":
            i += 1
            continue
        if c == ",":
            if after_comma and words:
                raise OperandError("empty operand", i)
            after_comma = True
            i += 1
            continue
        depth = 0
        j = i
        while j < n:
            c = code[j]
            if c in _OPEN:
                depth += 1
            elif c in _CLOSE:
                depth -= 1
            elif depth == 0 and (c == "," or c in " \t"):
                if c in " \t" and code[j - 1] == ":":
                    # ``offset: 64``: the value belongs to the key
                    while j < n and code[j] in " \t":
                        j += 1
                    continue
                break
            j += 1
        if depth != 0:
            raise OperandError("unbalanced brackets", i)
        words.append((i, j, after_comma))
        after_comma = False
        i = j
    if after_comma and words:
        raise OperandError("missing operand after ','", end)
    return words
