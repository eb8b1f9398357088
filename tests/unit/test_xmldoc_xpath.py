"""XPath over parsed XML: the name-chain fast path (``/A/B``, ``//A/B``) of
:func:`mocks.core.xmldoc.compile_xpath` gives what lxml's XPath engine gives for the
rewritten, namespace-agnostic expression, on generated documents."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from mocks.core.xmldoc import _NAME_CHAIN, compile_xpath, local_xpath, parse_xml, xpath_text

NAMES = ("A", "B", "C", "id")
NAMESPACES = (None, "urn:x", "urn:y")


@st.composite
def elements(draw: st.DrawFn, depth: int = 0) -> str:
    """One element: a name from a small set (so paths hit often), maybe a namespace, text or
    children."""
    name = draw(st.sampled_from(NAMES))
    namespace = draw(st.sampled_from(NAMESPACES))
    prefix = draw(st.sampled_from(("", "p:"))) if namespace else ""
    declaration = (f' xmlns{":p" if prefix else ""}="{namespace}"' if namespace else "")
    if depth >= 3 or draw(st.booleans()):
        content = draw(st.sampled_from(("", "42", " Ada ", "a&amp;b")))
    else:
        content = "".join(draw(st.lists(elements(depth + 1), max_size=3)))
        content += draw(st.sampled_from(("", " tail ")))
    return f"<{prefix}{name}{declaration}>{content}</{prefix}{name}>"


chains = st.builds(lambda slashes, names: slashes + "/".join(names),
                   st.sampled_from(("/", "//")),
                   st.lists(st.sampled_from(NAMES + ("x:A", "y:id")), min_size=1, max_size=4))


@settings(max_examples=400, deadline=None)
@given(document=elements(), expression=chains)
def test_name_chains_match_the_xpath_engine(document: str, expression: str) -> None:
    assert _NAME_CHAIN.fullmatch(expression)
    root = parse_xml(document)
    expected = xpath_text(etree.XPath(local_xpath(expression), smart_strings=False)(root))
    assert compile_xpath(expression)(root) == expected
    # From an element inside the document, "/" and "//" still start at the document.
    inner = next(iter(root), None)
    if inner is not None:
        assert compile_xpath(expression)(inner) == expected


def test_other_expressions_keep_the_xpath_engine() -> None:
    root = parse_xml('<E xmlns="urn:e"><B><U><id>7</id><n>x</n></U></B></E>')
    for expression, expected in (("//U[id='7']/n", "x"), ("count(//id)", "1"),
                                 ("//U/*", "7"), ("//id/text()", "7"), ("B/U/id", "7")):
        assert _NAME_CHAIN.fullmatch(expression) is None
        assert compile_xpath(expression)(root) == expected
    assert compile_xpath("//U/id")(None) == ""
