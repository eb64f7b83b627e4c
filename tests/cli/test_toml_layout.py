"""The position-keeping TOML scanner of ``symshape check`` (``cli/project.py``: ``layout``)
reads every string as ``tomllib`` does, so that the entry it locates for an error line or a
``--fix`` edit is the entry whose value the check used."""
import tomllib

from hypothesis import assume, given, strategies as st

from symshape.cli.project import layout

# pieces that matter to a TOML string: escapes, line-ending backslashes (with white space
# before and after the newline), quotes next to the delimiter, CRLF, a leading newline
PIECES = ["a", "b", " ", "\t", "\n", "\r\n", "\\", "\\\\", '\\"', '"', "'", "\\n", "\\t",
          "\\u00e9", "\\U0001F600", "\\  \n", "\\\n   ", "\\ \t\r\n\n  ", "é", "#", "=", "]"]


@st.composite
def toml_strings(draw):
    quote = draw(st.sampled_from(['"""', "'''", '"', "'"]))
    body = "".join(draw(st.lists(st.sampled_from(PIECES), max_size=12)))
    if draw(st.booleans()):
        body = draw(st.sampled_from(["\n", "\r\n"])) + body
    return quote + body + quote


@given(toml_strings(), st.sampled_from(["\n", "\r\n"]))
def test_strings_read_as_tomllib_reads_them(literal, eol):
    doc = "[tool.symshape.dims]" + eol + "k = " + literal + eol + "after = 1" + eol
    try:
        want = tomllib.loads(doc)["tool"]["symshape"]["dims"]
    except tomllib.TOMLDecodeError:
        assume(False)
    table = layout(doc).find("tool.symshape.dims")
    assert table is not None and table.keys["k"][2].value == want["k"]
    # the scanner ends the string where tomllib does: the next key is found on its line
    line, _, node = table.keys["after"]
    assert node.value == 1 and line == doc.count("\n", 0, doc.index("after = 1")) + 1


def test_a_line_ending_backslash_joins_the_lines():
    doc = 'k = """one \\\n    two"""\n'
    assert layout(doc).tables[0].keys["k"][2].value == tomllib.loads(doc)["k"] == "one two"
