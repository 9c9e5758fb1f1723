"""The reference grammar of an instruction statement, in pyparsing.

    line      := statement ( "::" statement )?
    statement := MNEMONIC [ word ( sep word )* ]
    sep       := "," | blanks
    word      := a run of characters without blanks or commas outside brackets,
                 where ``key: value`` counts as one word

Words after the first comma-separated field that are not call-like
(``vmcnt(0)``) are modifiers (``offset:64``, ``glc``, ``quad_perm:[...]``).

:mod:`isalint.parse.scanner` implements the same language by hand for speed;
``tests/test_parse_equivalence.py`` holds the two to agreement.
"""
from __future__ import annotations

from functools import lru_cache

from .nodes import Statement
from .operands import SPACED_FIRST_OPERAND, OperandError, classify_modifier, classify_operand, is_call_word


@lru_cache(maxsize=1)
def _grammar():
    import pyparsing as pp

    pp.ParserElement.set_default_whitespace_chars(" \t")
    nested = pp.Forward()
    inner = pp.Regex(r"[^\[\](){}]+")
    bracket = pp.Literal("[") + pp.ZeroOrMore(nested | inner) + pp.Literal("]")
    paren = pp.Literal("(") + pp.ZeroOrMore(nested | inner) + pp.Literal(")")
    brace = pp.Literal("{") + pp.ZeroOrMore(nested | inner) + pp.Literal("}")
    nested <<= bracket | paren | brace
    plain = pp.Regex(r"[^\s,\[\](){}:]+|:(?!:)")
    atom = pp.Combine(pp.OneOrMore(plain | nested), adjacent=True)
    # ``offset: 64``: a key, its colon, blanks, and the value are one word.
    spaced_key = pp.Combine(pp.Regex(r"[A-Za-z_]\w*:") + pp.White(" \t") + atom, adjacent=True)
    word = pp.Located(spaced_key | atom)("word")
    comma = pp.Literal(",")("comma")
    mnemonic = pp.Located(pp.Regex(r"[A-Za-z_][\w.]*"))("mnemonic")
    statement = pp.Group(mnemonic + pp.Group(pp.Optional(word + pp.ZeroOrMore(pp.Optional(comma) + word)))("body"))
    line = statement + pp.Optional(pp.Suppress("::") + statement) + pp.StringEnd()
    line.parse_with_tabs()  # columns are character positions, not tab stops
    return line


def parse_statements(code: str, start: int = 0) -> list[Statement]:
    """Parse ``code[start:]`` (no comment) into one or two Statements."""
    import pyparsing as pp

    try:
        result = _grammar().parse_string(code[start:], parse_all=True)
    except pp.ParseException as exc:
        raise OperandError(f"syntax error: {exc.msg}", exc.loc) from None
    statements = []
    for group in result:
        m_start, m_end = group[0][0], group[0][2]
        m_text = group[0][1][0]
        while code[start + m_start] in " \t":
            m_start += 1
        stmt = Statement(m_text.lower(), start + m_start + 1)
        after_comma = True
        seen_modifier = False
        last_end = start + m_end
        for item in group[1]:
            if item == ",":
                after_comma = True
                continue
            w_start, text, w_end = item[0], item[1][0], item[2]
            while code[start + w_start] in " \t":  # Located reports the position before blanks
                w_start += 1
            col = start + w_start + 1
            last_end = start + w_end
            if text in ("|", "&"):
                after_comma = False
                continue
            spaced = stmt.mnemonic in SPACED_FIRST_OPERAND and len(stmt.operands) == 1
            if not after_comma and stmt.operands and not is_call_word(text) and not spaced:
                stmt.modifiers.append(classify_modifier(text, col))
                seen_modifier = True
            elif seen_modifier and after_comma:
                raise OperandError(f"operand '{text}' after modifiers", col - 1 - start)
            else:
                try:
                    stmt.operands.append(classify_operand(text, col))
                except OperandError as exc:
                    if not stmt.operands and (not after_comma or (":" in text and not stmt.modifiers)) and \
                            text.split(":", 1)[0].isidentifier():
                        stmt.modifiers.append(classify_modifier(text, col))
                        seen_modifier = True
                    elif stmt.operands and ":" in text and text.split(":", 1)[0].isidentifier():
                        stmt.modifiers.append(classify_modifier(text, col))
                        seen_modifier = True
                    else:
                        raise OperandError(str(exc), col - 1 - start) from None
            after_comma = False
        stmt.end_col = last_end + 1
        statements.append(stmt)
    return statements
