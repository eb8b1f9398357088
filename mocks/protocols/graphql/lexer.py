"""A faster lexer for schema SDL: graphql-core's own :class:`~graphql.language.Lexer` with
the common tokens read by regular expressions.

graphql-core reads every character of a document through Python code; for a published
schema of a megabyte (GitHub's ``schema.graphql``: 1.2 MB, 61,000 tokens, 12,700
block-string descriptions) that is the largest part of the time the schema takes to load.
:class:`SdlLexer` reads the ignored characters between tokens (spaces, tabs, commas, line
feeds), names, one-character
punctuators and block strings without escapes or carriage returns with one compiled pattern
each, and hands everything else (strings, numbers, comments, ``...``, ``\\r``, escaped
``\\\"\"\"``, any character that is not valid) to graphql-core's own code at that position;
``lookahead`` skips graphql-core's comment bookkeeping when the next token is no comment.
Tokens, their values, lines and columns are exactly graphql-core's
(``tests/unit/test_graphql_schema_loading.py`` compares the token streams).

Source: the GraphQL spec §2.1 (lexical tokens, ignored tokens, block strings);
behavior notes §10 (``schema`` (SDL) or ``schemaFile``). Django-free; pure, any thread.
"""
from __future__ import annotations

import re

from graphql import DocumentNode, GraphQLError, Source
from graphql.language import Lexer, Token, TokenKind
from graphql.language.block_string import dedent_block_string_lines
from graphql.language.parser import Parser

#: Spaces, tabs, commas, byte order marks and line feeds between tokens.
_ignored = re.compile("[ \t,\ufeff\n]*").match
_name = re.compile(r"[_A-Za-z][_0-9A-Za-z]*").match
#: A block string without ``\"""`` escapes, carriage returns or lone surrogates (graphql-core
#: reads the others).
_block_string = re.compile(r'"""((?:[^"\\\r\ud800-\udfff]|\\(?!""")|"(?!""))*)"""').match
_PUNCTUATORS = {char: TokenKind(char) for char in "!$&()[]{}:=@|"}
_NAME_KIND = TokenKind.NAME
_BLOCK_KIND = TokenKind.BLOCK_STRING
_EOF_KIND = TokenKind.EOF
_COMMENT_KIND = TokenKind.COMMENT


class SdlLexer(Lexer):
    """graphql-core's lexer with the common tokens read by regular expressions (see the
    module docstring); pass it to graphql-core's ``Parser`` as ``lexer``."""

    def lookahead(self) -> Token:
        """The next token that is not a comment, as graphql-core's ``lookahead`` gives it,
        without its comment bookkeeping when the next token is not a comment."""
        token = self.token
        if token.kind is not _EOF_KIND:
            following = token.next
            if following is None:
                following = token.next = self.read_next_token(token.end)
                following.prev = token
            if following.kind is not _COMMENT_KIND:
                return following
        return super().lookahead()

    def read_next_token(self, start: int) -> Token:
        """The token at or after ``start``, as :meth:`graphql.language.Lexer.
        read_next_token` reads it (line and column included)."""
        body = self.source.body
        position = _ignored(body, start).end()  # type: ignore[union-attr]
        if position != start:
            newlines = body.count("\n", start, position)
            if newlines:
                self.line += newlines
                self.line_start = body.rindex("\n", start, position) + 1
        char = body[position:position + 1]
        kind = _PUNCTUATORS.get(char)
        if kind is not None:
            return Token(kind, position, position + 1, self.line, 1 + position - self.line_start)
        name = _name(body, position)
        if name is not None:
            return Token(_NAME_KIND, position, name.end(), self.line,
                         1 + position - self.line_start, name.group())
        if char == '"' and body.startswith('"""', position):
            block = _block_string(body, position)
            if block is not None:
                lines = block.group(1).split("\n")
                token = Token(_BLOCK_KIND, position, block.end(), self.line,
                              1 + position - self.line_start,
                              "\n".join(dedent_block_string_lines(lines)))
                if len(lines) > 1:
                    self.line += len(lines) - 1
                    self.line_start = block.end(1) - len(lines[-1])
                return token
        return super().read_next_token(position)


def parse_sdl(text: str, no_location: bool = False) -> DocumentNode:
    """The document of SDL ``text``, parsed with :class:`SdlLexer`.

    ``no_location``: build no source locations (faster and far smaller for a big schema;
    errors found later then carry no line, see :mod:`mocks.protocols.graphql.schema`).

    Raises :class:`GraphQLError` for a syntax error (its ``locations`` give the line), or
    for a document nested too deeply to parse.
    """
    source = Source(text, "GraphQL schema")
    try:
        return Parser(source, no_location=no_location,
                      lexer=SdlLexer(source)).parse_document()
    except RecursionError:
        pass  # raised outside the handler, so the deep stack is not kept as its context
    raise GraphQLError("Syntax Error: the document is nested too deeply to be parsed.")
